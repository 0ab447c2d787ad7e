/** The dialog that creates a flag in a project, its name checked as it is typed (validateFeature). */
import { useEffect, useState } from 'preact/hooks'
import { call, enc, get } from './api'
import { Button } from './components/button'
import { Modal } from './components/dialog'
import { Field, Picker, TextField } from './components/field'
import { ErrorLine, useLoad } from './ui'

export function CreateFlag({
  project,
  open,
  onClose,
  onCreated,
}: {
  project: string
  open: boolean
  onClose: () => void
  onCreated: (name: string) => void
}) {
  const [name, setName] = useState('')
  const [type, setType] = useState('release')
  const [description, setDescription] = useState('')
  const [nameProblem, setNameProblem] = useState<unknown>(null)
  const [error, setError] = useState<unknown>(null)
  const types = useLoad(() => get<{ types: { id: string; name: string }[] }>('/api/admin/feature-types'), [])
  useEffect(() => {
    if (name === '') return setNameProblem(null)
    // The validate operation answers as the name is typed; a stale answer is dropped.
    let live = true
    const timer = setTimeout(() => {
      call('POST', '/api/admin/features/validate', { name, projectId: project }).then(
        () => live && setNameProblem(null),
        failure => live && setNameProblem(failure),
      )
    }, 120)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [name])
  const submit = async (event: Event) => {
    event.preventDefault()
    try {
      await call('POST', `/api/admin/projects/${enc(project)}/features`, { name, type, description })
      onCreated(name)
    } catch (failure) {
      setError(failure)
    }
  }
  return (
    <Modal open={open} title={`New flag in ${project}`} onClose={onClose}>
      <form onSubmit={submit} class="stack" aria-label="Create a flag">
        <Field label="Flag name">
          <input
            class="input"
            value={name}
            required
            aria-invalid={nameProblem ? 'true' : 'false'}
            aria-describedby="name-problem"
            onInput={e => setName(e.currentTarget.value)}
          />
        </Field>
        <ErrorLine error={nameProblem} id="name-problem" />
        <Picker
          label="Type"
          value={type}
          options={(types.data?.types ?? [{ id: 'release', name: 'Release' }]).map(entry => ({
            value: entry.id,
            label: entry.name,
          }))}
          onChange={setType}
        />
        <TextField label="Description" value={description} onValue={setDescription} />
        <div class="modal-actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={!!nameProblem || name === ''}>
            Create flag
          </Button>
        </div>
        <ErrorLine error={error} />
      </form>
    </Modal>
  )
}

/**
 * Projects: the list (a card per project, a form to create one), a project's settings (name,
 * description, the flag naming pattern, its environments, and deleting it by typing its id), and
 * the environments page (every environment, the projects using it, a form to create one).
 */
import { useState } from 'preact/hooks'
import { FolderKanban, Layers, Plus, Settings, Trash2 } from 'lucide'
import { call, enc, get, type Project } from './api'
import { Button } from './components/button'
import { confirmFirst } from './components/dialog'
import { EmptyState } from './components/empty-state'
import { Picker, TextField } from './components/field'
import { Icon } from './components/icon'
import { toast } from './components/toast'
import { ErrorLine, go, useLoad, when, TableWrap } from './ui'

export function ProjectsPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<{ projects: Project[] }>('/api/admin/projects'), [])
  const [id, setId] = useState('')
  const [createError, setCreateError] = useState<unknown>(null)
  const create = async (event: Event) => {
    event.preventDefault()
    try {
      await call('POST', '/api/admin/projects', { id, name: id })
      toast.success(`Project ${id} created.`)
      setId('')
      setCreateError(null)
      reload()
    } catch (failure) {
      setCreateError(failure)
    }
  }
  return (
    <main>
      <div class="page-head">
        <h1>Projects</h1>
      </div>
      <ErrorLine error={error} />
      {data && data.projects.length === 0 && (
        <EmptyState icon={FolderKanban} title="No projects yet">
          {canWrite ? 'Create a project below: flags live in projects.' : 'An editor or admin can create one.'}
        </EmptyState>
      )}
      <ul class="cards">
        {data?.projects.map(project => (
          <li key={project.id}>
            <a href={`#/projects/${enc(project.id)}`}>{project.name}</a>
            <p class="muted">
              {project.id} · {project.featureCount} flags · {project.environments.length} environments
            </p>
            {project.description && <p>{project.description}</p>}
            <a class="muted" href={`#/projects/${enc(project.id)}/settings`} aria-label={`Settings of ${project.name}`}>
              <Icon icon={Settings} size={14} /> Settings
            </a>
          </li>
        ))}
      </ul>
      {canWrite && (
        <form onSubmit={create} class="inline card" aria-label="Create a project">
          <TextField label="New project id" value={id} required onValue={setId} />
          <Button type="submit" variant="primary" icon={Plus}>
            Create project
          </Button>
          <ErrorLine error={createError} />
        </form>
      )}
    </main>
  )
}

interface Environment {
  name: string
  type: string
  sortOrder: number
  createdAt: string
  projectCount: number
}

interface FullProject extends Project {
  createdAt: string
  updatedAt: string | null
  featureNaming: { pattern: string; example?: string; description?: string } | null
}

export function ProjectSettings({ project, canWrite }: { project: string; canWrite: boolean }) {
  const loaded = useLoad(
    () =>
      Promise.all([
        get<FullProject>(`/api/admin/projects/${enc(project)}`),
        get<{ environments: Environment[] }>('/api/admin/environments'),
      ]),
    [project],
  )
  const [data, environments] = loaded.data ?? [undefined, undefined]
  return (
    <main>
      <div class="page-head">
        <h1>Settings of {project}</h1>
        <a href={`#/projects/${enc(project)}`}>Back to the flags</a>
      </div>
      <ErrorLine error={loaded.error} />
      {data && (
        <ProjectForm key={data.updatedAt ?? data.id} project={data} canWrite={canWrite} onSaved={loaded.reload} />
      )}
      {data && environments && (
        <ProjectEnvironments
          project={data}
          all={environments.environments}
          canWrite={canWrite}
          onChanged={loaded.reload}
        />
      )}
      {data && canWrite && (
        <section class="card" aria-label="Delete the project">
          <h2>Delete the project</h2>
          <p class="muted">Only a project without live flags can be deleted: archive them first.</p>
          <Button
            variant="danger"
            icon={Trash2}
            onClick={async () => {
              const yes = await confirmFirst({
                title: `Delete project ${project}?`,
                message: 'The project and its settings are gone for good; its archived flags go with it.',
                confirmLabel: 'Delete project',
                typeToConfirm: project,
              })
              if (!yes) return
              try {
                await call('DELETE', `/api/admin/projects/${enc(project)}`)
                toast.success(`Project ${project} deleted.`)
                go('/')
              } catch (failure) {
                toast.error(failure)
              }
            }}
          >
            Delete project
          </Button>
        </section>
      )}
    </main>
  )
}

function ProjectForm({ project, canWrite, onSaved }: { project: FullProject; canWrite: boolean; onSaved: () => void }) {
  const [name, setName] = useState(project.name)
  const [description, setDescription] = useState(project.description ?? '')
  const [pattern, setPattern] = useState(project.featureNaming?.pattern ?? '')
  const [example, setExample] = useState(project.featureNaming?.example ?? '')
  const [error, setError] = useState<unknown>(null)
  const save = async (event: Event) => {
    event.preventDefault()
    try {
      await call('PUT', `/api/admin/projects/${enc(project.id)}`, {
        name,
        description: description || null,
        featureNaming: pattern ? { pattern, ...(example ? { example } : {}) } : null,
      })
      setError(null)
      toast.success('Project settings saved.')
      onSaved()
    } catch (failure) {
      setError(failure)
    }
  }
  return (
    <form class="card" aria-label="Project settings" onSubmit={save}>
      <h2>General</h2>
      <TextField label="Project name" value={name} required disabled={!canWrite} onValue={setName} />
      <TextField label="Project description" value={description} disabled={!canWrite} onValue={setDescription} />
      <TextField
        label="Flag naming pattern"
        hint="A regular expression every new flag name must match; empty for none."
        value={pattern}
        disabled={!canWrite}
        onValue={setPattern}
      />
      <TextField label="Naming example" value={example} disabled={!canWrite || !pattern} onValue={setExample} />
      <p class="muted">Created {when(project.createdAt)}</p>
      {canWrite && (
        <Button type="submit" variant="primary">
          Save settings
        </Button>
      )}
      <ErrorLine error={error} />
    </form>
  )
}

function ProjectEnvironments({
  project,
  all,
  canWrite,
  onChanged,
}: {
  project: FullProject
  all: Environment[]
  canWrite: boolean
  onChanged: () => void
}) {
  const unused = all.filter(environment => !project.environments.includes(environment.name))
  const [adding, setAdding] = useState('')
  const connect = async () => {
    try {
      await call('POST', `/api/admin/projects/${enc(project.id)}/environments`, { environment: adding })
      toast.success(`${adding} added to ${project.id}.`)
      setAdding('')
      onChanged()
    } catch (failure) {
      toast.error(failure)
    }
  }
  const disconnect = async (name: string) => {
    const yes = await confirmFirst({
      title: `Remove ${name} from ${project.id}?`,
      message: `The project's flags lose their strategies and variants in ${name}.`,
      confirmLabel: 'Remove environment',
    })
    if (!yes) return
    try {
      await call('DELETE', `/api/admin/projects/${enc(project.id)}/environments/${enc(name)}`)
      toast.success(`${name} removed from ${project.id}.`)
      onChanged()
    } catch (failure) {
      toast.error(failure)
    }
  }
  return (
    <section class="card" aria-label="Environments of the project">
      <h2>Environments</h2>
      <ul>
        {project.environments.map(name => (
          <li key={name}>
            {name}{' '}
            {canWrite && (
              <Button size="sm" variant="ghost" onClick={() => disconnect(name)}>
                Remove {name}
              </Button>
            )}
          </li>
        ))}
      </ul>
      {canWrite && unused.length > 0 && (
        <div class="toolbar">
          <Picker
            label="Environment to add"
            value={adding}
            placeholder="Choose an environment"
            options={unused.map(environment => ({
              value: environment.name,
              label: `${environment.name} (${environment.type})`,
            }))}
            onChange={setAdding}
          />
          <Button disabled={!adding} onClick={connect}>
            Add environment
          </Button>
        </div>
      )}
    </section>
  )
}

const ENVIRONMENT_TYPES = ['development', 'test', 'preproduction', 'production']

export function EnvironmentsPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<{ environments: Environment[] }>('/api/admin/environments'), [])
  const [name, setName] = useState('')
  const [type, setType] = useState('development')
  const [createError, setCreateError] = useState<unknown>(null)
  const create = async (event: Event) => {
    event.preventDefault()
    try {
      await call('POST', '/api/admin/environments', { name, type })
      toast.success(`Environment ${name} created: add it to projects from their settings.`)
      setName('')
      setCreateError(null)
      reload()
    } catch (failure) {
      setCreateError(failure)
    }
  }
  return (
    <main>
      <div class="page-head">
        <h1>Environments</h1>
      </div>
      <ErrorLine error={error} />
      {data && data.environments.length === 0 && (
        <EmptyState icon={Layers} title="No environments">
          Create one below, then add it to projects from their settings.
        </EmptyState>
      )}
      <TableWrap label="Environments">
        <table aria-label="Environments">
          <thead>
            <tr>
              <th>Name</th>
              <th>Type</th>
              <th>Projects</th>
              <th class="hide-phone">Created</th>
            </tr>
          </thead>
          <tbody>
            {data?.environments.map(environment => (
              <tr key={environment.name}>
                <td>{environment.name}</td>
                <td>
                  <span class={`badge${environment.type === 'production' ? ' badge-warning' : ''}`}>
                    {environment.type}
                  </span>
                </td>
                <td>{environment.projectCount}</td>
                <td class="hide-phone">{when(environment.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {canWrite && (
        <form class="inline card" aria-label="Create an environment" onSubmit={create}>
          <TextField label="Environment name" value={name} required onValue={setName} />
          <Picker label="Environment type" value={type} options={ENVIRONMENT_TYPES} onChange={setType} />
          <Button type="submit" variant="primary" icon={Plus}>
            Create environment
          </Button>
          <ErrorLine error={createError} />
        </form>
      )}
    </main>
  )
}

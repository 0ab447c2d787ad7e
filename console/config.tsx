/**
 * The configuration pages: context fields and tag types (list, create, edit, delete after
 * confirming). Each is a table with a form that creates or edits one entry; errors show at the form
 * or in a toast. Viewers get the tables only. Segments: segments.tsx; strategy types:
 * strategy-types.tsx; applications: applications.tsx.
 */
import { useState } from 'preact/hooks'
import { Tags, Variable } from 'lucide'
import { call, enc, get, type TagType } from './api'
import { Button } from './components/button'
import { EmptyState } from './components/empty-state'
import { FormPanel, split } from './components/form-panel'
import { confirmDelete, ErrorLine, ListHead, useAct, useLoad, TableWrap } from './ui'

export { FlagUsage } from './applications'

// ---- Context fields

interface ContextField {
  name: string
  description: string | null
  stickiness: boolean
  legalValues: { value: string; description?: string }[]
}

function ContextForm({
  initial,
  onDone,
  onCancel,
}: {
  initial?: ContextField
  onDone: () => void
  onCancel: () => void
}) {
  const [name, setName] = useState(initial?.name ?? '')
  const [description, setDescription] = useState(initial?.description ?? '')
  const [legal, setLegal] = useState((initial?.legalValues ?? []).map(entry => entry.value).join(', '))
  const [stickiness, setStickiness] = useState(initial?.stickiness ?? false)
  const { error, act } = useAct(onDone)
  const fields = { description, stickiness, legalValues: split(legal).map(value => ({ value })) }
  return (
    <FormPanel
      label={initial ? `Edit context field ${initial.name}` : 'New context field'}
      error={error}
      onCancel={onCancel}
      onSubmit={() =>
        act(() =>
          initial
            ? call('PUT', `/api/admin/context/${enc(initial.name)}`, fields)
            : call('POST', '/api/admin/context', { name, ...fields }),
        )
      }
    >
      <label>
        Context field name{' '}
        <input value={name} required disabled={!!initial} onInput={e => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description <input value={description} onInput={e => setDescription(e.currentTarget.value)} />
      </label>
      <label>
        Legal values (comma-separated) <input value={legal} onInput={e => setLegal(e.currentTarget.value)} />
      </label>
      <label class="check">
        <input type="checkbox" checked={stickiness} onChange={e => setStickiness(e.currentTarget.checked)} /> Usable as
        stickiness
      </label>
    </FormPanel>
  )
}

export function ContextPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<ContextField[]>('/api/admin/context'), [])
  const [editing, setEditing] = useState<ContextField | 'new' | null>(null)
  const remove = (name: string, path: string) =>
    confirmDelete(
      'context field',
      name,
      path,
      'Constraints on it stay in strategies, but it is no longer offered when writing one.',
    ).then(reload)
  return (
    <main>
      <ListHead
        title="Context fields"
        newLabel="New context field"
        show={canWrite && editing === null}
        onNew={() => setEditing('new')}
      />
      <ErrorLine error={error} />
      {editing !== null && (
        <ContextForm
          key={editing === 'new' ? '' : editing.name}
          initial={editing === 'new' ? undefined : editing}
          onDone={() => (setEditing(null), reload())}
          onCancel={() => setEditing(null)}
        />
      )}
      {data && data.length === 0 && (
        <EmptyState icon={Variable} title="No context fields">
          Context fields are what constraints test: userId, region, plan… Add the ones your applications send.
        </EmptyState>
      )}
      <TableWrap label="Context fields">
        <table aria-label="Context fields">
          <thead>
            <tr>
              <th>Name</th>
              <th>Description</th>
              <th>Legal values</th>
              <th>Stickiness</th>
              {canWrite && <th>Actions</th>}
            </tr>
          </thead>
          <tbody>
            {data?.map(field => (
              <tr key={field.name}>
                <td>{field.name}</td>
                <td>{field.description}</td>
                <td>{field.legalValues.map(entry => entry.value).join(', ')}</td>
                <td>{field.stickiness ? 'yes' : ''}</td>
                {canWrite && (
                  <td>
                    <Button size="sm" onClick={() => setEditing(field)}>
                      Edit {field.name}
                    </Button>
                    <Button
                      size="sm"
                      variant="danger"
                      onClick={() => remove(field.name, `/api/admin/context/${enc(field.name)}`)}
                    >
                      Delete {field.name}
                    </Button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </main>
  )
}

// ---- Tag types

function TagTypeForm({ initial, onDone, onCancel }: { initial?: TagType; onDone: () => void; onCancel: () => void }) {
  const [name, setName] = useState(initial?.name ?? '')
  const [description, setDescription] = useState(initial?.description ?? '')
  const { error, act } = useAct(onDone)
  return (
    <FormPanel
      label={initial ? `Edit tag type ${initial.name}` : 'New tag type'}
      error={error}
      onCancel={onCancel}
      onSubmit={() =>
        act(() =>
          initial
            ? call('PUT', `/api/admin/tag-types/${enc(initial.name)}`, { name: initial.name, description })
            : call('POST', '/api/admin/tag-types', { name, description }),
        )
      }
    >
      <label>
        Tag type name <input value={name} required disabled={!!initial} onInput={e => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description <input value={description} onInput={e => setDescription(e.currentTarget.value)} />
      </label>
    </FormPanel>
  )
}

export function TagTypesPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<{ tagTypes: TagType[] }>('/api/admin/tag-types'), [])
  const [editing, setEditing] = useState<TagType | 'new' | null>(null)
  const remove = (name: string, path: string) =>
    confirmDelete(
      'tag type',
      name,
      path,
      'A tag type still used by a flag cannot be deleted; the service says which.',
    ).then(reload)
  return (
    <main>
      <ListHead
        title="Tag types"
        newLabel="New tag type"
        show={canWrite && editing === null}
        onNew={() => setEditing('new')}
      />
      <ErrorLine error={error} />
      {editing !== null && (
        <TagTypeForm
          key={editing === 'new' ? '' : editing.name}
          initial={editing === 'new' ? undefined : editing}
          onDone={() => (setEditing(null), reload())}
          onCancel={() => setEditing(null)}
        />
      )}
      {data && data.tagTypes.length === 0 && (
        <EmptyState icon={Tags} title="No tag types">
          Tag types group the tags put on flags (team, component…). Create one to start tagging.
        </EmptyState>
      )}
      <TableWrap label="Tag types">
        <table aria-label="Tag types">
          <thead>
            <tr>
              <th>Name</th>
              <th>Description</th>
              {canWrite && <th>Actions</th>}
            </tr>
          </thead>
          <tbody>
            {data?.tagTypes.map(type => (
              <tr key={type.name}>
                <td>{type.name}</td>
                <td>{type.description}</td>
                {canWrite && (
                  <td>
                    <Button size="sm" onClick={() => setEditing(type)}>
                      Edit {type.name}
                    </Button>
                    <Button
                      size="sm"
                      variant="danger"
                      onClick={() => remove(type.name, `/api/admin/tag-types/${enc(type.name)}`)}
                    >
                      Delete {type.name}
                    </Button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </main>
  )
}

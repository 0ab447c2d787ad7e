/** Segments: named sets of constraints that strategies reuse (list, create, edit, delete). */
import { useState } from 'preact/hooks'
import { Plus, UsersRound } from 'lucide'
import { call, get, type Constraint, type Project, type Segment } from './api'
import { Button } from './components/button'
import { EmptyState } from './components/empty-state'
import { Picker } from './components/field'
import { FormPanel } from './components/form-panel'
import { ConstraintEditor } from './constraints'
import { confirmDelete, ErrorLine, ListHead, useAct, useLoad, TableWrap } from './ui'

function SegmentForm({ initial, onDone, onCancel }: { initial?: Segment; onDone: () => void; onCancel: () => void }) {
  const [name, setName] = useState(initial?.name ?? '')
  const [description, setDescription] = useState(initial?.description ?? '')
  const [project, setProject] = useState(initial?.project ?? '')
  const [constraints, setConstraints] = useState<Constraint[]>(initial?.constraints ?? [])
  const { error, act } = useAct(onDone)
  const projects = useLoad(() => get<{ projects: Project[] }>('/api/admin/projects'), [])
  const body = { name, description, project: project || null, constraints }
  return (
    <FormPanel
      label={initial ? `Edit segment ${initial.name}` : 'New segment'}
      error={error}
      onCancel={onCancel}
      onSubmit={() =>
        act(() =>
          initial ? call('PUT', `/api/admin/segments/${initial.id}`, body) : call('POST', '/api/admin/segments', body),
        )
      }
    >
      <label>
        Segment name <input value={name} required onInput={e => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description <input value={description} onInput={e => setDescription(e.currentTarget.value)} />
      </label>
      <Picker
        label="Segment project"
        value={project}
        placeholder="All projects"
        options={(projects.data?.projects ?? []).map(entry => ({ value: entry.id, label: entry.name }))}
        onChange={setProject}
      />
      {constraints.map((constraint, index) => (
        <ConstraintEditor
          key={index}
          index={index}
          value={constraint}
          onChange={next => setConstraints(constraints.map((entry, at) => (at === index ? next : entry)))}
          onRemove={() => setConstraints(constraints.filter((_, at) => at !== index))}
        />
      ))}
      <div>
        <Button
          icon={Plus}
          onClick={() =>
            setConstraints([
              ...constraints,
              { contextName: 'userId', operator: 'IN', values: [], caseInsensitive: false, inverted: false },
            ])
          }
        >
          Add constraint
        </Button>
      </div>
    </FormPanel>
  )
}

export function SegmentsPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<{ segments: Segment[] }>('/api/admin/segments'), [])
  const [editing, setEditing] = useState<Segment | 'new' | null>(null)
  const done = () => (setEditing(null), reload())
  const remove = (segment: Segment) =>
    confirmDelete(
      'segment',
      segment.name,
      `/api/admin/segments/${segment.id}`,
      'A segment still used by a strategy cannot be deleted; the service says which.',
    ).then(reload)
  return (
    <main>
      <ListHead
        title="Segments"
        newLabel="New segment"
        show={canWrite && editing === null}
        onNew={() => setEditing('new')}
      />
      <ErrorLine error={error} />
      {editing !== null && (
        <SegmentForm
          key={editing === 'new' ? 'new' : editing.id}
          initial={editing === 'new' ? undefined : editing}
          onDone={done}
          onCancel={() => setEditing(null)}
        />
      )}
      {data && data.segments.length === 0 ? (
        <EmptyState icon={UsersRound} title="No segments yet">
          A segment names a group of users by constraints (say, beta testers in Europe) that any strategy can reuse.
          {canWrite ? ' Create one with New segment.' : ''}
        </EmptyState>
      ) : (
        <TableWrap label="Segments">
          <table aria-label="Segments">
            <thead>
              <tr>
                <th>Name</th>
                <th>Project</th>
                <th>Constraints</th>
                <th class="hide-phone">Description</th>
                {canWrite && <th>Actions</th>}
              </tr>
            </thead>
            <tbody>
              {data?.segments.map(segment => (
                <tr key={segment.id}>
                  <td>{segment.name}</td>
                  <td>{segment.project ?? 'all'}</td>
                  <td>
                    {segment.constraints
                      .map(
                        c =>
                          `${c.contextName} ${c.inverted ? 'NOT ' : ''}${c.operator} ${c.value ?? (c.values ?? []).join(',')}`,
                      )
                      .join('; ')}
                  </td>
                  <td class="hide-phone">{segment.description}</td>
                  {canWrite && (
                    <td>
                      <Button size="sm" onClick={() => setEditing(segment)}>
                        Edit {segment.name}
                      </Button>
                      <Button size="sm" variant="danger" onClick={() => remove(segment)}>
                        Delete {segment.name}
                      </Button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </main>
  )
}

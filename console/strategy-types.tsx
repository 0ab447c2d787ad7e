/** Strategy types: the built-in ones, and custom ones with their parameters (create, edit, deprecate, delete). */
import { useState } from 'preact/hooks'
import { Plus, Route } from 'lucide'
import { call, enc, get, type StrategyType } from './api'
import { Button } from './components/button'
import { EmptyState } from './components/empty-state'
import { Picker } from './components/field'
import { FormPanel } from './components/form-panel'
import { confirmDelete, ErrorLine, ListHead, useAct, useLoad, TableWrap } from './ui'

type Parameter = StrategyType['parameters'][number]
const PARAMETER_TYPES = ['string', 'percentage', 'list', 'number', 'boolean']

function StrategyTypeForm({
  initial,
  onDone,
  onCancel,
}: {
  initial?: StrategyType
  onDone: () => void
  onCancel: () => void
}) {
  const [name, setName] = useState(initial?.name ?? '')
  const [description, setDescription] = useState(initial?.description ?? '')
  const [parameters, setParameters] = useState<Parameter[]>(initial?.parameters ?? [])
  const { error, act } = useAct(onDone)
  const change = (index: number, next: Partial<Parameter>) =>
    setParameters(parameters.map((entry, at) => (at === index ? { ...entry, ...next } : entry)))
  const body = {
    name,
    description,
    parameters: parameters.map(entry => ({ ...entry, description: entry.description ?? '' })),
  }
  return (
    <FormPanel
      label={initial ? `Edit strategy type ${initial.name}` : 'New strategy type'}
      error={error}
      onCancel={onCancel}
      onSubmit={() =>
        act(() =>
          initial
            ? call('PUT', `/api/admin/strategies/${enc(initial.name)}`, body)
            : call('POST', '/api/admin/strategies', body),
        )
      }
    >
      <label>
        Strategy type name{' '}
        <input value={name} required disabled={!!initial} onInput={e => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description <input value={description} onInput={e => setDescription(e.currentTarget.value)} />
      </label>
      {parameters.map((parameter, index) => (
        <fieldset key={index}>
          <legend>Parameter {index + 1}</legend>
          <label>
            Parameter name{' '}
            <input value={parameter.name} required onInput={e => change(index, { name: e.currentTarget.value })} />
          </label>
          <Picker
            label="Parameter type"
            value={parameter.type}
            options={PARAMETER_TYPES}
            onChange={type => change(index, { type })}
          />
          <label>
            Parameter description{' '}
            <input
              value={parameter.description ?? ''}
              onInput={e => change(index, { description: e.currentTarget.value })}
            />
          </label>
          <label class="check">
            <input
              type="checkbox"
              checked={parameter.required}
              onChange={e => change(index, { required: e.currentTarget.checked })}
            />{' '}
            Required
          </label>
          <Button size="sm" onClick={() => setParameters(parameters.filter((_, at) => at !== index))}>
            Remove parameter {index + 1}
          </Button>
        </fieldset>
      ))}
      <div>
        <Button
          icon={Plus}
          onClick={() => setParameters([...parameters, { name: '', type: 'string', description: '', required: false }])}
        >
          Add parameter
        </Button>
      </div>
    </FormPanel>
  )
}

export function StrategyTypesPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(() => get<{ strategies: StrategyType[] }>('/api/admin/strategies'), [])
  const [editing, setEditing] = useState<StrategyType | 'new' | null>(null)
  const { error: rowError, act } = useAct(reload)
  const remove = (name: string, path: string) =>
    confirmDelete(
      'strategy type',
      name,
      path,
      'A type still used by a strategy of any flag cannot be deleted; the service names the flags.',
    ).then(reload)
  return (
    <main>
      <ListHead
        title="Strategy types"
        newLabel="New strategy type"
        show={canWrite && editing === null}
        onNew={() => setEditing('new')}
      />
      <ErrorLine error={error} />
      {editing !== null && (
        <StrategyTypeForm
          key={editing === 'new' ? '' : editing.name}
          initial={editing === 'new' ? undefined : editing}
          onDone={() => (setEditing(null), reload())}
          onCancel={() => setEditing(null)}
        />
      )}
      <ErrorLine error={rowError} />
      {data && data.strategies.length === 0 && (
        <EmptyState icon={Route} title="No strategy types">
          Create a custom strategy type when the built-in ones cannot say who gets a flag.
        </EmptyState>
      )}
      <TableWrap label="Strategy types">
        <table aria-label="Strategy types">
          <thead>
            <tr>
              <th>Name</th>
              <th class="hide-phone">Description</th>
              <th class="hide-phone">Parameters</th>
              <th>State</th>
              {canWrite && <th>Actions</th>}
            </tr>
          </thead>
          <tbody>
            {data?.strategies.map(type => (
              <tr key={type.name}>
                <td>
                  {type.displayName ?? type.name}
                  {type.displayName && type.displayName !== type.name ? ` (${type.name})` : ''}
                </td>
                <td class="hide-phone">{type.description}</td>
                <td class="hide-phone">
                  {type.parameters
                    .map(parameter => `${parameter.name}: ${parameter.type}${parameter.required ? ' (required)' : ''}`)
                    .join(', ')}
                </td>
                <td>{type.editable ? (type.deprecated ? 'deprecated' : 'active') : 'built in'}</td>
                {canWrite && (
                  <td>
                    {type.editable && (
                      <Button size="sm" onClick={() => setEditing(type)}>
                        Edit {type.name}
                      </Button>
                    )}
                    {type.editable &&
                      (type.deprecated ? (
                        <Button
                          size="sm"
                          onClick={() => act(() => call('POST', `/api/admin/strategies/${enc(type.name)}/reactivate`))}
                        >
                          Reactivate {type.name}
                        </Button>
                      ) : (
                        <Button
                          size="sm"
                          onClick={() => act(() => call('POST', `/api/admin/strategies/${enc(type.name)}/deprecate`))}
                        >
                          Deprecate {type.name}
                        </Button>
                      ))}
                    {type.editable && (
                      <Button
                        size="sm"
                        variant="danger"
                        onClick={() => remove(type.name, `/api/admin/strategies/${enc(type.name)}`)}
                      >
                        Delete {type.name}
                      </Button>
                    )}
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

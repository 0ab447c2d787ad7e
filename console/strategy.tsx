/**
 * A strategy's form, for adding one to a flag's environment or editing it: the built-in types and
 * the custom strategy types with their parameters, constraints with every operator, and segments;
 * and the one-line summary a flag's page shows for a strategy.
 */
import { useState } from 'preact/hooks'
import { get, type Segment, type Strategy, type StrategyType } from './api'
import { ErrorLine, useLoad } from './ui'
import { ConstraintEditor } from './constraints'

const BUILT_IN = ['default', 'flexibleRollout', 'userWithId', 'remoteAddress', 'applicationHostname']

export function StrategyForm({
  initial,
  flagName,
  project,
  onSave,
  onCancel,
}: {
  initial?: Strategy
  flagName: string
  project: string
  onSave: (strategy: Strategy) => Promise<void>
  onCancel: () => void
}) {
  const [strategy, setStrategy] = useState<Strategy>(
    initial ?? {
      name: 'flexibleRollout',
      parameters: { rollout: '100', stickiness: 'default', groupId: flagName },
      constraints: [],
      segments: [],
    },
  )
  const types = useLoad(() => get<{ strategies: StrategyType[] }>('/api/admin/strategies'), [])
  const segments = useLoad(() => get<{ segments: Segment[] }>('/api/admin/segments'), [])
  const custom = (types.data?.strategies ?? []).filter(
    type => !BUILT_IN.includes(type.name) && (!type.deprecated || type.name === initial?.name),
  )
  const customType = custom.find(type => type.name === strategy.name)
  const usable = (segments.data?.segments ?? []).filter(
    segment => segment.project === null || segment.project === project,
  )
  const chosen = new Set(strategy.segments ?? [])
  const [error, setError] = useState<unknown>(null)
  const parameter = (key: string, value: string) =>
    setStrategy({ ...strategy, parameters: { ...strategy.parameters, [key]: value } })
  const submit = async (event: Event) => {
    event.preventDefault()
    try {
      await onSave(strategy)
    } catch (failure) {
      setError(failure)
    }
  }
  return (
    <form
      onSubmit={submit}
      class="strategy-form"
      aria-label={initial ? `Edit strategy ${initial.name}` : 'Add a strategy'}
    >
      <label>
        Strategy
        <select
          value={strategy.name}
          disabled={!!initial}
          onChange={e => {
            const name = e.currentTarget.value
            const type = custom.find(entry => entry.name === name)
            const parameters: Record<string, string> = type
              ? Object.fromEntries(type.parameters.map(parameter => [parameter.name, '']))
              : name === 'flexibleRollout'
                ? { rollout: '100', stickiness: 'default', groupId: flagName }
                : name === 'default'
                  ? {}
                  : name === 'userWithId'
                    ? { userIds: '' }
                    : name === 'remoteAddress'
                      ? { IPs: '' }
                      : { hostNames: '' }
            setStrategy({ ...strategy, name, parameters })
          }}
        >
          <option value="default">Standard (on for everyone)</option>
          <option value="flexibleRollout">Gradual rollout</option>
          <option value="userWithId">User ids</option>
          <option value="remoteAddress">IP addresses</option>
          <option value="applicationHostname">Hostnames</option>
          {custom.map(type => (
            <option key={type.name} value={type.name}>
              {type.displayName ?? type.name} (custom)
            </option>
          ))}
        </select>
      </label>
      {strategy.name === 'flexibleRollout' && (
        <>
          <label>
            Rollout percentage
            <input
              type="range"
              min="0"
              max="100"
              value={strategy.parameters.rollout ?? '100'}
              onInput={e => parameter('rollout', e.currentTarget.value)}
            />
            <output>{strategy.parameters.rollout ?? '100'} %</output>
          </label>
          <label>
            Stickiness
            <input
              value={strategy.parameters.stickiness ?? 'default'}
              onInput={e => parameter('stickiness', e.currentTarget.value)}
            />
          </label>
          <label>
            Group id
            <input
              value={strategy.parameters.groupId ?? ''}
              onInput={e => parameter('groupId', e.currentTarget.value)}
            />
          </label>
        </>
      )}
      {['userWithId', 'remoteAddress', 'applicationHostname'].includes(strategy.name) && (
        <label>
          {strategy.name === 'userWithId'
            ? 'User ids'
            : strategy.name === 'remoteAddress'
              ? 'IP addresses'
              : 'Hostnames'}{' '}
          (comma-separated)
          <input
            value={Object.values(strategy.parameters)[0] ?? ''}
            onInput={e => parameter(Object.keys(strategy.parameters)[0]!, e.currentTarget.value)}
          />
        </label>
      )}
      {customType?.parameters.map(field => (
        <label key={field.name}>
          {field.name}
          {field.required ? ' (required)' : ''}
          <input
            value={strategy.parameters[field.name] ?? ''}
            required={field.required}
            title={field.description ?? undefined}
            onInput={e => parameter(field.name, e.currentTarget.value)}
          />
        </label>
      ))}
      {usable.length > 0 && (
        <fieldset class="segments">
          <legend>Segments</legend>
          {usable.map(segment => (
            <label class="check" key={segment.id}>
              <input
                type="checkbox"
                checked={chosen.has(segment.id)}
                onChange={e => {
                  const next = new Set(chosen)
                  if (e.currentTarget.checked) next.add(segment.id)
                  else next.delete(segment.id)
                  setStrategy({ ...strategy, segments: [...next] })
                }}
              />{' '}
              Segment {segment.name}
            </label>
          ))}
        </fieldset>
      )}
      {strategy.constraints.map((constraint, index) => (
        <ConstraintEditor
          key={index}
          index={index}
          value={constraint}
          onChange={next =>
            setStrategy({
              ...strategy,
              constraints: strategy.constraints.map((entry, at) => (at === index ? next : entry)),
            })
          }
          onRemove={() =>
            setStrategy({ ...strategy, constraints: strategy.constraints.filter((_, at) => at !== index) })
          }
        />
      ))}
      <button
        type="button"
        onClick={() =>
          setStrategy({
            ...strategy,
            constraints: [
              ...strategy.constraints,
              { contextName: 'userId', operator: 'IN', values: [], caseInsensitive: false, inverted: false },
            ],
          })
        }
      >
        Add constraint
      </button>
      <button type="submit">Save strategy</button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
      <ErrorLine error={error} />
    </form>
  )
}

export function describeStrategy(strategy: Strategy): string {
  const parameters = Object.entries(strategy.parameters)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ')
  const constraints = strategy.constraints
    .map(c => `${c.contextName} ${c.inverted ? 'NOT ' : ''}${c.operator} ${c.value ?? (c.values ?? []).join(',')}`)
    .join('; ')
  const segments = (strategy.segments ?? []).length > 0 ? `segments ${(strategy.segments ?? []).join(', ')}` : ''
  return [parameters, constraints, segments].filter(Boolean).join(' · ')
}

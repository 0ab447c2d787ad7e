/**
 * A strategy's form, for adding one to a flag's environment or editing it: the built-in types and
 * the custom strategy types with their parameters, constraints (constraints.tsx), segments picked
 * by name, stickiness picked from the fields that allow it; and the card a flag's page shows for a
 * strategy: what it does in words, its constraint chips and its segments by name.
 */
import { useState } from 'preact/hooks'
import { get, type Segment, type Strategy, type StrategyType } from './api'
import { ErrorLine, Picker, useLoad } from './ui'
import { ConstraintChips, ConstraintEditor, useContextFields } from './constraints'

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
          <StickinessPicker
            value={strategy.parameters.stickiness ?? 'default'}
            onChange={value => parameter('stickiness', value)}
          />
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

/** Stickiness: default, random, or a context field that allows it. */
export function StickinessPicker({
  value,
  onChange,
  label = 'Stickiness',
  disabled,
}: {
  value: string
  onChange: (value: string) => void
  label?: string
  disabled?: boolean
}) {
  const fields = useContextFields()
  const choices = ['default', 'random', ...fields.filter(field => field.stickiness).map(field => field.name)]
  if (!choices.includes(value)) choices.push(value)
  return <Picker label={label} value={value} options={choices} disabled={disabled} onChange={onChange} />
}

const list = (text: string | undefined) =>
  (text ?? '')
    .split(',')
    .map(part => part.trim())
    .filter(Boolean)
    .join(', ')

/** What a strategy does, in words: "50 % of users by userId (group checkout)". */
export function describeStrategy(strategy: Strategy): string {
  const p = strategy.parameters
  switch (strategy.name) {
    case 'default':
      return 'On for everyone'
    case 'flexibleRollout':
      return `${p.rollout ?? '100'} % of ${p.stickiness === 'random' ? 'requests, at random' : `users by ${p.stickiness ?? 'default'} stickiness`}${p.groupId ? ` (group ${p.groupId})` : ''}`
    case 'userWithId':
      return `User ids: ${list(p.userIds)}`
    case 'remoteAddress':
      return `IP addresses: ${list(p.IPs)}`
    case 'applicationHostname':
      return `Hostnames: ${list(p.hostNames)}`
    default:
      return Object.entries(p)
        .map(([key, value]) => `${key}: ${value}`)
        .join('; ')
  }
}

const TITLES: Record<string, string> = {
  default: 'Standard',
  flexibleRollout: 'Gradual rollout',
  userWithId: 'User ids',
  remoteAddress: 'IP addresses',
  applicationHostname: 'Hostnames',
}
export const strategyTitle = (name: string) => TITLES[name] ?? name

/** A strategy as a flag's page shows it; `segments` names the segments its ids refer to. */
export function StrategyCard({ strategy, segments }: { strategy: Strategy; segments: Segment[] }) {
  const rollout = strategy.name === 'flexibleRollout' ? Number(strategy.parameters.rollout ?? '100') : null
  const names = (strategy.segments ?? []).map(id => segments.find(segment => segment.id === id)?.name ?? `#${id}`)
  return (
    <div class="strategy-card">
      <p class="strategy-what">
        <strong>{strategy.title || strategyTitle(strategy.name)}</strong>
        {strategy.disabled ? <span class="badge"> disabled</span> : null} <span>{describeStrategy(strategy)}</span>
      </p>
      {rollout !== null && (
        <div class="rollout-bar" aria-hidden="true">
          <span style={{ width: `${rollout}%` }} />
        </div>
      )}
      {names.length > 0 && (
        <ul class="chips" aria-label="Segments">
          {names.map(name => (
            <li class="chip segment-chip" key={name}>
              segment {name}
            </li>
          ))}
        </ul>
      )}
      <ConstraintChips constraints={strategy.constraints} />
      {(strategy.variants ?? []).length > 0 && (
        <ol class="weight-bar" aria-label="Variants of this strategy">
          {strategy.variants!.map((variant, index) => (
            <li
              key={variant.name}
              class={`weight-part part-${index % 6}`}
              style={{ flexGrow: variant.weight }}
              title={`${variant.name} ${variant.weight / 10} %`}
            >
              {variant.name} {variant.weight / 10} %
            </li>
          ))}
        </ol>
      )}
    </div>
  )
}

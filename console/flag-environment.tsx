/**
 * One environment of a flag's page: its switch, its strategies as cards (what each does in words,
 * its constraint chips and segments; add, edit, remove, and reorder in one set-sort-order call,
 * through the form in strategy.tsx), its variants (variants.tsx) and its usage chart (usage.tsx).
 */
import { useState } from 'preact/hooks'
import { call, enc, type Flag, type FlagEnvironment, type Segment, type Strategy } from './api'
import { announceProductionSwitch, ErrorLine, useAct } from './ui'
import { StrategyCard, StrategyForm } from './strategy'
import { Variants } from './variants'
import { EnvironmentUsage, type useUsage } from './usage'
import { addToChangeRequest, requestLink, useEnvironmentRequests } from './change-requests'
import { toast } from './ui'

export function EnvironmentPanel({
  flag,
  environment,
  canWrite,
  reload,
  segments,
  usage,
}: {
  flag: Flag
  environment: FlagEnvironment
  canWrite: boolean
  reload: () => void
  segments: Segment[]
  usage: ReturnType<typeof useUsage>
}) {
  const [editing, setEditing] = useState<string | 'new' | null>(null)
  const base = `/api/admin/projects/${enc(flag.project)}/features/${enc(flag.name)}/environments/${enc(environment.name)}`
  const { error, act } = useAct(reload)
  // The whole strategy goes back, its title, state and variants too: a PUT replaces what it omits.
  const body = (strategy: Strategy) => ({
    name: strategy.name,
    title: strategy.title ?? undefined,
    disabled: strategy.disabled ?? false,
    parameters: strategy.parameters,
    constraints: strategy.constraints,
    segments: strategy.segments ?? [],
    variants: strategy.variants ?? [],
  })
  const turn = async (enabled: boolean): Promise<void> => {
    if (await act(() => call('POST', `${base}/${enabled ? 'on' : 'off'}`)))
      announceProductionSwitch(flag.name, environment, enabled, () => turn(!enabled))
  }
  const requests = useEnvironmentRequests(flag)
  const reviewed = requests.under(environment.name)
  /** Under change requests a change goes to the caller's draft instead. */
  const propose = (action: string, payload: unknown) =>
    act(async () => {
      const draft = await addToChangeRequest(flag, environment.name, action, payload)
      toast.success(`Added to change request #${draft.id}`)
      requests.reload()
    })
  const strategies = environment.strategies ?? []
  /** Swaps a strategy with its neighbour: one set-sort-order call, so the order is never half-changed. */
  const move = (index: number, by: -1 | 1) => {
    const order = strategies.map(strategy => strategy.id!)
    ;[order[index], order[index + by]] = [order[index + by], order[index]]
    return act(() =>
      call(
        'POST',
        `${base}/strategies/set-sort-order`,
        order.map((id, sortOrder) => ({ id, sortOrder })),
      ),
    )
  }
  return (
    <section class="environment" aria-label={`Environment ${environment.name}`}>
      <h3 class="environment-title">
        <label class="check">
          <input
            type="checkbox"
            role="switch"
            class="switch"
            aria-label={`${flag.name} in ${environment.name}`}
            checked={environment.enabled}
            aria-checked={environment.enabled}
            disabled={!canWrite}
            onChange={e => {
              const on = e.currentTarget.checked
              if (reviewed) {
                e.currentTarget.checked = !on
                return propose('updateEnabled', { enabled: on })
              }
              return turn(on)
            }}
          />
          {environment.name}
        </label>
      </h3>
      {reviewed && (
        <p class="muted" role="note">
          Change requests: changes here need approval. The switch and strategy edits here are added to your draft (Add
          to change request).
        </p>
      )}
      {requests.pending(environment.name).map(request => (
        <p key={request.id} role="status">
          Pending change request{' '}
          <a href={requestLink(request)}>
            #{request.id} {request.title}
          </a>{' '}
          ({request.state})
        </p>
      ))}
      {strategies.length === 0 && (
        <p class="muted">
          No strategy: {environment.enabled ? 'on for everyone' : 'when turned on, a 100 % rollout is added'}.
        </p>
      )}
      <ol class="strategies">
        {strategies.map((strategy, index) => (
          <li key={strategy.id}>
            {editing === strategy.id ? (
              <StrategyForm
                initial={strategy}
                flagName={flag.name}
                project={flag.project}
                onCancel={() => setEditing(null)}
                onSave={async next => {
                  if (reviewed) await propose('updateStrategy', { id: strategy.id, ...body(next) })
                  else await call('PUT', `${base}/strategies/${strategy.id}`, body(next))
                  setEditing(null)
                  reload()
                }}
              />
            ) : (
              <>
                <StrategyCard strategy={strategy} segments={segments} />
                {canWrite && (
                  <button type="button" onClick={() => setEditing(strategy.id!)}>
                    Edit {strategy.name}
                  </button>
                )}
                {canWrite && (
                  <button
                    type="button"
                    onClick={() =>
                      reviewed
                        ? propose('deleteStrategy', { id: strategy.id })
                        : act(() => call('DELETE', `${base}/strategies/${strategy.id}`))
                    }
                  >
                    Remove {strategy.name}
                  </button>
                )}
                {canWrite && index > 0 && (
                  <button type="button" onClick={() => move(index, -1)}>
                    Move strategy {index + 1} ({strategy.name}) up
                  </button>
                )}
                {canWrite && index < strategies.length - 1 && (
                  <button type="button" onClick={() => move(index, 1)}>
                    Move strategy {index + 1} ({strategy.name}) down
                  </button>
                )}
              </>
            )}
          </li>
        ))}
      </ol>
      {canWrite && editing !== 'new' && (
        <button type="button" onClick={() => setEditing('new')}>
          Add strategy in {environment.name}
        </button>
      )}
      {editing === 'new' && (
        <StrategyForm
          flagName={flag.name}
          project={flag.project}
          onCancel={() => setEditing(null)}
          onSave={async strategy => {
            if (reviewed) await propose('addStrategy', body(strategy))
            else await call('POST', `${base}/strategies`, body(strategy))
            setEditing(null)
            reload()
          }}
        />
      )}
      <ErrorLine error={error} />
      <Variants
        key={JSON.stringify(environment.variants)}
        flag={flag}
        environment={environment}
        canWrite={canWrite}
        reload={reload}
      />
      <EnvironmentUsage flag={flag.name} environment={environment.name} usage={usage} />
    </section>
  )
}

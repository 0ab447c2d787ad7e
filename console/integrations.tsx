/**
 * Integrations (admins): webhooks, Slack, Microsoft Teams and Datadog. Add, edit and disable one;
 * each provider's parameters as a form, sensitive ones write-only (a stored secret is kept unless
 * a new one is typed); send a test event; each integration's delivery log, failures marked, with a
 * retry for its dead letters.
 */
import { useState } from 'preact/hooks'
import { RotateCcw, Send, Webhook } from 'lucide'
import { call, get } from './api'
import {
  Button,
  EmptyState,
  ErrorLine,
  FormPanel,
  ListHead,
  Picker,
  split,
  TextField,
  confirmDelete,
  toast,
  useLoad,
  when,
  TableWrap,
} from './ui'

interface Parameter {
  name: string
  displayName: string
  type: string
  description: string
  placeholder?: string
  required: boolean
  sensitive: boolean
}
interface Provider {
  name: string
  displayName: string
  description: string
  parameters: Parameter[]
  events: string[]
}
interface Addon {
  id: number
  provider: string
  enabled: boolean
  description: string | null
  parameters: Record<string, string>
  events: string[]
  projects: string[]
  environments: string[]
}
interface DeliveryLog {
  events: {
    deliveryId: string
    eventId: number
    attempt: number
    createdAt: string
    statusCode: number | null
    error: string | null
    durationMs: number
    outcome: string
  }[]
  waiting: { deliveryId: string; eventId: number; attempts: number; dead: boolean; lastError: string | null }[]
  waitingCount: number
}

const MASK = '*****'
const nameOf = (addon: Addon, providers: Provider[]) =>
  addon.description || `${providers.find(p => p.name === addon.provider)?.displayName ?? addon.provider} ${addon.id}`

function IntegrationForm({
  providers,
  existing,
  onDone,
}: {
  providers: Provider[]
  existing: Addon | null
  onDone: (saved: boolean) => void
}) {
  const [provider, setProvider] = useState(existing?.provider ?? providers[0].name)
  const [description, setDescription] = useState(existing?.description ?? '')
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(Object.entries(existing?.parameters ?? {}).filter(([, value]) => value !== MASK)),
  )
  const [events, setEvents] = useState<string[]>(
    existing?.events ?? ['feature-created', 'feature-environment-enabled', 'feature-environment-disabled'],
  )
  const [projects, setProjects] = useState((existing?.projects ?? ['*']).join(', '))
  const [environments, setEnvironments] = useState((existing?.environments ?? ['*']).join(', '))
  const [enabled, setEnabled] = useState(existing?.enabled ?? true)
  const [error, setError] = useState<unknown>(null)
  const definition = providers.find(p => p.name === provider)!
  const stored = (name: string) => existing?.parameters[name] === MASK
  const submit = async () => {
    const parameters: Record<string, string> = {}
    for (const parameter of definition.parameters) {
      const value = values[parameter.name] ?? ''
      if (value !== '') parameters[parameter.name] = value
      else if (parameter.sensitive && stored(parameter.name)) parameters[parameter.name] = MASK
    }
    const body = {
      provider,
      enabled,
      description,
      parameters,
      events,
      projects: split(projects),
      environments: split(environments),
    }
    try {
      if (existing) await call('PUT', `/api/admin/addons/${existing.id}`, body)
      else await call('POST', '/api/admin/addons', body)
      toast.success(existing ? 'Integration saved.' : 'Integration added.')
      onDone(true)
    } catch (failure) {
      setError(failure)
    }
  }
  return (
    <FormPanel
      label={existing ? `Edit ${nameOf(existing, providers)}` : 'New integration'}
      onSubmit={submit}
      onCancel={() => onDone(false)}
      error={error}
    >
      <div class="toolbar">
        <Picker
          label="Provider"
          value={provider}
          disabled={existing !== null}
          options={providers.map(p => ({ value: p.name, label: p.displayName }))}
          onChange={setProvider}
        />
        <TextField label="Description" value={description} onValue={setDescription} />
      </div>
      <p class="badge">{definition.description}</p>
      <fieldset>
        <legend>Parameters</legend>
        {definition.parameters.map(parameter => (
          <TextField
            key={parameter.name}
            label={parameter.displayName}
            type={parameter.sensitive ? 'password' : 'text'}
            autocomplete={parameter.sensitive ? 'new-password' : 'off'}
            required={parameter.required && !(parameter.sensitive && stored(parameter.name))}
            placeholder={
              parameter.sensitive && stored(parameter.name) ? 'Stored: type to replace' : parameter.placeholder
            }
            hint={
              parameter.sensitive ? `${parameter.description}. Write-only: never shown again.` : parameter.description
            }
            value={values[parameter.name] ?? ''}
            onValue={value => setValues({ ...values, [parameter.name]: value })}
          />
        ))}
      </fieldset>
      <fieldset class="event-choices">
        <legend>Events</legend>
        {definition.events.map(type => (
          <label class="check" key={type}>
            <input
              type="checkbox"
              checked={events.includes(type)}
              onChange={event =>
                setEvents(event.currentTarget.checked ? [...events, type] : events.filter(e => e !== type))
              }
            />
            {type}
          </label>
        ))}
      </fieldset>
      <div class="toolbar">
        <TextField label="Projects" hint="Comma-separated; * for all" value={projects} onValue={setProjects} />
        <TextField
          label="Environments"
          hint="Comma-separated; * for all"
          value={environments}
          onValue={setEnvironments}
        />
      </div>
      <label class="check">
        <input type="checkbox" checked={enabled} onChange={event => setEnabled(event.currentTarget.checked)} />
        Enabled
      </label>
    </FormPanel>
  )
}

function Deliveries({ addon, name }: { addon: Addon; name: string }) {
  const { data, error, reload } = useLoad(() => get<DeliveryLog>(`/api/admin/addons/${addon.id}/events`), [addon.id])
  const retry = async (eventId: number) => {
    try {
      await call('POST', `/api/admin/addons/${addon.id}/events/${eventId}/retry`)
      toast.success(`Event ${eventId} will be sent again.`)
      reload()
    } catch (failure) {
      toast.error(failure)
    }
  }
  const dead = data?.waiting.filter(delivery => delivery.dead) ?? []
  return (
    <section class="card" aria-label={`Deliveries of ${name}`}>
      <div class="page-head">
        <h2>Deliveries of {name}</h2>
        <Button size="sm" icon={RotateCcw} onClick={reload}>
          Refresh
        </Button>
      </div>
      <ErrorLine error={error} />
      {data && (
        <p>
          {data.waitingCount === 0 ? 'Nothing waiting.' : `${data.waitingCount} waiting, ${dead.length} dead-lettered.`}
        </p>
      )}
      {dead.length > 0 && (
        <ul aria-label="Dead letters">
          {dead.map(delivery => (
            <li key={delivery.deliveryId} class="delivery-failed">
              Event {delivery.eventId}: failed after {delivery.attempts} attempts ({delivery.lastError}){' '}
              <Button
                size="sm"
                icon={RotateCcw}
                onClick={() => retry(delivery.eventId)}
                aria-label={`Retry event ${delivery.eventId}`}
              >
                Retry
              </Button>
            </li>
          ))}
        </ul>
      )}
      {data && data.events.length > 0 && (
        <TableWrap label={`Delivery log of ${name}`}>
          <table aria-label={`Delivery log of ${name}`}>
            <thead>
              <tr>
                <th>When</th>
                <th>Event</th>
                <th>Outcome</th>
                <th class="hide-phone">Attempt</th>
                <th>Answer</th>
                <th class="hide-phone">Time</th>
              </tr>
            </thead>
            <tbody>
              {data.events.map(attempt => (
                <tr
                  key={`${attempt.deliveryId}-${attempt.attempt}`}
                  class={attempt.outcome === 'delivered' ? '' : 'delivery-failed'}
                >
                  <td>{when(attempt.createdAt)}</td>
                  <td>{attempt.eventId}</td>
                  <td>
                    {attempt.outcome === 'delivered'
                      ? 'Delivered'
                      : attempt.outcome === 'dead'
                        ? 'Failed: dead letter'
                        : 'Failed: will retry'}
                  </td>
                  <td class="hide-phone">{attempt.attempt}</td>
                  <td>{attempt.error ?? attempt.statusCode}</td>
                  <td class="hide-phone">{attempt.durationMs} ms</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  )
}

export function IntegrationsPage({ canWrite }: { canWrite: boolean }) {
  const { data, error, reload } = useLoad(
    () => get<{ addons: Addon[]; providers: Provider[] }>('/api/admin/addons'),
    [],
  )
  const [editing, setEditing] = useState<Addon | 'new' | null>(null)
  const [shown, setShown] = useState<number | null>(null)
  const providers = data?.providers ?? []
  const save = async (addon: Addon, change: Partial<Addon>) => {
    try {
      await call('PUT', `/api/admin/addons/${addon.id}`, { ...addon, ...change })
      toast.success(change.enabled ? 'Integration enabled.' : 'Integration disabled.')
      reload()
    } catch (failure) {
      toast.error(failure)
    }
  }
  const test = async (addon: Addon) => {
    try {
      const sent = await call<{ ok: boolean; statusCode: number | null; error: string | null }>(
        'POST',
        `/api/admin/addons/${addon.id}/test`,
      )
      if (sent.ok) toast.success(`Test event delivered (${sent.statusCode}).`)
      else toast.error(`Test event not delivered: ${sent.error}`)
    } catch (failure) {
      toast.error(failure)
    }
  }
  return (
    <main>
      <ListHead
        title="Integrations"
        newLabel="Add integration"
        show={canWrite && editing === null && providers.length > 0}
        onNew={() => setEditing('new')}
      />
      <ErrorLine error={error} />
      {editing !== null && (
        <IntegrationForm
          key={editing === 'new' ? 'new' : editing.id}
          providers={providers}
          existing={editing === 'new' ? null : editing}
          onDone={saved => (setEditing(null), saved && reload())}
        />
      )}
      {data && data.addons.length === 0 ? (
        <EmptyState icon={Webhook} title="No integrations">
          Tell a chat channel or another system when a flag changes: add a webhook, Slack, Teams or Datadog.
        </EmptyState>
      ) : (
        <ul class="integrations" aria-label="Integrations">
          {data?.addons.map(addon => {
            const name = nameOf(addon, providers)
            return (
              <li key={addon.id} class="card">
                <h2>{name}</h2>
                <p>
                  {providers.find(p => p.name === addon.provider)?.displayName} ·{' '}
                  {addon.enabled ? 'Enabled' : 'Disabled'} · {addon.events.length} event types
                </p>
                {canWrite && (
                  <div class="toolbar">
                    <Button size="sm" onClick={() => setEditing(addon)} aria-label={`Edit ${name}`}>
                      Edit
                    </Button>
                    <Button
                      size="sm"
                      onClick={() => save(addon, { enabled: !addon.enabled })}
                      aria-label={`${addon.enabled ? 'Disable' : 'Enable'} ${name}`}
                    >
                      {addon.enabled ? 'Disable' : 'Enable'}
                    </Button>
                    <Button size="sm" icon={Send} onClick={() => test(addon)} aria-label={`Send test event to ${name}`}>
                      Send test event
                    </Button>
                    <Button
                      size="sm"
                      onClick={() => setShown(shown === addon.id ? null : addon.id)}
                      aria-expanded={shown === addon.id}
                      aria-label={`Delivery log of ${name}`}
                    >
                      Delivery log
                    </Button>
                    <Button
                      size="sm"
                      variant="danger"
                      onClick={async () =>
                        (await confirmDelete(
                          'integration',
                          name,
                          `/api/admin/addons/${addon.id}`,
                          'Its waiting deliveries and its log go with it.',
                        )) && reload()
                      }
                      aria-label={`Delete ${name}`}
                    >
                      Delete
                    </Button>
                  </div>
                )}
                {shown === addon.id && <Deliveries addon={addon} name={name} />}
              </li>
            )
          })}
        </ul>
      )}
    </main>
  )
}

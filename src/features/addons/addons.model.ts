/** Request and response schemas of integrations (Unleash's addons), with Unleash's schema names. */
import { t } from 'elysia'
import { Integer, PATTERN_RULE, Timestamp } from '../../http/schemas'

const id = (what: string) =>
  t.String({ pattern: '^[0-9]{1,15}$', [PATTERN_RULE]: `${what}, a whole number of 1 to 15 digits`, description: what })

export const addonParams = t.Object({ id: id('Integration id') })
export const deliveryParams = t.Object({ id: id('Integration id'), eventId: id('Event id') })

const Parameters = t.Record(t.String({ maxLength: 100 }), t.String({ maxLength: 10_000 }), {
  description:
    'The provider’s parameters by name; sensitive ones are answered as *****, and ***** keeps the stored value',
})
const Names = (description: string) => t.Array(t.String({ maxLength: 200 }), { maxItems: 500, description })

const AddonFields = {
  provider: t.String({ maxLength: 100, description: 'The provider: webhook, slack, teams or datadog' }),
  enabled: t.Boolean({ description: 'Whether events are delivered' }),
  description: t.Optional(t.Union([t.String({ maxLength: 1000 }), t.Null()], { description: 'What it is for' })),
  parameters: Parameters,
  events: Names('The event types delivered'),
  projects: t.Optional(Names('Projects whose events are delivered; empty or ["*"] for all')),
  environments: t.Optional(Names('Environments whose events are delivered; empty or ["*"] for all')),
}

export const Addon = t.Object(
  {
    id: Integer({ description: 'Integration id' }),
    provider: t.String({ description: 'The provider' }),
    enabled: t.Boolean({ description: 'Whether events are delivered' }),
    description: t.Union([t.String(), t.Null()], { description: 'What it is for' }),
    parameters: t.Record(t.String(), t.String(), { description: 'Parameters, sensitive ones as *****' }),
    events: t.Array(t.String(), { description: 'The event types delivered' }),
    projects: t.Array(t.String(), { description: 'Projects filtered on' }),
    environments: t.Array(t.String(), { description: 'Environments filtered on' }),
    createdAt: Timestamp('When it was made'),
  },
  { description: 'An integration (addon): where and how events are delivered' },
)

const example = {
  provider: 'webhook',
  enabled: true,
  description: 'Tell the deploy service',
  parameters: { url: 'https://hooks.example.com/flags', signingSecret: 'a-long-random-secret' },
  events: ['feature-created', 'feature-environment-enabled'],
  projects: ['*'],
  environments: ['*'],
}

export const CreateAddon = t.Object(AddonFields, { description: 'An integration to make', examples: [example] })
export const UpdateAddon = t.Object(AddonFields, {
  description: 'The integration’s new settings (whole); ***** keeps a sensitive parameter as stored',
  examples: [example],
})

const ProviderParameter = t.Object(
  {
    name: t.String({ description: 'The parameter’s name in `parameters`' }),
    displayName: t.String({ description: 'Its name for people' }),
    type: t.String({ description: 'url, text or textfield' }),
    description: t.String({ description: 'What it does' }),
    placeholder: t.Optional(t.String({ description: 'An example value' })),
    required: t.Boolean({ description: 'Whether an integration must have it' }),
    sensitive: t.Boolean({ description: 'Stored but never answered back' }),
  },
  { description: 'A parameter a provider takes' },
)

export const Provider = t.Object(
  {
    name: t.String({ description: 'The provider’s name, as integrations give it' }),
    displayName: t.String({ description: 'Its name for people' }),
    description: t.String({ description: 'What it does' }),
    documentationUrl: t.String({ description: 'Where it is documented' }),
    parameters: t.Array(ProviderParameter, { description: 'The parameters it takes' }),
    events: t.Array(t.String(), { description: 'The event types it can deliver' }),
  },
  { description: 'A kind of integration and the parameters it takes' },
)

export const AddonList = t.Object(
  {
    addons: t.Array(Addon, { description: 'The integrations, by id' }),
    providers: t.Array(Provider, { description: 'The providers' }),
  },
  { description: 'Every integration, and the providers they can use' },
)

export const Attempt = t.Object(
  {
    deliveryId: t.String({ description: 'The X-Flagstore-Delivery id, the same on every attempt' }),
    eventId: Integer({ description: 'The event delivered' }),
    attempt: Integer({ description: 'The attempt’s number, from 1' }),
    createdAt: Timestamp('When it was made'),
    statusCode: t.Union([Integer(), t.Null()], { description: 'The receiver’s status, or null' }),
    error: t.Union([t.String(), t.Null()], { description: 'Why it failed, or null' }),
    durationMs: Integer({ description: 'How long it took' }),
    outcome: t.String({ description: 'delivered, retrying, dead or dropped' }),
  },
  { description: 'One attempt at a delivery' },
)

export const Waiting = t.Object(
  {
    deliveryId: t.String({ description: 'The X-Flagstore-Delivery id' }),
    eventId: Integer({ description: 'The event to deliver' }),
    attempts: Integer({ description: 'Attempts made so far' }),
    dead: t.Boolean({ description: 'Dead-lettered: sent again only on a retry' }),
    nextAttemptAt: t.Union([t.String({ format: 'date-time' }), t.Null()], {
      description: 'When the next attempt is due; null for a dead letter',
    }),
    lastError: t.Union([t.String(), t.Null()], { description: 'Why the last attempt failed, or null' }),
  },
  { description: 'A delivery not yet made' },
)

export const DeliveryLog = t.Object(
  {
    events: t.Array(Attempt, { description: 'The latest attempts, newest first' }),
    waiting: t.Array(Waiting, { description: 'The first deliveries still to make and the dead letters, oldest first' }),
    waitingCount: Integer({ description: 'Deliveries not yet made, dead letters included' }),
    dropped: Integer({ description: 'Deliveries not recorded because too many were waiting' }),
  },
  { description: 'An integration’s delivery log' },
)

export const TestResult = t.Object(
  {
    ok: t.Boolean({ description: 'Whether the receiver answered 2xx' }),
    statusCode: t.Union([Integer(), t.Null()], { description: 'The receiver’s status, or null' }),
    error: t.Union([t.String(), t.Null()], { description: 'Why it failed, or null' }),
    durationMs: Integer({ description: 'How long it took' }),
  },
  { description: 'How a test event was received (sent once, not retried, not logged)' },
)

export const addonModels = {
  addonSchema: Addon,
  addonsSchema: AddonList,
  addonCreateUpdateSchema: CreateAddon,
  addonUpdateSchema: UpdateAddon,
  addonDeliveryLogSchema: DeliveryLog,
  addonTestResultSchema: TestResult,
  addonWaitingSchema: Waiting,
}

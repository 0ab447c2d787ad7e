/** Schemas of SDK metrics and registration (sdk-api-contract §1, §2) and of the admin reads made from them. */
import { t } from 'elysia'
import { KEYS_ARE_NAMES } from '../../http/lenient-bodies'
import { Integer, Timestamp } from '../../http/schemas'
import { LIFECYCLE_STAGES } from '../flags/flags.records'

/** SDKs send many more fields than these; the ones they send are accepted as they are. */
export const ClientRegistration = t.Object(
  {
    appName: t.String({ minLength: 1, maxLength: 255, description: 'Name of the application' }),
    instanceId: t.Optional(t.String({ maxLength: 255, description: 'Instance of the application' })),
    sdkVersion: t.Optional(
      t.String({ maxLength: 255, description: 'SDK name and version, e.g. unleash-client-node:6.0.0' }),
    ),
    strategies: t.Optional(
      t.Array(t.String({ maxLength: 255 }), { maxItems: 1000, description: 'Strategy types the SDK knows' }),
    ),
    started: t.Optional(t.Unknown({ description: 'When the SDK started' })),
    interval: t.Optional(t.Number({ description: 'Metrics interval, ms' })),
    environment: t.Optional(
      t.String({
        maxLength: 255,
        description: "Environment the SDK says it runs in (the token's environment is recorded)",
      }),
    ),
  },
  {
    additionalProperties: true,
    description: 'An SDK announcing itself at start',
    examples: [
      {
        appName: 'checkout-service',
        instanceId: 'pod-1',
        sdkVersion: 'unleash-client-node:6.0.0',
        strategies: ['default', 'flexibleRollout'],
        started: '2026-01-01T00:00:00.000Z',
        interval: 60000,
      },
    ],
  },
)

export const ClientMetrics = t.Object(
  {
    appName: t.String({ minLength: 1, maxLength: 255, description: 'Name of the application' }),
    instanceId: t.Optional(t.String({ maxLength: 255, description: 'Instance of the application' })),
    environment: t.Optional(
      t.String({
        maxLength: 255,
        description: "Environment the SDK says it runs in (the token's environment is recorded)",
      }),
    ),
    bucket: t.Optional(
      t.Object(
        {
          start: t.Unknown({ description: 'Start of the period' }),
          stop: t.Unknown({ description: 'End of the period' }),
          toggles: t.Record(t.String(), t.Unknown(), {
            description:
              'Per flag: {yes, no, variants: {name: count}}, whole numbers ≥ 0. Flags unknown or outside the token scope are dropped silently',
            // Flag and variant names, whatever they are (constructor, __proto__…): the service reads own keys only.
            [KEYS_ARE_NAMES]: true,
          }),
        },
        { additionalProperties: true, description: 'Counts over one period' },
      ),
    ),
  },
  {
    additionalProperties: true,
    description: 'Evaluation counts of one SDK instance',
    examples: [
      {
        appName: 'checkout-service',
        instanceId: 'pod-1',
        bucket: {
          start: '2026-01-01T00:00:00.000Z',
          stop: '2026-01-01T00:01:00.000Z',
          toggles: { checkout: { yes: 10, no: 2, variants: { blue: 4 } } },
        },
      },
    ],
  },
)

const UsageRow = t.Object(
  {
    featureName: t.String({ description: 'The flag' }),
    appName: t.String({ description: 'The application that reported' }),
    environment: t.String({ description: "The environment of the reporting SDK's token" }),
    timestamp: Timestamp('Start of the hour the counts were received in'),
    yes: Integer({ minimum: 0, description: 'Evaluations to enabled' }),
    no: Integer({ minimum: 0, description: 'Evaluations to disabled' }),
    variants: t.Record(t.String(), Integer({ minimum: 0 }), { description: 'How often each variant was handed out' }),
  },
  { description: 'Counts of one flag in one environment, by one application, in one hour' },
)

export const FeatureUsage = t.Object(
  {
    version: Integer({ description: 'Schema version, 1' }),
    maturity: t.String({ description: 'API maturity, stable' }),
    featureName: t.String({ description: 'The flag' }),
    lastHourUsage: t.Array(UsageRow, {
      description: 'Counts of the hours that started in the last 60 minutes, per environment and application',
    }),
    seenApplications: t.Array(t.String(), {
      description: 'Applications that reported the flag in the last 24 hours, by name',
    }),
  },
  { description: 'How the flag was evaluated in the last hour, and by which applications' },
)

export const FeatureUsageHistory = t.Object(
  {
    version: Integer({ description: 'Schema version, 1' }),
    maturity: t.String({ description: 'API maturity, stable' }),
    featureName: t.String({ description: 'The flag' }),
    data: t.Array(UsageRow, {
      description: 'Counts per hour, environment and application, oldest hour first',
    }),
  },
  { description: 'Hourly evaluation counts of the flag (Unleash: featureMetricsSchema)' },
)

export const FeatureLifecycle = t.Array(
  t.Object(
    {
      stage: t.String({ description: `The stage: ${LIFECYCLE_STAGES.join(', ')}` }),
      enteredStageAt: Timestamp('When the flag entered it'),
      status: t.Optional(
        t.Union([t.Literal('kept'), t.Literal('discarded')], {
          description: 'Of completed: whether the flag was kept or discarded',
        }),
      ),
    },
    { description: 'A stage the flag went through' },
  ),
  { description: 'The stages the flag went through, in order; the last is the one it is in' },
)

const stageCount = (stage: string) => Integer({ minimum: 0, description: `Flags in the ${stage} stage` })

export const LifecycleCount = t.Object(
  {
    initial: stageCount('initial'),
    preLive: stageCount('pre-live'),
    live: stageCount('live'),
    completed: stageCount('completed'),
    archived: stageCount('archived'),
  },
  { description: 'How many flags are in each lifecycle stage' },
)

const flagNames = (what: string) =>
  t.Array(t.String(), { description: `Names of the first 20 ${what}, by name (beyond Unleash)` })
const stageFields = (stage: string) => ({
  currentFlags: Integer({ minimum: 0, description: `Flags of the project in the ${stage} stage now` }),
  averageDays: t.Union([Integer({ minimum: 0 }), t.Null()], {
    description: `Mean whole days the flags that entered ${stage} spent there (until the next stage, or now); null when none did`,
  }),
  flags: flagNames(`flags in ${stage} now`),
})
const stageSummary = (stage: string) => t.Object(stageFields(stage), { description: `The ${stage} stage` })

const namedCount = (what: string) =>
  t.Object(
    {
      total: Integer({ minimum: 0, description: `How many ${what} the project has` }),
      flags: flagNames(what),
    },
    { description: `The project's ${what}` },
  )

export const ProjectStatus = t.Object(
  {
    lifecycleSummary: t.Object(
      {
        initial: stageSummary('initial'),
        preLive: stageSummary('pre-live'),
        live: stageSummary('live'),
        completed: stageSummary('completed'),
        archived: t.Object(
          {
            ...stageFields('archived'),
            last30Days: Integer({ minimum: 0, description: 'Flags archived in the last 30 days' }),
          },
          { description: 'The archived stage' },
        ),
      },
      { description: "The project's flags by lifecycle stage (archived ones included)" },
    ),
    staleFlags: namedCount('flags marked stale (archived ones not counted)'),
    potentiallyStaleFlags: namedCount(
      "flags not marked stale that outlived their type's expected lifetime (beyond Unleash; archived ones not counted)",
    ),
  },
  {
    description:
      "A project's status as its overview shows it, without its flag list (Unleash's projectStatusSchema, in part)",
  },
)

const Usage = t.Object(
  {
    project: t.String({ description: "A project of the tokens the application used ('*': all)" }),
    environments: t.Array(t.String(), { description: 'Environments it was used in there' }),
  },
  { description: 'Where the application is used' },
)

const ApplicationSummary = t.Object(
  {
    appName: t.String({ description: 'Name of the application' }),
    sdkVersion: t.Optional(t.String({ description: 'SDK and version at the last registration' })),
    strategies: t.Array(t.String(), { description: 'Strategy types the SDK knows' }),
    usage: t.Array(Usage, { description: 'Projects and environments it is used in' }),
  },
  { description: 'An application that registered or sent metrics' },
)

export const Applications = t.Object(
  {
    applications: t.Array(ApplicationSummary, { description: 'By name' }),
    total: Integer({ description: 'Number of applications listed' }),
  },
  { description: 'Applications seen' },
)

export const Application = t.Object(
  {
    appName: t.String({ description: 'Name of the application' }),
    createdAt: Timestamp('First seen'),
    strategies: t.Array(
      t.Object(
        {
          name: t.String({ description: 'Strategy type' }),
          notFound: t.Optional(t.Boolean({ description: 'true: no such strategy type here' })),
        },
        { description: 'A strategy type the SDK knows' },
      ),
      { description: 'Strategy types the SDK knows' },
    ),
    instances: t.Array(
      t.Object(
        {
          appName: t.String({ description: 'Name of the application' }),
          instanceId: t.String({ description: 'Instance id' }),
          sdkVersion: t.Union([t.String(), t.Null()], { description: 'SDK and version it registered with' }),
          environment: t.String({
            description:
              "Environment of the instance's token: an instance reporting in two environments is listed twice",
          }),
          clientIp: t.Union([t.String(), t.Null()], {
            description:
              'Address of its last registration or report (behind a proxy: with TRUST_PROXY); null when unknown',
          }),
          createdAt: Timestamp('First seen'),
          lastSeen: Timestamp('Last registration or metrics'),
        },
        { description: 'A running instance' },
      ),
      { description: 'Instances seen in the last 48 hours, most recently seen first' },
    ),
    seenToggles: t.Array(
      t.Object(
        {
          name: t.String({ description: 'Flag name' }),
          project: t.Optional(t.String({ description: 'Project of the flag' })),
          type: t.Optional(t.String({ description: 'Flag type' })),
          notFound: t.Optional(t.Boolean({ description: 'true: the flag no longer exists' })),
        },
        { description: 'A flag the application reported' },
      ),
      { description: 'Flags it reported in the last 24 hours, by name' },
    ),
    links: t.Object({ self: t.String({ description: 'Path of the application' }) }, { description: 'Links' }),
  },
  { description: 'An application with its instances, strategies and the flags it reported' },
)

export const metricsModels = {
  clientApplicationSchema: ClientRegistration,
  clientMetricsSchema: ClientMetrics,
  featureUsageSchema: FeatureUsage,
  featureMetricsSchema: FeatureUsageHistory,
  featureLifecycleSchema: FeatureLifecycle,
  featureLifecycleCountSchema: LifecycleCount,
  projectStatusSchema: ProjectStatus,
  applicationsSchema: Applications,
  applicationSchema: Application,
}

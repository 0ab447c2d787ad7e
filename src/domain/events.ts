/**
 * The event catalogue: every type of event the service writes, and one constructor for each, so
 * that a type is spelled once and each kind of event always names the same subject fields
 * (project, flag, environment, tags). The API contract (§4) lists which operation writes which.
 *
 * This module imports nothing from features or storage: every feature may import it, and the
 * store records whatever event shape it is handed (see `Tx.appendEvent`).
 */

/** Who a change is recorded as made by: the events' `createdBy` and `createdByUserId`. */
export interface Actor {
  /** A token name, a user's username (else email), or `system` for start-up seeding. */
  name: string
  userId: number | null
}

export const SYSTEM_ACTOR: Actor = { name: 'system', userId: -1337 }

export const EVENT_TYPES = [
  'project-created',
  'project-updated',
  'project-deleted',
  'environment-created',
  'project-environment-added',
  'project-environment-removed',
  'feature-created',
  'feature-metadata-updated',
  'feature-stale-on',
  'feature-stale-off',
  'feature-archived',
  'feature-revived',
  'feature-deleted',
  'feature-environment-enabled',
  'feature-environment-disabled',
  'feature-strategy-add',
  'feature-strategy-update',
  'feature-strategy-remove',
  'feature-environment-variants-updated',
  'feature-tagged',
  'feature-untagged',
  'feature-dependency-added',
  'feature-dependency-removed',
  'feature-dependencies-removed',
  'feature-completed',
  'feature-uncompleted',
  'api-token-created',
  'api-token-deleted',
  'user-created',
  'user-updated',
  'user-deleted',
  'pat-created',
  'pat-deleted',
  'service-account-created',
  'service-account-updated',
  'service-account-deleted',
  'setting-updated',
  'segment-created',
  'segment-updated',
  'segment-deleted',
  'strategy-created',
  'strategy-updated',
  'strategy-deprecated',
  'strategy-reactivated',
  'strategy-deleted',
  'tag-type-created',
  'tag-type-updated',
  'tag-type-deleted',
  'feature-type-updated',
  'context-field-created',
  'context-field-updated',
  'context-field-deleted',
  'features-exported',
  'features-imported',
  'addon-config-created',
  'addon-config-updated',
  'addon-config-deleted',
  'change-request-configuration-updated',
  'change-request-created',
  'change-request-added',
  'change-request-discarded',
  'change-request-approved',
  'change-request-rejected',
  'change-request-cancelled',
  'change-request-applied',
  'change-request-scheduled',
  'change-request-unscheduled',
  'change-request-schedule-failed',
  'change-request-comment-added',
  'change-request-sent-to-review',
  'change-request-title-updated',
] as const

export type EventType = (typeof EVENT_TYPES)[number]

export interface EventTag {
  type: string
  value: string
}

/** An event to record; the store adds its id, time and actor. Fields left out are recorded as null (`tags`: []). */
export interface NewEvent {
  type: EventType
  project?: string | null
  featureName?: string | null
  environment?: string | null
  data?: unknown
  preData?: unknown
  tags?: readonly EventTag[]
}

/** What a `features-exported` event holds: the request's selection and a summary of the flags, never their names. */
export interface ExportedData {
  environment: string
  /** How the flags were picked, as the export does: by tag, else by names, else by project, else all the caller sees. */
  selectedBy: 'tag' | 'features' | 'project' | 'all'
  tag?: string
  /** How many names the request listed (selectedBy 'features'). */
  requested?: number
  /** The projects the token may read ('*' for all). */
  scope: readonly string[]
  /** Flags exported. */
  count: number
  /** sha256 of the exported names, sorted and joined by newlines: whether two exports held the same flags. */
  flagsHash: string
  /** Exports by the same token since its last recorded one that were left unrecorded (over the hourly bound). */
  unrecorded?: number
}

/** What an event about a flag names: its project, its name and its tags at that time. */
export interface FlagSubject {
  project: string
  name: string
  tags: readonly EventTag[]
}

interface Change {
  data?: unknown
  preData?: unknown
}

function aboutFlag(type: EventType, flag: FlagSubject, change: Change, environment?: string): NewEvent {
  return { type, project: flag.project, featureName: flag.name, environment, ...change, tags: flag.tags }
}

export const events = {
  projectCreated: (project: string, data: object): NewEvent => ({ type: 'project-created', project, data }),
  projectUpdated: (project: string, data: object, preData: object): NewEvent => ({
    type: 'project-updated',
    project,
    data,
    preData,
  }),
  projectDeleted: (project: string, preData: object): NewEvent => ({ type: 'project-deleted', project, preData }),

  environmentCreated: (environment: string, data: object): NewEvent => ({
    type: 'environment-created',
    environment,
    data,
  }),
  strategyTypeCreated: (data: object): NewEvent => ({ type: 'strategy-created', data }),
  strategyTypeUpdated: (data: object, preData: object): NewEvent => ({ type: 'strategy-updated', data, preData }),
  strategyTypeDeprecated: (name: string): NewEvent => ({ type: 'strategy-deprecated', data: { name } }),
  strategyTypeReactivated: (name: string): NewEvent => ({ type: 'strategy-reactivated', data: { name } }),
  strategyTypeDeleted: (preData: object): NewEvent => ({ type: 'strategy-deleted', preData }),
  projectEnvironmentAdded: (project: string, environment: string): NewEvent => ({
    type: 'project-environment-added',
    project,
    environment,
    data: { environment },
  }),
  projectEnvironmentRemoved: (project: string, environment: string): NewEvent => ({
    type: 'project-environment-removed',
    project,
    environment,
    preData: { environment },
  }),

  flagCreated: (flag: FlagSubject, data: object) => aboutFlag('feature-created', flag, { data }),
  flagMetadataUpdated: (flag: FlagSubject, data: object, preData: object) =>
    aboutFlag('feature-metadata-updated', flag, { data, preData }),
  /** Follows `feature-metadata-updated` when `stale` flipped. */
  flagStale: (flag: FlagSubject, stale: boolean) =>
    aboutFlag(stale ? 'feature-stale-on' : 'feature-stale-off', flag, { data: { stale } }),
  /** Without a change when it follows `feature-metadata-updated`, which holds it. */
  flagArchived: (flag: FlagSubject, change: { data: object; preData: object } | null = null) =>
    aboutFlag('feature-archived', flag, change ?? {}),
  flagRevived: (flag: FlagSubject, change: { data: object; preData: object } | null = null) =>
    aboutFlag('feature-revived', flag, change ?? {}),
  flagDeleted: (flag: FlagSubject, preData: object) => aboutFlag('feature-deleted', flag, { preData }),
  flagEnvironmentToggled: (flag: FlagSubject, environment: string, enabled: boolean) =>
    aboutFlag(
      enabled ? 'feature-environment-enabled' : 'feature-environment-disabled',
      flag,
      { data: { enabled }, preData: { enabled: !enabled } },
      environment,
    ),

  strategyAdded: (flag: FlagSubject, environment: string, data: object) =>
    aboutFlag('feature-strategy-add', flag, { data }, environment),
  strategyUpdated: (flag: FlagSubject, environment: string, data: object, preData: object) =>
    aboutFlag('feature-strategy-update', flag, { data, preData }, environment),
  strategyRemoved: (flag: FlagSubject, environment: string, preData: object) =>
    aboutFlag('feature-strategy-remove', flag, { preData }, environment),
  variantsUpdated: (flag: FlagSubject, environment: string, data: object, preData: object) =>
    aboutFlag('feature-environment-variants-updated', flag, { data, preData }, environment),

  flagTagged: (flag: FlagSubject, tag: EventTag) => aboutFlag('feature-tagged', flag, { data: tag }),
  flagUntagged: (flag: FlagSubject, tag: EventTag) => aboutFlag('feature-untagged', flag, { preData: tag }),
  dependencyAdded: (flag: FlagSubject, dependency: object) =>
    aboutFlag('feature-dependency-added', flag, { data: dependency }),
  dependencyRemoved: (flag: FlagSubject, dependency: object) =>
    aboutFlag('feature-dependency-removed', flag, { preData: dependency }),
  dependenciesRemoved: (flag: FlagSubject, dependencies: readonly object[]) =>
    aboutFlag('feature-dependencies-removed', flag, { preData: { dependencies } }),
  flagCompleted: (flag: FlagSubject, data: object, preData: object) =>
    aboutFlag('feature-completed', flag, { data, preData }),
  flagUncompleted: (flag: FlagSubject, data: object, preData: object | null) =>
    aboutFlag('feature-uncompleted', flag, { data, preData }),

  tokenCreated: (data: object): NewEvent => ({ type: 'api-token-created', data }),
  tokenDeleted: (preData: object): NewEvent => ({ type: 'api-token-deleted', preData }),

  /** A user's events never hold the password's hash; a password change is a user-updated whose data says so. */
  userCreated: (data: object): NewEvent => ({ type: 'user-created', data }),
  userUpdated: (data: object, preData: object): NewEvent => ({ type: 'user-updated', data, preData }),
  userDeleted: (preData: object): NewEvent => ({ type: 'user-deleted', preData }),
  /** A personal access token's events name its owner and description, never its secret. */
  patCreated: (data: object): NewEvent => ({ type: 'pat-created', data }),
  patDeleted: (preData: object): NewEvent => ({ type: 'pat-deleted', preData }),
  serviceAccountCreated: (data: object): NewEvent => ({ type: 'service-account-created', data }),
  serviceAccountUpdated: (data: object, preData: object): NewEvent => ({
    type: 'service-account-updated',
    data,
    preData,
  }),
  serviceAccountDeleted: (preData: object): NewEvent => ({ type: 'service-account-deleted', preData }),
  /** A setting of the service (Unleash's ids: `unleash.enterprise.auth.oidc`, `unleash.auth.simple`), secrets left out. */
  settingUpdated: (id: string, data: object, preData: object): NewEvent => ({
    type: 'setting-updated',
    data: { id, ...data },
    preData: { id, ...preData },
  }),

  /** `project` is the segment's project, null for a global segment. */
  segmentCreated: (project: string | null, data: object): NewEvent => ({ type: 'segment-created', project, data }),
  segmentUpdated: (project: string | null, data: object, preData: object): NewEvent => ({
    type: 'segment-updated',
    project,
    data,
    preData,
  }),
  segmentDeleted: (project: string | null, preData: object): NewEvent => ({
    type: 'segment-deleted',
    project,
    preData,
  }),

  tagTypeCreated: (data: object): NewEvent => ({ type: 'tag-type-created', data }),
  tagTypeUpdated: (data: object, preData: object): NewEvent => ({ type: 'tag-type-updated', data, preData }),
  tagTypeDeleted: (preData: object): NewEvent => ({ type: 'tag-type-deleted', preData }),
  flagTypeUpdated: (data: object, preData: object): NewEvent => ({ type: 'feature-type-updated', data, preData }),
  contextFieldCreated: (data: object): NewEvent => ({ type: 'context-field-created', data }),
  contextFieldUpdated: (data: object, preData: object): NewEvent => ({ type: 'context-field-updated', data, preData }),
  contextFieldDeleted: (preData: object): NewEvent => ({ type: 'context-field-deleted', preData }),
  /**
   * `data` says what was exported in a few hundred bytes whatever the number of flags: the
   * selection, how many flags and a hash of their names (an export is a read, and a viewer may
   * repeat it at will: naming every flag made each event kilobytes).
   */
  featuresExported: (project: string | null, data: ExportedData): NewEvent => ({
    type: 'features-exported',
    project,
    environment: data.environment,
    data,
  }),
  /** Follows the events of the single changes an import made, in the same commit. */
  featuresImported: (project: string, environment: string, data: { features: string[] }): NewEvent => ({
    type: 'features-imported',
    project,
    environment,
    data,
  }),
  /** An integration's settings, its sensitive parameters left out. */
  addonCreated: (data: object): NewEvent => ({ type: 'addon-config-created', data }),
  addonUpdated: (data: object, preData: object): NewEvent => ({ type: 'addon-config-updated', data, preData }),
  addonDeleted: (preData: object): NewEvent => ({ type: 'addon-config-deleted', preData }),
  changeRequestConfigured: (project: string, environment: string, data: object, preData: object | null): NewEvent => ({
    type: 'change-request-configuration-updated',
    project,
    environment,
    data,
    preData,
  }),
  /** A step of a change request: `data` names the request (`changeRequestId`) and what the step did. */
  changeRequest: (
    step: ChangeRequestStep,
    project: string,
    environment: string,
    data: { changeRequestId: number } & Record<string, unknown>,
  ): NewEvent => ({ type: `change-request-${step}`, project, environment, data }),
} satisfies Record<string, (...args: never[]) => NewEvent>

export type ChangeRequestStep =
  | 'created'
  | 'added'
  | 'discarded'
  | 'approved'
  | 'rejected'
  | 'cancelled'
  | 'applied'
  | 'scheduled'
  | 'unscheduled'
  | 'schedule-failed'
  | 'comment-added'
  | 'sent-to-review'
  | 'title-updated'

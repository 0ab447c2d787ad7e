/** The composition root: each feature's controllers, the services over the one store, and first-start seeding. */
import { EVENTS_FILE, JOURNAL_FILE, STATE_FILE } from './storage/files'
import { KEY_FILE } from './storage/secret-key'
import type { AnyElysia } from 'elysia'
import type { Store } from './storage/store'
import type { FeatureName } from './feature-list'
import { SYSTEM_ACTOR } from './domain/events'
import { clientController } from './features/client/client.controller'
import { ClientFeaturesService } from './features/client/client.service'
import { ChangeFeed } from './features/streaming/change-feed'
import { LiveChannel } from './features/streaming/live'
import { streamingController } from './features/streaming/streaming.controller'
import { StreamingService } from './features/streaming/streaming.service'
import { DEFAULT_STREAMING, type StreamingOptions } from './features/streaming/streaming.options'
import { frontendController } from './features/frontend/frontend.controller'
import { FrontendService } from './features/frontend/frontend.service'
import { CompiledScopes } from './features/evaluation/compiled-scopes'
import { ofrepController } from './features/ofrep/ofrep.controller'
import { OfrepChannels } from './features/ofrep/ofrep.events'
import { environmentsController } from './features/environments/environments.controller'
import { createEnvironment, EnvironmentsService } from './features/environments/environments.service'
import { eventsController } from './features/events/events.controller'
import { exportImportController } from './features/export-import/export-import.controller'
import { ExportImportService } from './features/export-import/export-import.service'
import { EventsService } from './features/events/events.service'
import type { CheckPace } from './features/events/search/event-search.messages'
import { flagsController } from './features/flags/flags.controller'
import { FlagsService } from './features/flags/flags.service'
import { bulkController } from './features/flags/bulk.controller'
import { FlagBulkService } from './features/flags/bulk.service'
import { relationsController } from './features/flags/relations.controller'
import { RelationsService } from './features/flags/relations.service'
import { strategiesController } from './features/flags/strategies.controller'
import { StrategiesService } from './features/flags/strategies.service'
import { variantsController } from './features/flags/variants.controller'
import { VariantsService } from './features/flags/variants.service'
import { metricsController } from './features/metrics/metrics.controller'
import { MetricsService } from './features/metrics/metrics.service'
import { NamingPatterns } from './features/projects/naming-pattern'
import { playgroundController } from './features/playground/playground.controller'
import { PlaygroundService } from './features/playground/playground.service'
import { projectsController } from './features/projects/projects.controller'
import { createProject, DEFAULT_PROJECT, ProjectsService } from './features/projects/projects.service'
import { segmentsController } from './features/segments/segments.controller'
import { checkStrategySegments, SegmentsService } from './features/segments/segments.service'
import { strategyTypesController } from './features/strategy-types/strategy-types.controller'
import { StrategyTypesService } from './features/strategy-types/strategy-types.service'
import { contextController } from './features/context/context.controller'
import { ContextService } from './features/context/context.service'
import { flagTypesController } from './features/feature-types/feature-types.controller'
import { FlagTypesService } from './features/feature-types/feature-types.service'
import { tagTypesController } from './features/tag-types/tag-types.controller'
import { TagTypesService } from './features/tag-types/tag-types.service'
import type { Authorization } from './features/tokens/auth'
import { tokensController } from './features/tokens/tokens.controller'
import { TokensService } from './features/tokens/tokens.service'
import { sessionsController, usersController } from './features/users/users.controller'
import { DEFAULT_SESSION_OPTIONS, SessionsService, type SessionOptions } from './features/users/sessions.service'
import { UsersService } from './features/users/users.service'
import { LoginThrottle } from './features/users/login-throttle'
import { addonsController } from './features/addons/addons.controller'
import { DEFAULT_DISPATCH, Dispatcher, type DispatchOptions } from './features/addons/addons.dispatcher'
import { Outbox } from './features/addons/addons.outbox'
import { AddonsService } from './features/addons/addons.service'
import {
  personalTokensController,
  serviceAccountsController,
} from './features/personal-tokens/personal-tokens.controller'
import { PersonalTokensService } from './features/personal-tokens/personal-tokens.service'
import { ServiceAccountsService } from './features/personal-tokens/service-accounts.service'
import { ssoController, ssoSettingsController } from './features/sso/sso.controller'
import { SsoService } from './features/sso/sso.service'
import { SsoSettings } from './features/sso/sso.settings'
import type { SsoEnvironment } from './features/sso/sso.options'
import { changeRequestsController } from './features/change-requests/change-requests.controller'
import { changeRequestRule, type AdminTokenPolicy } from './features/change-requests/change-requests.rule'
import { ChangeRequestsService } from './features/change-requests/change-requests.service'
import { ChangeRequestScheduler } from './features/change-requests/change-requests.schedule'

export { EVENTS_FILE, JOURNAL_FILE, KEY_FILE, STATE_FILE }

/**
 * Each feature's HTTP side: its controllers over the services, keyed by the names of the one list of
 * features (feature-list.ts), which gives their order. A new feature adds its entry there, its
 * controllers here, and its service, if it has one, to `createServices` below.
 */
export const CONTROLLERS: {
  readonly [feature in FeatureName]: (services: Services, auth: Authorization) => readonly AnyElysia[]
} = {
  projects: (s, auth) => [projectsController(s.projects, s.environments, auth)],
  environments: (s, auth) => [environmentsController(s.environments, auth)],
  flags: (s, auth) => [
    flagsController(s.flags, auth),
    strategiesController(s.strategies, auth),
    relationsController(s.relations, auth),
    bulkController(s.bulk, auth),
    variantsController(s.variants, auth),
  ],
  events: (s, auth) => [eventsController(s.events, auth)],
  tokens: (s, auth) => [tokensController(s.tokens, auth)],
  segments: (s, auth) => [segmentsController(s.segments, auth)],
  client: (s, auth) => [clientController(s.client, auth), streamingController(s.streaming, s.live, auth)],
  strategyTypes: (s, auth) => [strategyTypesController(s.strategyTypes, auth)],
  tagTypes: (s, auth) => [tagTypesController(s.tagTypes, auth)],
  flagTypes: (s, auth) => [flagTypesController(s.flagTypes, auth)],
  context: (s, auth) => [contextController(s.context, auth)],
  exportImport: (s, auth) => [exportImportController(s.exportImport, auth)],
  metrics: (s, auth) => [metricsController(s.metrics, auth)],
  frontend: (s, auth) => [frontendController(s.frontend, auth)],
  playground: (s, auth) => [playgroundController(s.playground, auth)],
  users: (s, auth) => [usersController(s.users, auth), sessionsController(s.sessions, auth)],
  ofrep: (s, auth) => [ofrepController(s.scopes, auth, s.streaming, s.ofrepChannels)],
  addons: (s, auth) => [addonsController(s.addons, s.addonDispatcher, auth)],
  personalTokens: (s, auth) => [
    personalTokensController(s.personalTokens, auth),
    serviceAccountsController(s.serviceAccounts, s.personalTokens, auth),
  ],
  sso: (s, auth) => [ssoController(s.sso, auth), ssoSettingsController(s.sso, auth)],
  changeRequests: (s, auth) => [changeRequestsController(s.changeRequests, auth)],
}

export interface ServiceOptions {
  /** How often SDK metrics and registrations are committed, in ms (`METRICS_FLUSH_MS`). */
  metricsFlushMs?: number
  /** The SDK metrics' clock (benchmarks fill 48 hours of usage history with it); the system clock by default. */
  metricsClock?: () => Date
  /** Sessions' lifetime and cookie settings, and the sign-in throttle's limits. */
  session?: SessionOptions
  /** Single sign-on's settings from the environment (`OIDC_*`, `PASSWORD_SIGN_IN`, `UNLEASH_URL`). */
  sso?: SsoEnvironment
  /** Client API streams: the cap and the heartbeat (`STREAMING_MAX_STREAMS`, `STREAMING_HEARTBEAT_MS`). */
  streaming?: StreamingOptions
  /** Changed records kept for resuming streams and delta polls (`STREAMING_BUFFER_CHANGES`). */
  streamingBufferChanges?: number
  /** How many events back the console's live channel replays on a reconnect (live.ts REPLAY_EVENTS; tests make it small). */
  liveReplayEvents?: number
  /** Events per search segment file (tests make it small; see features/events/search/segmented-search.ts). */
  segmentEvents?: number
  /** Pace of the background check of the search segments' checksums (tests slow it down; see features/events/search/segment-files.ts). */
  segmentCheck?: CheckPace
  /** `SEARCH_CACHE_DIR`: where an instance on PostgreSQL keeps its copy of the event log for search (features/events/search/log-cache.ts). */
  searchCacheDir?: string | null
  /** Bounds of one event search (features/events/search/search-work.ts); tests make them small. */
  search?: { readBackLimit?: number; searchLimitMs?: number }
  /** How integrations send (features/addons/addons.dispatcher.ts): retry base, deadline, targets, public URL. */
  addons?: Partial<DispatchOptions>
  /** `CHANGE_REQUESTS_FOR_ADMIN_TOKENS`: whether admin API tokens skip change requests (the default) or not. */
  changeRequestsForAdminTokens?: AdminTokenPolicy
}

/** Every service, built over the one store: a feature with a service adds it here. */
export function createServices(store: Store, options: ServiceOptions = {}) {
  const patterns = new NamingPatterns(store)
  // Flags show when metrics last saw them, so the metrics service comes first.
  const metrics = new MetricsService(store, options.metricsFlushMs, options.metricsClock)
  const flags = new FlagsService(store, patterns, metrics)
  const strategies = new StrategiesService(store, checkStrategySegments)
  const relations = new RelationsService(store)
  const users = new UsersService(store)
  const changes = new ChangeFeed(store, options.streamingBufferChanges)
  const session = options.session ?? DEFAULT_SESSION_OPTIONS
  // The frontend API and OFREP evaluate the same compiled scopes.
  const scopes = new CompiledScopes(store)
  const streaming = new StreamingService(store, changes, options.streaming ?? DEFAULT_STREAMING)
  const outbox = new Outbox(store)
  const ssoSettings = new SsoSettings(store, options.sso)
  const sessions = new SessionsService(
    store,
    users,
    session,
    new LoginThrottle(session.throttle, store.log.failures),
    () => ssoSettings.passwordSignInOff(),
  )
  const adminTokens = options.changeRequestsForAdminTokens ?? 'skip'
  store.addRule(changeRequestRule(() => adminTokens))
  return {
    store,
    patterns,
    tokens: new TokensService(store),
    projects: new ProjectsService(store),
    environments: new EnvironmentsService(store),
    flags,
    strategies,
    segments: new SegmentsService(store),
    bulk: new FlagBulkService(store),
    variants: new VariantsService(store),
    relations,
    exportImport: new ExportImportService(store, { flags, strategies, relations }),
    events: new EventsService(store, {
      segmentEvents: options.segmentEvents,
      cacheDir: options.searchCacheDir,
      check: options.segmentCheck,
      ...options.search,
    }),
    client: new ClientFeaturesService(store),
    changes,
    streaming,
    live: new LiveChannel(store, streaming, undefined, options.liveReplayEvents),
    ofrepChannels: new OfrepChannels(store),
    strategyTypes: new StrategyTypesService(store),
    tagTypes: new TagTypesService(store),
    flagTypes: new FlagTypesService(store),
    context: new ContextService(store),
    metrics,
    scopes,
    frontend: new FrontendService(scopes),
    playground: new PlaygroundService(store),
    users,
    addons: new AddonsService(store, outbox),
    addonDispatcher: new Dispatcher(store, outbox, { ...DEFAULT_DISPATCH, ...options.addons }),
    sessions,
    sso: new SsoService(store, ssoSettings, sessions),
    personalTokens: new PersonalTokensService(store),
    serviceAccounts: new ServiceAccountsService(store),
    changeRequests: new ChangeRequestsService(store, { strategies, relations }),
    changeRequestSchedule: new ChangeRequestScheduler(store, { strategies, relations }),
  }
}

export type Services = ReturnType<typeof createServices>

/** Stops the workers; the store is closed separately (see Store.close). */
export function stopWorkers(services: Pick<Services, 'events' | 'streaming' | 'addonDispatcher'>): void {
  services.addonDispatcher.close()
  services.streaming.close()
  services.events.close()
}

/**
 * On an empty store: environments development and production, and project default connected to
 * both. Then the admin tokens (see TokensService.bootstrap). Returns a generated secret to print once.
 */
export async function initialise(services: Services, initAdminTokens: readonly string[]): Promise<string | null> {
  const { store } = services
  if (store.state.lastEventId === 0 && Object.keys(store.state.projects).length === 0) {
    // One commit, so that a crash leaves either all of it or nothing (and the next start seeds again).
    await store.transact(SYSTEM_ACTOR, tx => {
      // Checked again where it counts: another instance on the same database may have seeded it meanwhile.
      if (store.state.lastEventId > 0 || tx.values('projects').length > 0) return
      createEnvironment(tx, { name: 'development', type: 'development', sortOrder: 100 })
      createEnvironment(tx, { name: 'production', type: 'production', sortOrder: 200 })
      createProject(tx, { id: DEFAULT_PROJECT, name: 'Default', description: 'Default project', featureNaming: null })
    })
  }
  return services.tokens.bootstrap(initAdminTokens)
}

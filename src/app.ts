/** Builds the HTTP application over the services; it never listens (server.ts does, tests use app.handle). */
import { Elysia, t } from 'elysia'
import type { Config } from './config'
import { Logger } from './log'
import { metricsRoute, Metrics } from './http/metrics'
import { clientAddress, requestLogging } from './http/request-log'
import { securityHeaders } from './http/security-headers'
import { swaggerUi } from './http/swagger-ui'
import { consoleUi } from './http/console'
import { authorization, unknownApiPath } from './features/tokens/auth'
import { requestAuthenticator } from './features/users/request-auth'
import { FRONTEND_PREFIX } from './features/frontend/frontend.controller'
import { OFREP_PREFIX, ofrepErrors } from './features/ofrep/ofrep.errors'
import { bodyHandling } from './http/body'
import { browserCors } from './http/cors'
import { ServiceStarting, StoreFailedError } from './errors'
import { errorHandling } from './http/errors'
import { AllowedMethods, dotSegmentGuard } from './http/routing'
import { errors } from './http/schemas'
import { OPENAPI_PATH, openApiDocument } from './http/openapi'
import { settleResponseSchemas } from './http/response-schemas'
import { ELYSIA_CONFIG, setHeadersIntoResponses } from './http/plugins'
import { FEATURE_NAMES } from './feature-list'
import { CONTROLLERS, type Services } from './services'

export const API_VERSION = '0.1.0'

/** What only the server knows about a request (server.ts gives it; `app.handle` alone has no socket). */
export interface ServerHooks {
  /** The socket's peer address, for the request log. */
  socketAddress?: (request: Request) => string | undefined
}

export function createApp(
  services: Services,
  config: Pick<Config, 'bodyLimit'> &
    Partial<Pick<Config, 'trustProxy' | 'frontendCorsOrigins' | 'basePath' | 'metricsToken'>>,
  log: Logger = new Logger('silent'),
  server: ServerHooks = {},
) {
  // A request's caller: its API token, else its session cookie (a signed-in user).
  const authenticate = requestAuthenticator(services.tokens, services.sessions, [services.personalTokens])
  const auth = authorization(authenticate, name => services.store.reader.get('flags', name)?.project)
  const metrics = new Metrics(services.store, services)
  const basePath = config.basePath ?? ''
  // Read when a request first misses every route, by then from the whole app (made below).
  const allowed = new AllowedMethods((): readonly { method: string; path: string }[] => root.routes)
  const app = new Elysia(ELYSIA_CONFIG)
    .use(requestLogging(log, metrics, clientAddress(server.socketAddress, config.trustProxy ?? false)))
    .use(securityHeaders())
    .use(errorHandling(log, unknownApiPath(authenticate, basePath), allowed, [ofrepErrors(basePath)]))
    .use(dotSegmentGuard(basePath))
    .use(browserCors(config.frontendCorsOrigins ?? ['*'], basePath, [FRONTEND_PREFIX, OFREP_PREFIX]))
    .use(swaggerUi('Feature flag admin API', basePath))
    .use(bodyHandling(config.bodyLimit))
    .use(setHeadersIntoResponses())
    .get('/health', () => ({ health: 'GOOD' }), {
      response: {
        200: t.Object(
          { health: t.String({ description: 'GOOD while the process serves requests' }) },
          { description: 'Liveness' },
        ),
      },
      detail: { operationId: 'getHealth', summary: 'Is the process alive', tags: ['Operational'] },
    })
    .get(
      '/ready',
      async () => {
        if (!services.events.ready) throw new ServiceStarting('The event log is still loading')
        const problem = await services.store.recheck()
        if (problem) throw new StoreFailedError(`Writes cannot be made durable: ${problem}`)
        return { ready: true, searchIndexReady: services.events.indexReady }
      },
      {
        response: {
          200: t.Object(
            {
              ready: t.Boolean({
                description: 'true once the store and the event log are loaded, while writes can be made durable',
              }),
              searchIndexReady: t.Boolean({
                description: 'true once the free-text index covers the log (searches are exact either way)',
              }),
            },
            { description: 'Ready' },
          ),
          ...errors(503),
        },
        detail: { operationId: 'getReady', summary: 'Is the store loaded', tags: ['Operational'] },
      },
    )
    .use(metricsRoute(metrics, config.metricsToken ?? null))
  for (const feature of FEATURE_NAMES)
    for (const controller of CONTROLLERS[feature](services, auth)) app.use(controller)
  // Made from the routes themselves, all declared by then, when it is first asked for: a server
  // nobody asks holds none of its 440 KB.
  let document: ReturnType<typeof openApiDocument> | null = null
  const describe = () =>
    openApiDocument(app, {
      title: 'Feature flag admin API',
      description: 'An Unleash-compatible admin API for feature flags, stored in a data directory or on PostgreSQL.',
      version: API_VERSION,
      basePath,
    })
  app.get(OPENAPI_PATH, () => (document ??= describe()), { detail: { hide: true } })
  // Behind a reverse proxy everything is under BASE_URI_PATH: one prefix over every route, so routes,
  // the request log's and the metrics' route labels and the unknown-path answers all see the path
  // the client sent. `/` (the prefix itself) is the console.
  const root = new Elysia({ ...ELYSIA_CONFIG, prefix: basePath }).use(app).use(consoleUi(basePath))
  settleResponseSchemas(root)
  return root
}

export type App = ReturnType<typeof createApp>

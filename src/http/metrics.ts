/**
 * Prometheus metrics at `/internal-backstage/prometheus` (the path Unleash uses; open to anyone who
 * can reach the port unless `METRICS_TOKEN` is set, then only with `Authorization: Bearer <it>`), made with
 * prom-client (which Unleash uses too, so the process metrics have the names Unleash's and Node's
 * dashboards expect). Names follow Prometheus' conventions and, like Unleash's, have no prefix:
 * base units (`_seconds`, `_bytes`), `_total` only on counters.
 *
 * - per request: `http_requests_total{method,route,status}` and `http_request_duration_seconds{method,route}`;
 * - per commit: `store_commit_duration_seconds` and `events_written_total`;
 * - read from the store when scraped: `event_log_events`, `feature_flags{state}`, `projects`, `api_tokens`;
 * - read from the SDK APIs' caches when scraped: `sdk_answers_total{api,source}`;
 * - the process: prom-client's default metrics that tell the truth on Bun (see NOT_ON_BUN).
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { Elysia, t } from 'elysia'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { AuthenticationRequired } from '../errors'
import type { Store } from '../storage/store'
import { errors } from './schemas'

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
const BUCKET_KEYS = DURATION_BUCKETS.map(String)

/**
 * prom-client's default metrics that Bun does not back with real figures, checked on Bun 1.4:
 * VmData, which prom-client reports as the heap, is gigabytes of address space Bun reserves;
 * `heapTotal` comes out smaller than `heapUsed`; heap spaces are all zero; active handles,
 * requests and resources are always empty lists; no GC entries reach a PerformanceObserver; and the
 * "Node.js version" is the one Bun claims to be compatible with. Everything else is real: CPU
 * time, resident and virtual memory, open and maximum file descriptors, start time, the JS heap in
 * use, external memory and event-loop delay.
 */
export const NOT_ON_BUN = [
  'process_heap_bytes',
  'nodejs_heap_size_total_bytes',
  'nodejs_heap_space_size_total_bytes',
  'nodejs_heap_space_size_used_bytes',
  'nodejs_heap_space_size_available_bytes',
  'nodejs_active_resources',
  'nodejs_active_resources_total',
  'nodejs_active_handles',
  'nodejs_active_handles_total',
  'nodejs_active_requests',
  'nodejs_active_requests_total',
  'nodejs_gc_duration_seconds',
  'nodejs_version_info',
]

/**
 * The process's metrics belong to the process, not to an app: made once and shared by every app
 * in it (a test run makes hundreds, and each set of default metrics keeps an event-loop monitor).
 * The metrics Bun does not back are left out of the answer rather than unregistered, because
 * prom-client sets some metrics from another's collect (the JS heap in use from the heap total's).
 */
let processRegistry: Registry | undefined
const hidden = new Set(NOT_ON_BUN)

function processRegistryOnce(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

async function processMetrics(): Promise<string> {
  // One block per metric, each starting "# HELP <name> ", separated by blank lines.
  const blocks = (await processRegistryOnce().metrics()).split('\n\n')
  return blocks
    .filter(block => !hidden.has(block.slice('# HELP '.length, block.indexOf(' ', '# HELP '.length))))
    .join('\n\n')
}

/** How the SDK APIs found their answers since the start (client/client.service.ts, flags/scope-cache.ts). */
export interface SdkAnswerSources {
  client: { stats: { kept: number; filtered: number; compiled: number } }
  frontend: { stats: { hits: number; builds: number } }
}

/**
 * A request's series, found once: the counter's and the histogram's own entries, updated in place
 * as prom-client's `inc` and `observe` update them. Through prom-client's label children each
 * request checked and hashed its labels twice (4 to 5 % of the server's CPU on an SDK GET, measured
 * with bun --cpu-prof); here it adds to three numbers. Where the entries cannot be found (another
 * prom-client), the label children are used.
 */
interface Observer {
  counted: { value: number } | null
  timed: { bucketValues: Record<number, number>; sum: number; count: number } | null
  counter: { inc: () => void }
  histogram: { observe: (seconds: number) => void }
}

type Entries<T> = { hashMap?: Record<string, T & { labels: Record<string, string | number> }> }

/** prom-client's entry for `labels` (made by `zero` or `inc(…, 0)`), or null. */
function entryOf<T>(metric: object, labels: Record<string, string>): T | null {
  const map = (metric as Entries<T>).hashMap
  if (!map) return null
  for (const hash in map) {
    const entry = map[hash]!
    const keys = Object.keys(entry.labels)
    if (keys.length === Object.keys(labels).length && keys.every(key => String(entry.labels[key]) === labels[key]))
      return entry
  }
  return null
}

export class Metrics {
  private readonly registry = new Registry()
  private readonly requests: Counter<'method' | 'route' | 'status'>
  private readonly requestDurations: Histogram<'method' | 'route'>
  /** One bound pair per method, route and status: labels are looked up once, not per request. */
  private readonly observers = new Map<string | null, Map<string, Observer>>()

  constructor(store: Pick<Store, 'state' | 'lastEventId' | 'onCommitTimed' | 'onCommit'>, sdk?: SdkAnswerSources) {
    processRegistryOnce() // starts the event-loop delay monitor, so the first scrape has figures
    const registers = [this.registry]
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'Requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    })
    this.requestDurations = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer a request, by method and route pattern',
      labelNames: ['method', 'route'],
      buckets: DURATION_BUCKETS,
      registers,
    })
    const commits = new Histogram({
      name: 'store_commit_duration_seconds',
      help: 'Time to make a batch of writes durable (event log and journal, with fsync)',
      buckets: DURATION_BUCKETS,
      registers,
    })
    store.onCommitTimed(seconds => commits.observe(seconds))
    // A counter, so that rate() gives events per second; the log's size is the gauge below.
    const written = new Counter({
      name: 'events_written_total',
      help: 'Events appended to the event log since the service started',
      registers,
    })
    store.onCommit(events => written.inc(events.length))
    new Gauge({
      name: 'event_log_events',
      help: 'Events in the event log',
      registers,
      collect() {
        this.set(store.lastEventId)
      },
    })
    new Gauge({
      name: 'feature_flags',
      help: 'Flags, by state',
      labelNames: ['state'],
      registers,
      collect() {
        let archived = 0
        const flags = Object.values(store.state.flags)
        for (const flag of flags) if (flag.archived) archived++
        this.set({ state: 'live' }, flags.length - archived)
        this.set({ state: 'archived' }, archived)
      },
    })
    new Gauge({
      name: 'projects',
      help: 'Projects',
      registers,
      collect() {
        this.set(Object.keys(store.state.projects).length)
      },
    })
    if (sdk) {
      new Counter({
        name: 'sdk_answers_total',
        help:
          'SDK API answers by where they came from: kept (cached as is), filtered (a query filter applied to the kept token scope), ' +
          'compiled (the token scope made from the flags, the costly case)',
        labelNames: ['api', 'source'],
        registers,
        collect() {
          const counts = {
            client: { ...sdk.client.stats },
            frontend: { kept: sdk.frontend.stats.hits, compiled: sdk.frontend.stats.builds },
          }
          this.reset()
          for (const [api, sources] of Object.entries(counts))
            for (const [source, count] of Object.entries(sources)) this.inc({ api, source }, count)
        },
      })
    }
    new Gauge({
      name: 'api_tokens',
      help: 'API tokens',
      registers,
      collect() {
        this.set(Object.keys(store.state.tokens).length)
      },
    })
  }

  /** `route` is the route pattern (null for unknown paths), so the series stay few. */
  observeRequest(method: string, route: string | null, status: number, seconds: number) {
    // Found by the route (the same string each time), then the method and status: no key is made per request.
    let byRoute = this.observers.get(route)
    if (byRoute === undefined) this.observers.set(route, (byRoute = new Map()))
    const methodStatus = `${method} ${status}`
    let observer = byRoute.get(methodStatus)
    if (observer === undefined) byRoute.set(methodStatus, (observer = this.observerOf(method, route, status)))
    if (observer.counted && observer.timed) {
      observer.counted.value += 1
      const timed = observer.timed
      timed.sum += seconds
      timed.count += 1
      for (let index = 0; index < DURATION_BUCKETS.length; index++)
        if (seconds <= DURATION_BUCKETS[index]) {
          // Keyed as prom-client keys them, by the bound's text: made once, not per observation.
          timed.bucketValues[BUCKET_KEYS[index] as unknown as number]! += 1
          break
        }
    } else {
      observer.counter.inc()
      observer.histogram.observe(seconds)
    }
  }

  private observerOf(method: string, route: string | null, status: number): Observer {
    const labels = { method, route: route ?? 'unmatched' }
    const counted = { ...labels, status: String(status) }
    this.requests.inc(counted, 0)
    // The histogram's series is shared by every status: made only if no status made it before.
    let timed = entryOf<NonNullable<Observer['timed']>>(this.requestDurations, labels)
    if (timed === null) {
      this.requestDurations.zero(labels)
      timed = entryOf(this.requestDurations, labels)
    }
    const observer: Observer = {
      counted: entryOf(this.requests, counted),
      timed,
      counter: this.requests.labels(counted),
      histogram: this.requestDurations.labels(labels),
    }
    return observer
  }

  /** The exposition text: the process's metrics, then this app's. */
  async render(): Promise<string> {
    const [process, app] = await Promise.all([processMetrics(), this.registry.metrics()])
    return `${process.trimEnd()}\n\n${app}`
  }

  get contentType(): string {
    return this.registry.contentType
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest()

/**
 * The metrics route; with `token` (`METRICS_TOKEN`) a scrape must send `Authorization: Bearer
 * <token>` (Prometheus' `authorization: { credentials: … }`), compared in constant time.
 */
export function metricsRoute(metrics: Metrics, token: string | null = null) {
  const expected = token === null ? null : digest(`Bearer ${token}`)
  return new Elysia({ name: 'metrics' }).get(
    '/internal-backstage/prometheus',
    async ({ request }) => {
      if (expected !== null && !timingSafeEqual(digest(request.headers.get('authorization') ?? ''), expected)) {
        throw new AuthenticationRequired('METRICS_TOKEN is set: send it as "Authorization: Bearer <METRICS_TOKEN>"')
      }
      return new Response(await metrics.render(), { headers: { 'content-type': metrics.contentType } })
    },
    {
      response: {
        200: t.String({ description: 'Metrics in the Prometheus text exposition format, version 0.0.4' }),
        ...errors(401),
      },
      detail: {
        operationId: 'getPrometheusMetrics',
        summary:
          'Metrics in Prometheus text format (with METRICS_TOKEN set, send Authorization: Bearer <it>; otherwise no token)',
        tags: ['Operational'],
      },
    },
  )
}

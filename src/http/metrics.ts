/**
 * Prometheus metrics at `/internal-backstage/prometheus` (the path Unleash uses; open to anyone who
 * can reach the port unless `METRICS_TOKEN` is set, then only with `Authorization: Bearer <it>`),
 * written by our own small registry (prometheus.ts). Names follow Prometheus' conventions and, like
 * Unleash's, have no prefix: base units (`_seconds`, `_bytes`), `_total` only on counters.
 *
 * - per request: `http_requests_total{method,route,status}` and `http_request_duration_seconds{method,route}`;
 * - per commit: `store_commit_duration_seconds` and `events_written_total`;
 * - read from the store when scraped: `event_log_events`, `feature_flags{state}`, `projects`, `api_tokens`;
 * - read from the SDK APIs' caches when scraped: `sdk_answers_total{api,source}`;
 * - the process: the metrics of process-metrics.ts, under prom-client's default metrics' names.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { Elysia, t } from 'elysia'
import { AuthenticationRequired } from '../errors'
import type { Store } from '../storage/store'
import { processMetricsOnce } from './process-metrics'
import { lateResponse } from './plugins'
import {
  CONTENT_TYPE,
  type Counter,
  type CounterSeries,
  type Histogram,
  type HistogramSeries,
  Registry,
} from './prometheus'
import { errors } from './schemas'

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

/** How the SDK APIs found their answers since the start (client/client.service.ts, flags/scope-cache.ts). */
export interface SdkAnswerSources {
  client: { stats: { kept: number; filtered: number; compiled: number } }
  frontend: { stats: { hits: number; builds: number } }
}

/** A request's two series, found once per method, route and status. */
interface Observer {
  counted: CounterSeries
  timed: HistogramSeries
}

export class Metrics {
  private readonly registry = new Registry()
  private readonly requests: Counter
  private readonly requestDurations: Histogram
  /** Observers by route, method and status: found without making a key per request. */
  private readonly observers = new Map<string | null, Map<string, Map<number, Observer>>>()
  private readonly processMetrics = processMetricsOnce() // starts the event-loop delay monitor

  constructor(store: Pick<Store, 'state' | 'lastEventId' | 'onCommitTimed' | 'onCommit'>, sdk?: SdkAnswerSources) {
    const registry = this.registry
    this.requests = registry.counter('http_requests_total', 'Requests answered, by method, route pattern and status')
    this.requestDurations = registry.histogram(
      'http_request_duration_seconds',
      'Time to answer a request, by method and route pattern',
      DURATION_BUCKETS,
    )
    const commits = registry
      .histogram(
        'store_commit_duration_seconds',
        'Time to make a batch of writes durable (event log and journal, with fsync)',
        DURATION_BUCKETS,
      )
      .series()
    store.onCommitTimed(seconds => commits.observe(seconds))
    // A counter, so that rate() gives events per second; the log's size is the gauge below.
    const written = registry
      .counter('events_written_total', 'Events appended to the event log since the service started')
      .series()
    store.onCommit(events => {
      written.value += events.length
    })
    registry.collected('gauge', 'event_log_events', 'Events in the event log', () => store.lastEventId)
    registry.collected('gauge', 'feature_flags', 'Flags, by state', () => {
      let archived = 0
      const flags = Object.values(store.state.flags)
      for (const flag of flags) if (flag.archived) archived++
      return [
        [{ state: 'live' }, flags.length - archived],
        [{ state: 'archived' }, archived],
      ]
    })
    registry.collected('gauge', 'projects', 'Projects', () => Object.keys(store.state.projects).length)
    if (sdk) {
      registry.collected(
        'counter',
        'sdk_answers_total',
        'SDK API answers by where they came from: kept (cached as is), filtered (a query filter applied to the kept token scope), ' +
          'compiled (the token scope made from the flags, the costly case)',
        () => {
          const { client, frontend } = sdk
          return [
            [{ api: 'client', source: 'kept' }, client.stats.kept],
            [{ api: 'client', source: 'filtered' }, client.stats.filtered],
            [{ api: 'client', source: 'compiled' }, client.stats.compiled],
            [{ api: 'frontend', source: 'kept' }, frontend.stats.hits],
            [{ api: 'frontend', source: 'compiled' }, frontend.stats.builds],
          ]
        },
      )
    }
    registry.collected('gauge', 'api_tokens', 'API tokens', () => Object.keys(store.state.tokens).length)
  }

  /** `route` is the route pattern (null for unknown paths), so the series stay few. */
  observeRequest(method: string, route: string | null, status: number, seconds: number) {
    let byMethod = this.observers.get(route)
    if (byMethod === undefined) this.observers.set(route, (byMethod = new Map()))
    let byStatus = byMethod.get(method)
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()))
    let observer = byStatus.get(status)
    if (observer === undefined) byStatus.set(status, (observer = this.observerOf(method, route, status)))
    observer.counted.value += 1
    observer.timed.observe(seconds)
  }

  private observerOf(method: string, route: string | null, status: number): Observer {
    const labels = { method, route: route ?? 'unmatched' }
    return {
      counted: this.requests.series({ ...labels, status: String(status) }),
      // Shared by every status of the method and route.
      timed: this.requestDurations.series(labels),
    }
  }

  /** The exposition text: the process's metrics, then this app's. */
  async render(): Promise<string> {
    return `${await this.processMetrics()}\n\n${this.registry.render()}\n`
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
      // Made after a turn of the event loop (the loop's lag is measured), so sent as a late answer.
      return lateResponse(await metrics.render(), CONTENT_TYPE)
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

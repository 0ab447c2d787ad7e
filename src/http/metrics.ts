/**
 * Prometheus metrics at `/internal-backstage/prometheus` (the path Unleash uses), in the text
 * exposition format: requests and their durations per route and status, commit latency, and
 * gauges of events, flags, projects and tokens read from the store when scraped.
 */
import { Elysia, t } from 'elysia'
import type { Store } from '../storage/store'

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

class Histogram {
  private readonly series = new Map<string, { labels: string; buckets: number[]; sum: number; count: number }>()

  constructor(private readonly bounds: number[]) {}

  observe(labels: string, value: number) {
    let series = this.series.get(labels)
    if (!series) this.series.set(labels, (series = { labels, buckets: this.bounds.map(() => 0), sum: 0, count: 0 }))
    for (let i = 0; i < this.bounds.length; i++) if (value <= this.bounds[i]) series.buckets[i]++
    series.sum += value
    series.count++
  }

  render(name: string, help: string): string[] {
    const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`]
    for (const { labels, buckets, sum, count } of this.series.values()) {
      const prefix = labels ? `${labels},` : ''
      this.bounds.forEach((bound, i) => lines.push(`${name}_bucket{${prefix}le="${bound}"} ${buckets[i]}`))
      lines.push(`${name}_bucket{${prefix}le="+Inf"} ${count}`)
      lines.push(`${name}_sum${labels ? `{${labels}}` : ''} ${sum}`)
      lines.push(`${name}_count${labels ? `{${labels}}` : ''} ${count}`)
    }
    return lines
  }
}

/** A label value, escaped as the exposition format asks. */
function label(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

export class Metrics {
  private readonly requests = new Map<string, number>()
  private readonly requestDurations = new Histogram(DURATION_BUCKETS)
  private readonly commitDurations = new Histogram(DURATION_BUCKETS)
  /** Escaped label text per method and route, made once: this runs for every request. */
  private readonly routeLabels = new Map<string, string>()

  constructor(private readonly store: Pick<Store, 'state' | 'lastEventId' | 'onCommitTimed'>) {
    store.onCommitTimed((seconds) => this.commitDurations.observe('', seconds))
  }

  /** `route` is the route pattern (null for unknown paths), so the series stay few. */
  observeRequest(method: string, route: string | null, status: number, seconds: number) {
    const key = `${method} ${route}`
    let routeLabels = this.routeLabels.get(key)
    if (routeLabels === undefined) this.routeLabels.set(key, (routeLabels = `method="${label(method)}",route="${label(route ?? 'unmatched')}"`))
    const labels = `${routeLabels},status="${status}"`
    this.requests.set(labels, (this.requests.get(labels) ?? 0) + 1)
    this.requestDurations.observe(routeLabels, seconds)
  }

  render(): string {
    const state = this.store.state
    const flags = Object.values(state.flags)
    const archived = flags.filter((flag) => flag.archived).length
    const lines = ['# HELP http_requests_total Requests answered, by method, route pattern and status', '# TYPE http_requests_total counter']
    for (const [labels, count] of this.requests) lines.push(`http_requests_total{${labels}} ${count}`)
    lines.push(...this.requestDurations.render('http_request_duration_seconds', 'Time to answer a request, by method and route pattern'))
    lines.push(...this.commitDurations.render('store_commit_duration_seconds', 'Time to make a batch of writes durable (event log and journal, with fsync)'))
    lines.push('# HELP events_total Events in the event log', '# TYPE events_total gauge', `events_total ${this.store.lastEventId}`)
    lines.push(
      '# HELP feature_flags Flags, by state',
      '# TYPE feature_flags gauge',
      `feature_flags{state="live"} ${flags.length - archived}`,
      `feature_flags{state="archived"} ${archived}`,
    )
    lines.push('# HELP projects Projects', '# TYPE projects gauge', `projects ${Object.keys(state.projects).length}`)
    lines.push('# HELP api_tokens API tokens', '# TYPE api_tokens gauge', `api_tokens ${Object.keys(state.tokens).length}`)
    return lines.join('\n') + '\n'
  }
}

export function metricsRoute(metrics: Metrics) {
  return new Elysia({ name: 'metrics' }).get(
    '/internal-backstage/prometheus',
    () => new Response(metrics.render(), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' } }),
    {
      response: { 200: t.String({ description: 'Metrics in the Prometheus text exposition format, version 0.0.4' }) },
      detail: { operationId: 'getPrometheusMetrics', summary: 'Metrics in Prometheus text format (no token needed)', tags: ['Operational'] },
    },
  )
}

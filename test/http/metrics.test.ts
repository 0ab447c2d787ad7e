/** Prometheus metrics at /internal-backstage/prometheus. */
import { afterEach, expect, test } from 'bun:test'
import { ConfigError, readConfig } from '../../src/config'
import { Metrics } from '../../src/http/metrics'
import { NOT_ON_BUN } from '../../src/http/process-metrics'
import { createApp } from '../../src/app'
import { BODY_LIMIT, makeApi, type Api } from '../helpers'

let api: Api
afterEach(async () => api?.close())

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find(l => l.startsWith(series + ' '))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

test('requests are counted per method, route pattern and status, with a duration histogram', async () => {
  api = await makeApi()
  await api.get('/health')
  await api.get('/health')
  await api.getFlag('default', 'missing-flag')
  await api.get('/no/such/route')
  await Bun.sleep(5)
  const response = await api.get('/internal-backstage/prometheus', { token: null })
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toStartWith('text/plain; version=0.0.4')
  const text = response.text
  expect(value(text, 'http_requests_total{method="GET",route="/health",status="200"}')).toBe(2)
  expect(
    value(
      text,
      'http_requests_total{method="GET",route="/api/admin/projects/:projectId/features/:featureName",status="404"}',
    ),
  ).toBe(1)
  expect(value(text, 'http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1)
  expect(value(text, 'http_request_duration_seconds_count{method="GET",route="/health"}')).toBe(2)
  expect(value(text, 'http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/health"}')).toBe(2)
  expect(text).toContain('# TYPE http_request_duration_seconds histogram')
})

test('request series read exactly as counting each request by hand gives them', async () => {
  const store = { state: { flags: {}, projects: {}, tokens: {} }, lastEventId: 0, onCommitTimed() {}, onCommit() {} }
  const metrics = new Metrics(store as unknown as ConstructorParameters<typeof Metrics>[0])
  const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
  const seen: [string, string | null, number, number][] = [
    ['GET', '/a', 200, 0.0004],
    ['GET', '/a', 304, 0.001],
    ['GET', '/a', 200, 0.03],
    ['POST', '/a', 400, 7],
    ['GET', null, 404, 0.0025],
    ['GET', '/a', 304, 0.2],
  ]
  // What Prometheus' format says the series are: a count per method, route and status; per
  // method and route, each bucket counts the observations at most its bound, +Inf all of them.
  const expected: string[] = []
  const requests = new Map<string, number>()
  const durations = new Map<string, number[]>()
  for (const [method, route, status, seconds] of seen) {
    metrics.observeRequest(method, route, status, seconds)
    const labels = `method="${method}",route="${route ?? 'unmatched'}"`
    const counted = `http_requests_total{${labels},status="${status}"}`
    requests.set(counted, (requests.get(counted) ?? 0) + 1)
    durations.set(labels, [...(durations.get(labels) ?? []), seconds])
  }
  for (const [series, count] of requests) expected.push(`${series} ${count}`)
  for (const [labels, observed] of durations) {
    for (const bound of [...buckets.map(String), '+Inf']) {
      const count = observed.filter(seconds => seconds <= Number(bound === '+Inf' ? Infinity : bound)).length
      expected.push(`http_request_duration_seconds_bucket{le="${bound}",${labels}} ${count}`)
    }
    expected.push(`http_request_duration_seconds_sum{${labels}} ${observed.reduce((sum, s) => sum + s, 0)}`)
    expected.push(`http_request_duration_seconds_count{${labels}} ${observed.length}`)
  }
  const ours = (await metrics.render())
    .split('\n')
    .filter(line => line.startsWith('http_request'))
    .sort()
  expect(ours.length).toBeGreaterThan(30)
  expect(ours).toEqual(expected.sort())
})

test('commit latency, events written and in the log, flags, projects and tokens are reported', async () => {
  api = await makeApi()
  const scrape = async () => (await api.get('/internal-backstage/prometheus', { token: null })).text
  const written = value(await scrape(), 'events_written_total')!
  const before = api.lastEventId()
  await api.createFlag('default', 'metered')
  await api.createFlag('default', 'retired')
  await api.delete('/api/admin/projects/default/features/retired')
  const text = await scrape()
  expect(value(text, 'events_written_total')).toBe(written + api.lastEventId() - before)
  expect(value(text, 'event_log_events')).toBe(api.lastEventId())
  expect(text).toContain('# TYPE events_written_total counter')
  expect(text).toContain('# TYPE event_log_events gauge')
  expect(text).not.toMatch(/^events_total/m)
  expect(value(text, 'feature_flags{state="live"}')).toBe(1)
  expect(value(text, 'feature_flags{state="archived"}')).toBe(1)
  expect(value(text, 'projects')).toBe(1)
  expect(value(text, 'api_tokens')).toBe(1)
  // The first start's seeding, the token and the three writes above: at least five commits.
  expect(value(text, 'store_commit_duration_seconds_count')).toBeGreaterThanOrEqual(4)
  expect(text).toContain('store_commit_duration_seconds_bucket{le="0.005"}')
})

test('process metrics that Bun backs are reported, with real figures; the ones it does not are left out', async () => {
  api = await makeApi()
  const text = (await api.get('/internal-backstage/prometheus', { token: null })).text
  expect(value(text, 'process_cpu_seconds_total')).toBeGreaterThan(0)
  expect(value(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
  expect(value(text, 'process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 * 1024)
  expect(value(text, 'process_open_fds')).toBeGreaterThan(2)
  expect(value(text, 'process_max_fds')).toBeGreaterThanOrEqual(value(text, 'process_open_fds')!)
  const started = value(text, 'process_start_time_seconds')!
  expect(Math.abs(started - (Date.now() / 1000 - process.uptime()))).toBeLessThan(2)
  expect(value(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(1024 * 1024)
  // The event loop's lag is reported; its figures are checked in prometheus-format.test.ts.
  expect(text).toContain('# TYPE nodejs_eventloop_lag_p99_seconds gauge')
  for (const name of NOT_ON_BUN) expect(text).not.toContain(`# TYPE ${name} `)
})

test('every metric follows the naming conventions: _total only and always on counters, base units', async () => {
  api = await makeApi()
  await api.get('/health')
  await Bun.sleep(5)
  const text = (await api.get('/internal-backstage/prometheus', { token: null })).text
  const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name, type }))
  expect(types.length).toBeGreaterThan(15)
  for (const { name, type } of types) {
    expect({ name, total: name.endsWith('_total') }).toEqual({ name, total: type === 'counter' })
    expect(name).not.toMatch(/_(milliseconds|ms|microseconds|kilobytes|megabytes|percent)$/)
    expect(name).toMatch(/^[a-z_][a-z0-9_]*$/)
  }
  // Each series belongs to the metric declared above it.
  const names = new Set(types.map(t => t.name))
  for (const line of text.split('\n').filter(l => l !== '' && !l.startsWith('#'))) {
    const series = line.split(/[{ ]/)[0]
    expect(names.has(series) || names.has(series.replace(/_(bucket|sum|count)$/, ''))).toBe(true)
  }
})

test('with METRICS_TOKEN set the metrics answer only "Authorization: Bearer <it>"; unset they need no token', async () => {
  const token = 'scrape-secret-0123456789abcdef'
  api = await makeApi()
  // The same services served with METRICS_TOKEN, as main.ts serves them with the setting.
  const guarded = createApp(api.services, { bodyLimit: BODY_LIMIT, metricsToken: token })
  const scrape = async (authorization: string | null) => {
    const response = await guarded.handle(
      new Request('http://localhost/internal-backstage/prometheus', {
        headers: authorization === null ? {} : { authorization },
      }),
    )
    return { status: response.status, text: await response.text() }
  }
  const refusals: [string, string | null][] = [
    ['no header', null],
    ['an admin token', api.adminToken],
    ['the token without Bearer', token],
    ['another bearer token', `Bearer ${token}x`],
    ['a prefix of it', `Bearer ${token.slice(0, -1)}`],
  ]
  for (const [what, header] of refusals) {
    const refused = await scrape(header)
    expect({ what, status: refused.status }).toEqual({ what, status: 401 })
    expect(JSON.parse(refused.text)).toMatchObject({
      name: 'AuthenticationRequired',
      message: expect.stringContaining('Authorization: Bearer <METRICS_TOKEN>'),
    })
    expect(refused.text).not.toContain('http_requests_total')
  }
  const scraped = await scrape(`Bearer ${token}`)
  expect(scraped.status).toBe(200)
  expect(value(scraped.text, 'projects')).toBe(1)

  expect((await api.get('/internal-backstage/prometheus', { token: null })).status).toBe(200)
  expect((await api.get('/internal-backstage/prometheus', { token: 'Bearer anything-at-all-here' })).status).toBe(200)
})

test('METRICS_TOKEN is read trimmed, unset or blank is no token, and a short or spaced one stops the start', () => {
  expect(readConfig({}).metricsToken).toBeNull()
  expect(readConfig({ METRICS_TOKEN: '  ' }).metricsToken).toBeNull()
  expect(readConfig({ METRICS_TOKEN: ' 0123456789abcdef ' }).metricsToken).toBe('0123456789abcdef')
  for (const bad of ['short', 'sixteen chars but spaced', 'x'.repeat(257), 'ünïcødé-0123456789']) {
    expect(() => readConfig({ METRICS_TOKEN: bad })).toThrow(ConfigError)
    expect(() => readConfig({ METRICS_TOKEN: bad })).toThrow(
      /^METRICS_TOKEN must be 16 to 256 printable ASCII characters without spaces/,
    )
  }
})

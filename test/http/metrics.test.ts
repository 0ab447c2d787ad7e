/** Prometheus metrics at /internal-backstage/prometheus. */
import { afterEach, expect, test } from 'bun:test'
import { makeApi, type Api } from '../helpers'

let api: Api
afterEach(async () => api?.close())

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '))
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
  expect(value(text, 'http_requests_total{method="GET",route="/api/admin/projects/:projectId/features/:featureName",status="404"}')).toBe(1)
  expect(value(text, 'http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1)
  expect(value(text, 'http_request_duration_seconds_count{method="GET",route="/health"}')).toBe(2)
  expect(value(text, 'http_request_duration_seconds_bucket{method="GET",route="/health",le="+Inf"}')).toBe(2)
  expect(text).toContain('# TYPE http_request_duration_seconds histogram')
})

test('commit latency, events, flags, projects and tokens are reported', async () => {
  api = await makeApi()
  await api.createFlag('default', 'metered')
  await api.createFlag('default', 'retired')
  await api.delete('/api/admin/projects/default/features/retired')
  const text = (await api.get('/internal-backstage/prometheus', { token: null })).text
  expect(value(text, 'events_total')).toBe(api.lastEventId())
  expect(value(text, 'feature_flags{state="live"}')).toBe(1)
  expect(value(text, 'feature_flags{state="archived"}')).toBe(1)
  expect(value(text, 'projects')).toBe(1)
  expect(value(text, 'api_tokens')).toBe(1)
  // The first start's seeding, the token and the three writes above: at least five commits.
  expect(value(text, 'store_commit_duration_seconds_count')).toBeGreaterThanOrEqual(4)
  expect(text).toContain('store_commit_duration_seconds_bucket{le="0.005"}')
})

/**
 * The console's live channel, GET /api/admin/live: one `changed` message per committed event the
 * caller may see (with the event's id), `metrics` when SDK metrics change a flag's usage, for an
 * admin token or a session, scoped as the event search is; refused without credentials; ended
 * when the session ends; on PostgreSQL, changes made through another instance too.
 */
import { afterEach, expect, test } from 'bun:test'
import { asSession, expectError, makeApi, newUser, signIn, tokenFor, waitFor, type Api } from '../../helpers'
import { freshDatabase, ON_POSTGRES } from '../../test-store'
import { SseReader } from './sse'

const opened: Api[] = []
const readers: SseReader[] = []
afterEach(async () => {
  for (const reader of readers.splice(0)) await reader.cancel()
  for (const api of opened.splice(0)) await api.close()
})

async function app(options: Parameters<typeof makeApi>[0] = {}): Promise<Api> {
  const api = await makeApi(options)
  opened.push(api)
  return api
}

const request = (headers: Record<string, string>) => new Request('http://localhost/api/admin/live', { headers })

async function live(api: Api, headers: Record<string, string>): Promise<SseReader> {
  const response = await api.app.handle(request(headers))
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
  const reader = new SseReader(response)
  readers.push(reader)
  return reader
}

const changed = (reader: SseReader) =>
  reader.messages
    .filter(message => message.event === 'changed')
    .map(message => ({ id: Number(message.id), ...JSON.parse(message.data) }))
const usage = (reader: SseReader) =>
  reader.messages.filter(message => message.event === 'metrics').map(message => JSON.parse(message.data))

test('each event of a change made through the API arrives as `changed`, with its id, in order', async () => {
  const api = await app()
  const reader = await live(api, { authorization: api.adminToken })
  const since = api.lastEventId()
  await api.newFlag('default', 'alpha')
  expect((await api.post('/api/admin/projects/default/features/alpha/environments/development/on')).status).toBe(200)
  const written = await api.eventsAfter(since)
  expect(written.length).toBeGreaterThanOrEqual(2)
  await reader.until(() => changed(reader).length === written.length)
  expect(changed(reader)).toEqual(
    written
      .map(event => ({
        id: event.id,
        type: event.type,
        project: event.project ?? null,
        featureName: event.featureName ?? null,
        environment: event.environment ?? null,
      }))
      .sort((a, b) => a.id - b.id),
  )
  expect(changed(reader).map(message => message.type)).toContain('feature-environment-enabled')
})

test("a token limited to some projects hears of its projects' changes only, not another's nor the service-wide ones", async () => {
  const api = await app()
  await api.newProject('mine')
  await api.newProject('theirs')
  const scoped = await tokenFor(api, 'mine-admin', { projects: ['mine'] })
  const all = await live(api, { authorization: api.adminToken })
  const reader = await live(api, { authorization: scoped })
  await api.newFlag('theirs', 'hidden')
  await tokenFor(api, 'another-token')
  await api.newFlag('mine', 'shown')
  await reader.until(() => changed(reader).some(message => message.featureName === 'shown'))
  await all.until(() => changed(all).some(message => message.featureName === 'shown'))
  await reader.settle()
  expect(new Set(changed(reader).map(message => message.project))).toEqual(new Set(['mine']))
  expect(changed(all).map(message => message.featureName)).toContain('hidden')
  expect(changed(all).map(message => message.type)).toContain('api-token-created')
})

test('refused without credentials (401), with a bad token (401) and with an SDK token (403), as JSON', async () => {
  const api = await app()
  const client = await tokenFor(api, 'sdk', { type: 'client', environment: 'development' })
  for (const [headers, status, name] of [
    [{}, 401, 'AuthenticationRequired'],
    [{ authorization: 'nope' }, 401, 'AuthenticationRequired'],
    [{ authorization: client }, 403, 'NoAccessError'],
  ] as const) {
    const response = await api.app.handle(request(headers))
    const text = await response.text()
    expectError({ status: response.status, body: JSON.parse(text), text, headers: response.headers }, status, name)
  }
})

test('a signed-in session hears of changes; its stream ends once it signs out', async () => {
  const api = await app({ streaming: { maxStreams: 100, heartbeatMs: 200 } })
  await newUser(api, { username: 'bob', rootRole: 'Editor', password: 'Correct-horse-7' })
  const cookie = await signIn(api, 'bob', 'Correct-horse-7')
  const reader = await live(api, { cookie })
  await api.newFlag('default', 'alpha')
  await reader.until(() => changed(reader).some(message => message.featureName === 'alpha'))
  // An editor may not list tokens: it hears nothing of them.
  await tokenFor(api, 'secret-name')
  await api.newFlag('default', 'beta')
  await reader.until(() => changed(reader).some(message => message.featureName === 'beta'))
  expect(changed(reader).map(message => message.type)).not.toContain('api-token-created')
  expect((await api.post('/logout', undefined, asSession(cookie))).status).toBe(200)
  await reader.until(() => reader.ended)
  expect(api.services.streaming.streams).toBe(0)
})

test("SDK metrics that change a flag's usage are announced as `metrics`, to those who see its project", async () => {
  const api = await app()
  await api.newProject('theirs')
  await api.newFlag('default', 'alpha')
  const scoped = await tokenFor(api, 'theirs-admin', { projects: ['theirs'] })
  const client = await tokenFor(api, 'sdk', { type: 'client', environment: 'development' })
  const all = await live(api, { authorization: api.adminToken })
  const other = await live(api, { authorization: scoped })
  const body = { appName: 'web', bucket: { start: 0, stop: 0, toggles: { alpha: { yes: 1, no: 0 } } } }
  expect((await api.post('/api/client/metrics', body, { token: client })).status).toBe(202)
  await api.services.metrics.flush()
  await all.until(() => usage(all).length === 1)
  expect(usage(all)).toEqual([{ featureName: 'alpha', project: 'default' }])
  await other.settle()
  expect(usage(other)).toEqual([])
})

test.skipIf(!ON_POSTGRES)('on PostgreSQL, a change made through another instance arrives too', async () => {
  const database = await freshDatabase()
  const a = await app({ database })
  const b = await app({ database })
  const reader = await live(a, { authorization: a.adminToken })
  await b.newFlag('default', 'from-b')
  await reader.until(() => changed(reader).some(message => message.featureName === 'from-b'), 10_000)
  await waitFor(() => a.services.store.state.flags['from-b'] !== undefined, 'the flag on a')
  expect(changed(reader).find(message => message.featureName === 'from-b')).toMatchObject({
    type: 'feature-created',
    project: 'default',
  })
})

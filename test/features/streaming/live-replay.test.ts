/**
 * The console's live channel after a reconnect: a stream starts with `ready` and the last event
 * id; one opened with that id (Last-Event-ID, or `?lastEventId=`) is first sent the `changed`
 * messages for the events made meanwhile that its caller may see, or, past the replay bound, one
 * `reload`; on PostgreSQL, for the changes made through another instance too.
 */
import { expect, test } from 'bun:test'
import { cleanupAfterEach, makeApi, tokenFor, waitFor, type Api } from '../../helpers'
import { freshDatabase, ON_POSTGRES } from '../../test-store'
import { SseReader } from './sse'

const { later, newDir } = cleanupAfterEach()

async function app(options: Parameters<typeof makeApi>[0] = {}): Promise<Api> {
  const api = await makeApi(options)
  later(() => api.close())
  return api
}

/** Opens the live channel with `headers`, at `/api/admin/live` plus `query`, and reads up to its `ready` or `reload`. */
async function live(api: Api, headers: Record<string, string>, query = ''): Promise<SseReader> {
  const response = await api.app.handle(new Request(`http://localhost/api/admin/live${query}`, { headers }))
  expect(response.status).toBe(200)
  const reader = new SseReader(response)
  later(() => reader.cancel())
  await reader.until(() => reader.messages.some(message => message.event === 'ready' || message.event === 'reload'))
  return reader
}

/** The messages up to the first `ready` or `reload` (what the stream started with), as event, id and data. */
function start(reader: SseReader) {
  const end = reader.messages.findIndex(message => message.event === 'ready' || message.event === 'reload')
  return reader.messages
    .slice(0, end + 1)
    .map(message => ({ event: message.event, id: Number(message.id), data: JSON.parse(message.data) }))
}

/** What the `changed` messages for `events` say, in id order. */
const changedOf = (events: { id: number; type: string; project?: string | null; featureName?: string | null }[]) =>
  events
    .map(event => ({
      event: 'changed',
      id: event.id,
      data: {
        type: event.type,
        project: event.project ?? null,
        featureName: event.featureName ?? null,
        environment: (event as { environment?: string | null }).environment ?? null,
      },
    }))
    .sort((a, b) => a.id - b.id)

const ready = (id: number) => ({ event: 'ready', id, data: { lastEventId: id } })

test('a stream starts with `ready` and the last event id; reconnected with it, it gets the changes made while away, then live ones', async () => {
  const api = await app()
  const first = await live(api, { authorization: api.adminToken })
  const away = api.lastEventId()
  expect(start(first)).toEqual([ready(away)])
  await first.cancel()

  await api.newFlag('default', 'made-away')
  expect((await api.post('/api/admin/projects/default/features/made-away/environments/development/on')).status).toBe(
    200,
  )
  const missed = await api.eventsAfter(away)
  expect(missed.length).toBeGreaterThanOrEqual(2)

  const again = await live(api, { authorization: api.adminToken, 'last-event-id': String(away) })
  expect(start(again)).toEqual([...changedOf(missed), ready(api.lastEventId())])
  // Then changes arrive live, once each.
  await api.newFlag('default', 'made-after')
  await again.until(() => again.messages.some(message => message.data.includes('"made-after"')))
  const ids = again.messages.filter(message => message.event === 'changed').map(message => Number(message.id))
  expect(new Set(ids).size).toBe(ids.length)
  expect(ids).toEqual([...ids].sort((a, b) => a - b))

  // Nothing made since: only `ready`.
  const current = await live(api, { authorization: api.adminToken, 'last-event-id': String(api.lastEventId()) })
  expect(start(current)).toEqual([ready(api.lastEventId())])
})

test('the replay is scoped as event search: a token limited to a project gets its missed changes only (query parameter)', async () => {
  const api = await app()
  await api.newProject('mine')
  await api.newProject('theirs')
  const scoped = await tokenFor(api, 'mine-admin', { projects: ['mine'] })
  const away = api.lastEventId()
  await api.newFlag('theirs', 'hidden')
  await tokenFor(api, 'another-token')
  await api.newFlag('mine', 'shown')
  const missed = await api.eventsAfter(away)
  expect(missed.some(event => event.project === 'theirs')).toBe(true)

  const reader = await live(api, { authorization: scoped }, `?lastEventId=${away}`)
  expect(start(reader)).toEqual([
    ...changedOf(missed.filter(event => event.project === 'mine')),
    ready(api.lastEventId()),
  ])
  // The header wins over the query parameter (an EventSource reconnecting by itself sends the later one).
  const later = await live(
    api,
    { authorization: scoped, 'last-event-id': String(api.lastEventId()) },
    `?lastEventId=${away}`,
  )
  expect(start(later)).toEqual([ready(api.lastEventId())])
})

test('past the replay bound, or from before this instance heard, one `reload` with the last event id instead', async () => {
  const api = await app({ liveReplayEvents: 3 })
  const away = api.lastEventId()
  await api.newFlag('default', 'one')
  await api.newFlag('default', 'two')
  await api.newFlag('default', 'three')
  expect(api.lastEventId() - away).toBe(3)
  const within = await live(api, { authorization: api.adminToken, 'last-event-id': String(away) })
  expect(start(within).map(message => message.event)).toEqual(['changed', 'changed', 'changed', 'ready'])

  await api.newFlag('default', 'four')
  const past = await live(api, { authorization: api.adminToken, 'last-event-id': String(away) })
  expect(start(past)).toEqual([{ event: 'reload', id: api.lastEventId(), data: { lastEventId: api.lastEventId() } }])
  expect(past.messages.filter(message => message.event === 'changed')).toEqual([])

  // Many events kept past the bound (the kept ones are cut back): a near id still replays, a far one reloads.
  for (const name of ['five', 'six', 'seven', 'eight']) await api.newFlag('default', name)
  const near = await live(api, { authorization: api.adminToken, 'last-event-id': String(api.lastEventId() - 2) })
  expect(start(near).map(message => message.event)).toEqual(['changed', 'changed', 'ready'])
  const far = await live(api, { authorization: api.adminToken, 'last-event-id': String(api.lastEventId() - 4) })
  expect(start(far).map(message => message.event)).toEqual(['reload'])
})

test.skipIf(ON_POSTGRES)(
  'after a restart, an id from before it is answered `reload`: the new instance heard nothing before',
  async () => {
    const dataDir = newDir('live-restart-')
    const before = await makeApi({ dataDir })
    await before.newFlag('default', 'old')
    const away = before.lastEventId() - 1
    await before.close()
    const api = await app({ dataDir })
    const reader = await live(api, { authorization: api.adminToken, 'last-event-id': String(away) })
    expect(start(reader)).toEqual([
      { event: 'reload', id: api.lastEventId(), data: { lastEventId: api.lastEventId() } },
    ])
  },
)

test.skipIf(!ON_POSTGRES)(
  'on PostgreSQL, a reconnect to either instance gets the changes made through the other',
  async () => {
    const database = await freshDatabase()
    const a = await app({ database })
    const b = await app({ database })
    const away = a.lastEventId()
    await b.newFlag('default', 'from-b')
    const missed = await b.eventsAfter(away)
    await waitFor(() => a.lastEventId() === b.lastEventId(), 'a to hear of b')
    const onA = await live(a, { authorization: a.adminToken, 'last-event-id': String(away) })
    expect(start(onA)).toEqual([...changedOf(missed), ready(a.lastEventId())])

    const since = b.lastEventId()
    await a.newFlag('default', 'from-a')
    const missedOnB = await a.eventsAfter(since)
    await waitFor(() => b.lastEventId() === a.lastEventId(), 'b to hear of a')
    const onB = await live(b, { authorization: b.adminToken, 'last-event-id': String(since) })
    expect(start(onB)).toEqual([...changedOf(missedOnB), ready(b.lastEventId())])
  },
)

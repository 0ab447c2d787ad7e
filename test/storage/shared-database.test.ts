/**
 * Several instances on one PostgreSQL database (storage/postgres.ts): writes are serialised across
 * them as if made on one, each instance sees the others' writes through every read API, and an
 * instance rides out the database going away. Three apps in this process, each with its own store
 * (own connections, own state in memory) on one schema, through `app.handle`.
 *
 * These run in the PostgreSQL run of the suite (FLAGSTORE_TEST_STORE=postgres, which `npm test`
 * makes); they are about the shared database, so the file run has nothing to run them on.
 */
import { usageRows } from '../../src/features/metrics/metrics.records'
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { expectOk, makeApi, waitFor, type Api, type EventBody } from '../helpers'
import { startPostgres, type PostgresCluster } from '../postgres-cluster'
import { databaseConfig, freshDatabase, ON_POSTGRES } from '../test-store'
import type { DatabaseConfig } from '../../src/config'

const opened: Api[] = []
afterEach(async () => {
  for (const api of opened.splice(0)) await api.close().catch(() => api.abandon())
})

/** `count` apps on one fresh database, each seeded as at start (the first seeds it, the others find it seeded). */
async function instances(count: number, database?: DatabaseConfig): Promise<Api[]> {
  const config = database ?? (await freshDatabase())
  const apis: Api[] = []
  // Started together, as three instances of a deployment would be.
  apis.push(...(await Promise.all(Array.from({ length: count }, () => makeApi({ database: config })))))
  opened.push(...apis)
  return apis
}

/** Every event as B's event search answers it, oldest first. */
async function searched(api: Api): Promise<EventBody[]> {
  return api.eventsAfter(0)
}

describe.skipIf(!ON_POSTGRES)('instances on one database', () => {
  test('three instances starting at once on an empty database migrate and seed it once', async () => {
    const [a, b, c] = await instances(3)
    for (const api of [a, b, c]) await api.services.store.flush()
    await waitFor(
      () =>
        [a, b, c].every(
          api =>
            api.services.store.state.commitSeq ===
            Math.max(
              a.services.store.state.commitSeq,
              b.services.store.state.commitSeq,
              c.services.store.state.commitSeq,
            ),
        ),
      'every instance at the same commit',
    )
    const types = a.events().map(event => event.type)
    expect(types.filter(type => type === 'project-created')).toEqual(['project-created'])
    expect(types.filter(type => type === 'api-token-created')).toEqual(['api-token-created'])
    expect(types.filter(type => type === 'user-created')).toEqual([])
    expect(Object.keys(b.services.store.state.environments).sort()).toEqual(['development', 'production'])
    expect(c.services.store.state).toEqual(a.services.store.state)
  })

  test('concurrent JSON Patches of one flag from three instances, each testing the value it read, behave as from one: one wins', async () => {
    const [a, b, c] = await instances(3)
    expectOk(await a.createFlag('default', 'shared', { description: 'v0' }), 201)
    await waitFor(
      async () =>
        (await c.getFlag('default', 'shared')).status === 200 && (await b.getFlag('default', 'shared')).status === 200,
      'the flag on B and C',
    )
    const since = a.lastEventId()
    const attempts = [a, b, c].flatMap((api, n) =>
      Array.from({ length: 10 }, (_, i) =>
        api.patchFlag('default', 'shared', [
          { op: 'test', path: '/description', value: 'v0' },
          { op: 'replace', path: '/description', value: `from-${n}-${i}` },
        ]),
      ),
    )
    const answers = await Promise.all(attempts)
    const statuses = answers.map(answer => answer.status)
    expect(statuses.filter(status => status === 200)).toHaveLength(1)
    expect(statuses.filter(status => status === 409)).toHaveLength(29)
    const winner = answers.find(answer => answer.status === 200)!.body.description
    for (const api of [a, b, c]) {
      await waitFor(
        async () => (await api.getFlag('default', 'shared')).body.description === winner,
        `the winning patch on every instance`,
      )
    }
    await waitFor(() => [a, b, c].every(api => api.lastEventId() === since + 1), 'one event on every instance')
    for (const api of [a, b, c])
      expect(api.eventsSince(since).map(event => [event.type, event.data?.description])).toEqual([
        ['feature-metadata-updated', winner],
      ])
  })

  test('a chain of test-and-replace patches spread over three instances applies every step once, in order', async () => {
    const [a, b, c] = await instances(3)
    expectOk(await a.createFlag('default', 'counter', { description: '0' }), 201)
    // Each instance keeps trying to move the counter on from what it last read, until 30 steps are made.
    const step = async (api: Api, made: number[]) => {
      while (made.length < 30) {
        const read = await api.getFlag('default', 'counter')
        // Not there yet (A made it): wait for the catch-up rather than spin.
        if (read.status !== 200) {
          await Bun.sleep(20)
          continue
        }
        const value = Number(read.body.description)
        if (value >= 30) return
        const answer = await api.patchFlag('default', 'counter', [
          { op: 'test', path: '/description', value: String(value) },
          { op: 'replace', path: '/description', value: String(value + 1) },
        ])
        if (answer.status === 200) made.push(value + 1)
        else expect(answer.status).toBe(409)
      }
    }
    const made: number[] = []
    await Promise.all([step(a, made), step(b, made), step(c, made)])
    expect([...made].sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1))
    await waitFor(
      () => [a, b, c].every(api => api.lastEventId() === a.lastEventId()),
      'every instance at the same event',
    )
    const steps = a
      .events()
      .filter(event => event.type === 'feature-metadata-updated')
      .map(event => event.data?.description)
    expect(steps).toEqual(Array.from({ length: 30 }, (_, i) => String(i + 1)))
  })

  test('names stay unique across instances, and event ids form one gapless sequence the same on every instance', async () => {
    const [a, b, c] = await instances(3)
    const names = Array.from({ length: 8 }, (_, i) => `same-${i}`)
    const answers = await Promise.all([a, b, c].flatMap(api => names.map(name => api.createFlag('default', name))))
    for (const name of names) {
      const forName = answers
        .filter((_, i) => names[i % names.length] === name)
        .map(answer => answer.status)
        .sort()
      expect({ name, statuses: forName }).toEqual({ name, statuses: [201, 409, 409] })
    }
    // Projects too, and a token name.
    const projects = await Promise.all([a, b, c].map(api => api.createProject('one-project')))
    expect(projects.map(answer => answer.status).sort()).toEqual([201, 409, 409])
    await Promise.all([a, b, c].map(api => api.services.store.flush()))
    const last = () => Math.max(...[a, b, c].map(api => api.services.store.state.commitSeq))
    await waitFor(
      () => [a, b, c].every(api => api.services.store.state.commitSeq === last()),
      'every instance at the same commit',
    )
    const ids = a.events().map(event => event.id)
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1))
    for (const api of [b, c]) expect(api.events()).toEqual(a.events())
    for (const api of [a, b, c]) expect((await searched(api)).map(event => event.id)).toEqual(ids)
    expect(b.services.store.state).toEqual(a.services.store.state)
    expect(c.services.store.state).toEqual(a.services.store.state)
  })

  test('a write acknowledged on A is soon visible on B through the admin, client (ETag), frontend and event-search APIs', async () => {
    const [a, b] = await instances(2)
    const client = (
      await a.createToken({ tokenName: 'sdk', type: 'client', environment: 'development', projects: ['*'] })
    ).body.secret
    const frontend = (
      await a.createToken({ tokenName: 'web', type: 'frontend', environment: 'development', projects: ['*'] })
    ).body.secret
    await waitFor(
      async () => (await b.get('/api/client/features', { token: client })).status === 200,
      'the client token on B',
    )
    await waitFor(
      async () => (await b.get('/api/frontend', { token: frontend })).status === 200,
      'the frontend token on B',
    )
    const before = await b.get('/api/client/features', { token: client })
    const etag = before.headers.get('etag')!
    await b.searchEvents() // the event search of B is running before the write
    await a.flagOn('seen-on-b')
    await waitFor(
      async () =>
        (await b.getFlag('default', 'seen-on-b')).body?.environments?.find(env => env.name === 'development')
          ?.enabled === true,
      'the flag on B (admin)',
    )
    await waitFor(async () => {
      const answer = await b.get<{ features: { name: string; enabled: boolean }[] }>('/api/client/features', {
        token: client,
        headers: { 'if-none-match': etag },
      })
      return (
        answer.status === 200 &&
        answer.headers.get('etag') !== etag &&
        answer.body.features.some(flag => flag.name === 'seen-on-b' && flag.enabled)
      )
    }, 'the flag on B (client API, new ETag)')
    await waitFor(async () => {
      const answer = await b.get<{ toggles: { name: string }[] }>('/api/frontend', { token: frontend })
      return answer.status === 200 && answer.body.toggles.some(toggle => toggle.name === 'seen-on-b')
    }, 'the flag on B (frontend API)')
    await waitFor(async () => {
      const page = await b.searchEvents('?feature=IS:seen-on-b')
      return page.status === 200 && page.body.total === 3
    }, 'the events on B (event search)')
    expect((await b.searchEvents('?feature=IS:seen-on-b')).body.events.map(event => event.type)).toEqual([
      'feature-environment-enabled',
      'feature-strategy-add',
      'feature-created',
    ])
    // Free text finds them too (the index of B was fed by A's commit).
    const onA = await a.searchEvents('?query=seen-on-b')
    expect(onA.body.total).toBeGreaterThan(0)
    await waitFor(
      async () => (await b.searchEvents('?query=seen-on-b')).text === onA.text,
      'free-text search on B answering as on A',
    )
  })

  test('SDK metrics reported to different instances add up exactly, whichever flushes first and however often', async () => {
    const [a, b, c] = await instances(3)
    await a.flagOn('counted')
    const token = (
      await a.createToken({ tokenName: 'metrics-sdk', type: 'client', environment: 'development', projects: ['*'] })
    ).body.secret
    await waitFor(
      async () =>
        [b, c].every(
          api =>
            api.services.store.state.flags.counted !== undefined &&
            Object.hasOwn(api.services.store.state.tokens, 'metrics-sdk'),
        ),
      'flag and token on B and C',
    )
    const report = (api: Api, yes: number, no: number) =>
      api.post(
        '/api/client/metrics',
        {
          appName: 'shop',
          instanceId: 'i',
          bucket: { start: 0, stop: 0, toggles: { counted: { yes, no, variants: { blue: yes } } } },
        },
        { token },
      )
    let yes = 0
    let no = 0
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(
        [a, b, c].flatMap((api, n) => [report(api, n + 1, round), report(api, 10 * (n + 1), 1)]),
      )
      for (const answer of answers) expect(answer.status).toBe(202)
      for (let n = 0; n < 3; n++) {
        yes += n + 1 + 10 * (n + 1)
        no += round + 1
      }
      // Flushes of all three at once, in the middle of the reports.
      await Promise.all([a, b, c].map(api => api.services.metrics.flush()))
    }
    const last = () => Math.max(...[a, b, c].map(api => api.services.store.state.commitSeq))
    await waitFor(
      () => [a, b, c].every(api => api.services.store.state.commitSeq === last()),
      'the same commits everywhere',
    )
    const rows = () => usageRows(a.services.store.state.flagUsage)
    expect(rows().map(row => [row.yes, row.no, row.variants.blue])).toEqual([[yes, no, yes]])
    for (const api of [b, c]) {
      expect(usageRows(api.services.store.state.flagUsage)).toEqual(rows())
      // And what each answers (stored plus not flushed, nothing here) is the cluster's total.
      const usage = await api.get<{ lastHourUsage: { yes: number; no: number }[] }>(
        '/api/admin/client-metrics/features/counted',
      )
      expect(usage.body.lastHourUsage.map(row => [row.yes, row.no])).toEqual([[yes, no]])
    }
    // Registrations too: an application registered on A in development and on B in production is
    // one application used in both, on every instance.
    const production = (
      await a.createToken({ tokenName: 'metrics-prod', type: 'client', environment: 'production', projects: ['*'] })
    ).body.secret
    await waitFor(() => Object.hasOwn(b.services.store.state.tokens, 'metrics-prod'), 'the token on B')
    expect(
      (
        await a.post(
          '/api/client/register',
          { appName: 'both', instanceId: 'a1', strategies: ['default'], sdkVersion: 'x:1' },
          { token },
        )
      ).status,
    ).toBe(202)
    expect(
      (
        await b.post(
          '/api/client/register',
          { appName: 'both', instanceId: 'b1', strategies: ['default'], sdkVersion: 'x:1' },
          { token: production },
        )
      ).status,
    ).toBe(202)
    await Promise.all([a, b].map(api => api.services.metrics.flush()))
    for (const api of [a, b, c]) {
      await waitFor(async () => {
        const app = await api.get<{ instances: { instanceId: string }[]; environments: { name: string }[] }>(
          '/api/admin/metrics/applications/both',
        )
        return app.status === 200 && app.body.instances.length === 2
      }, 'both instances of the application on every instance')
    }
    const stored = a.services.store.state.clientApplications.both
    expect(Object.values(stored.usage).flat().sort()).toEqual(['development', 'production'])
  })

  test('an instance joining later loads the state and the log the others wrote', async () => {
    const database = await freshDatabase()
    const [a] = await instances(1, database)
    await a.flagOn('before-b')
    const [b] = await instances(1, database)
    expect((await b.getFlag('default', 'before-b')).status).toBe(200)
    expect(b.services.store.state).toEqual(a.services.store.state)
    expect((await searched(b)).map(event => event.id)).toEqual((await searched(a)).map(event => event.id))
  })

  test('checkpoints: one instance writes them, and an instance joining after loads the latest and the commits after it', async () => {
    const database = await freshDatabase()
    const make = () => makeApi({ database, checkpointAfterBytes: 2000 })
    const [a, b] = await Promise.all([make(), make()])
    opened.push(a, b)
    for (let i = 0; i < 30; i++)
      expectOk(await (i % 2 ? a : b).createFlag('default', `cp-${i}`, { description: 'x'.repeat(80) }), 201)
    const { SQL } = await import('bun')
    const sql = new SQL({
      hostname: database.host,
      port: database.port,
      username: database.username,
      database: database.database,
      connection: { search_path: database.schema },
    })
    try {
      const rows = await sql`SELECT seq FROM flagstore_checkpoints ORDER BY seq`
      expect(rows.length).toBeGreaterThan(0)
      const c = await make()
      opened.push(c)
      await waitFor(
        () => a.lastEventId() === c.lastEventId() && b.lastEventId() === c.lastEventId(),
        'all three at the same event',
      )
      expect(c.services.store.state).toEqual(a.services.store.state)
    } finally {
      await sql.close()
    }
  })
})

describe.skipIf(!ON_POSTGRES)('the sign-in throttle across instances', () => {
  const PASSWORD = 'Correct-horse-7'
  const login = (api: Api, username: string, password: string) =>
    api.post('/auth/simple/login', { username, password }, { token: null })

  /** A user made on `a`, once every instance of `all` knows it. */
  async function sharedUser(a: Api, all: Api[], username: string) {
    expectOk(
      await a.post('/api/admin/user-admin', {
        username,
        email: `${username}@example.com`,
        rootRole: 'Editor',
        password: PASSWORD,
      }),
      201,
    )
    await waitFor(
      () => all.every(api => api.services.users.findByLogin(username) !== undefined),
      `${username} on every instance`,
    )
  }

  test('failures on A hold the user back on B, by username or email, and a success on B clears the count on A', async () => {
    const [a, b] = await instances(2)
    await sharedUser(a, [a, b], 'alice')
    for (let i = 0; i < 4; i++) expect((await login(a, 'alice', `Wrong-horse-${i}`)).status).toBe(401)
    expectOk(await login(b, 'alice@example.com', PASSWORD))
    for (let i = 0; i < 5; i++)
      expect((await login(i % 2 ? a : b, i % 2 ? 'alice' : 'alice@example.com', `Wrong-horse-${i}`)).status).toBe(401)
    const held = await login(b, 'alice', PASSWORD)
    expect(held.status).toBe(429)
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThanOrEqual(29)
    expect((await login(a, 'alice@example.com', PASSWORD)).status).toBe(429)
  })

  test('100 guesses sent at once, half to each instance, have at most 5 passwords verified', async () => {
    const [a, b] = await instances(2)
    await sharedUser(a, [a, b], 'carol')
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => login(i % 2 ? a : b, 'carol', `Wrong-horse-${i}`)),
    )
    const counts = new Map<number, number>()
    for (const answer of answers) counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1)
    expect(Object.fromEntries(counts)).toEqual({ 401: 5, 429: 95 })
  })
})

describe.skipIf(!ON_POSTGRES)('PostgreSQL stopped mid-run', () => {
  let cluster: PostgresCluster | null = null
  afterAll(async () => {
    await cluster?.stop()
  })

  test('writes answer 503 saying why, reads keep answering, /ready says why; each instance recovers and catches up by itself', async () => {
    cluster = await startPostgres({ fsync: false })
    await cluster.createDatabase('halted')
    const [a, b] = await instances(2, databaseConfig(cluster, 'halted'))
    await a.flagOn('before')
    await waitFor(() => b.services.store.state.commitSeq === a.services.store.state.commitSeq, 'B caught up with A')

    await cluster.halt()
    const refused = await a.createFlag('default', 'during')
    expect(refused.status).toBe(503)
    expect(refused.text).toMatch(/PostgreSQL/)
    const toggled = await b.toggle('default', 'before', 'development', false)
    expect(toggled.status).toBe(503)
    // Nothing of the refused writes stays in memory.
    expect((await a.getFlag('default', 'during')).status).toBe(404)
    expect(
      (await b.getFlag('default', 'before')).body.environments.find(env => env.name === 'development')?.enabled,
    ).toBe(true)
    for (const api of [a, b]) {
      expect((await api.getFlag('default', 'before')).status).toBe(200)
      expect((await api.listFlags('default')).status).toBe(200)
      const ready = await api.get('/ready', { token: null })
      expect(ready.status).toBe(503)
      expect(ready.text).toMatch(/PostgreSQL/)
    }

    await cluster.start()
    for (const api of [a, b])
      await waitFor(
        async () => (await api.get('/ready', { token: null })).status === 200,
        '/ready once PostgreSQL is back',
        { ms: 20_000 },
      )
    expectOk(await a.createFlag('default', 'after'), 201)
    expectOk(await b.toggle('default', 'before', 'development', false))
    for (const api of [a, b]) {
      await waitFor(
        async () => (await api.getFlag('default', 'after')).status === 200,
        "A's write after recovery on both",
      )
      await waitFor(
        async () =>
          (await api.getFlag('default', 'before')).body.environments.find(env => env.name === 'development')
            ?.enabled === false,
        "B's write after recovery on both",
      )
    }
    await waitFor(() => a.lastEventId() === b.lastEventId(), 'both at the same event')
    expect(b.events()).toEqual(a.events())
    expect(a.events().map(event => event.id)).toEqual(Array.from({ length: a.lastEventId() }, (_, i) => i + 1))
  }, 60_000)
})

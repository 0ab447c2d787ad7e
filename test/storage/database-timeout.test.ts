/**
 * A PostgreSQL that stops answering (docs/postgres.md, When PostgreSQL is down): every
 * call to it is bounded by DATABASE_TIMEOUT_MS, so writes answer 503 with Retry-After instead of
 * hanging, `/ready` says not ready, and once the database answers again nothing acknowledged is
 * lost and nothing is applied twice. A write whose COMMIT got no answer is answered 504 (it may
 * have been saved); if it was, the instance takes it from the log, once.
 *
 * Two instances (apps in this process, each with its own store and connections) on a private
 * cluster whose processes the test stops with SIGSTOP, as when the database's host hangs.
 */
import { SQL } from 'bun'
import { afterAll, describe, expect, test } from 'bun:test'
import { expectOk, makeApi, waitFor, withTimeout, type Api } from '../helpers'
import { startPostgres, type PostgresCluster } from '../postgres-cluster'
import { databaseConfig, ON_POSTGRES } from '../test-store'
import type { DatabaseConfig } from '../../src/config'

let cluster: PostgresCluster | null = null
const opened: Api[] = []

afterAll(async () => {
  // Resumed first, whatever the test did, so that the stores can close and the cluster stop.
  cluster?.thaw()
  for (const api of opened.splice(0)) await withTimeout(api.close(), 10_000).catch(() => api.abandon())
  await cluster?.stop()
})

async function database(name: string, timeoutMs: number): Promise<DatabaseConfig> {
  cluster ??= await startPostgres({ fsync: false })
  await cluster.createDatabase(name)
  return { ...databaseConfig(cluster, name), timeoutMs }
}

async function instances(config: DatabaseConfig): Promise<Api[]> {
  const apis = await Promise.all([makeApi({ database: config }), makeApi({ database: config })])
  opened.push(...apis)
  return apis
}

const created = (api: Api, flag: string) =>
  api.events().filter(event => event.type === 'feature-created' && event.featureName === flag).length

describe.skipIf(!ON_POSTGRES)('PostgreSQL that stops answering', () => {
  test('frozen with SIGSTOP: writes answer 503 with Retry-After while it is frozen, /ready says not ready; once resumed every acknowledged write is there once and writes work', async () => {
    const BOUND_MS = 1000
    const [a, b] = await instances(await database('frozen', BOUND_MS))
    const pg = cluster!

    // Writers on both instances, each creating a new flag at a time, through the freeze.
    const answers: { flag: string; status: number; retryAfter: string | null; text: string; frozen: boolean }[] = []
    let frozen = false
    let writing = true
    const writer = async (api: Api, id: string) => {
      for (let n = 0; writing; n++) {
        const flag = `${id}-${n}`
        const during = frozen
        const answer = await api.createFlag('default', flag)
        answers.push({
          flag,
          status: answer.status,
          retryAfter: answer.headers.get('retry-after'),
          text: answer.text,
          frozen: during,
        })
        if (answer.status !== 201) await Bun.sleep(20)
      }
    }
    const writers = [writer(a, 'a0'), writer(a, 'a1'), writer(b, 'b0'), writer(b, 'b1')]
    await waitFor(
      () => answers.filter(answer => answer.status === 201).length >= 20,
      'writes acknowledged before the freeze',
    )

    pg.freeze()
    frozen = true
    try {
      // Answered while the database is still frozen (it stays so until this block ends).
      const refused = await withTimeout(
        Promise.all([a.createFlag('default', 'during-a'), b.createFlag('default', 'during-b')]),
        6 * BOUND_MS,
      )
      for (const answer of refused) {
        expect({
          status: answer.status,
          retryAfter: answer.headers.get('retry-after'),
          says: /PostgreSQL/.test(answer.text),
        }).toEqual({ status: 503, retryAfter: '1', says: true })
      }
      for (const api of [a, b]) {
        await waitFor(
          async () => (await withTimeout(api.get('/ready', { token: null }), 6 * BOUND_MS)).status === 503,
          '/ready to say not ready',
          { ms: 6 * BOUND_MS },
        )
        const ready = await withTimeout(api.get('/ready', { token: null }), 6 * BOUND_MS)
        expect({ status: ready.status, says: /PostgreSQL/.test(ready.text) }).toEqual({ status: 503, says: true })
        // Reads go on from memory.
        expect((await api.listFlags('default')).status).toBe(200)
      }
      // Every writer is answered, more than once, while frozen.
      await waitFor(
        () =>
          ['a0', 'a1', 'b0', 'b1'].every(
            id => answers.filter(answer => answer.frozen && answer.flag.startsWith(`${id}-`)).length >= 2,
          ),
        'every writer answered while frozen',
        { ms: 10 * BOUND_MS },
      )
    } finally {
      pg.thaw()
      frozen = false
    }

    for (const api of [a, b])
      await waitFor(
        async () => (await api.get('/ready', { token: null })).status === 200,
        '/ready once PostgreSQL answers again',
        { ms: 20_000 },
      )
    expectOk(await a.createFlag('default', 'after-a'), 201)
    expectOk(await b.createFlag('default', 'after-b'), 201)
    const afterThaw = answers.length
    await waitFor(
      () => answers.slice(afterThaw).filter(answer => answer.status === 201).length >= 20,
      'writes acknowledged after the freeze',
    )
    writing = false
    await Promise.all(writers)
    await waitFor(() => a.lastEventId() === b.lastEventId(), 'both instances at the same event')

    // Only 503 (not saved) and, for a COMMIT that got no answer, 504 (unknown); each says why.
    expect(answers.filter(answer => ![201, 503, 504].includes(answer.status))).toEqual([])
    expect(answers.filter(answer => answer.status === 503 && answer.retryAfter === null)).toEqual([])
    expect(answers.filter(answer => answer.status === 503).length).toBeGreaterThan(0)
    // Acknowledged: there, once. Refused: not there. Unknown: there at most once.
    const outcome = (flag: string) => ({ a: created(a, flag), b: created(b, flag) })
    expect(
      answers
        .filter(answer => answer.status === 201 && (created(a, answer.flag) !== 1 || created(b, answer.flag) !== 1))
        .map(answer => ({ ...answer, ...outcome(answer.flag) })),
    ).toEqual([])
    expect(
      answers
        .filter(answer => answer.status === 503 && (created(a, answer.flag) !== 0 || created(b, answer.flag) !== 0))
        .map(answer => ({ ...answer, ...outcome(answer.flag) })),
    ).toEqual([])
    expect(
      answers
        .filter(
          answer =>
            answer.status === 504 &&
            (created(a, answer.flag) > 1 || created(b, answer.flag) !== created(a, answer.flag)),
        )
        .map(answer => ({ ...answer, ...outcome(answer.flag) })),
    ).toEqual([])
    for (const flag of ['during-a', 'during-b']) expect(outcome(flag)).toEqual({ a: 0, b: 0 })
    // One log, gapless, the same on both instances, and their state with it.
    expect(a.events().map(event => event.id)).toEqual(Array.from({ length: a.lastEventId() }, (_, i) => i + 1))
    expect(b.events()).toEqual(a.events())
    expect(b.services.store.state.flags).toEqual(a.services.store.state.flags)
  }, 90_000)

  test('a COMMIT that gets no answer in time is answered 504, not 503: it took effect, and both instances hold it once', async () => {
    // The bound, and a commit made slow on the server for one flag only: its INSERT takes a third
    // of the bound and its COMMIT (a deferred trigger) most of one, each within the statement
    // timeout, so that the client gives up after sending COMMIT, and the COMMIT then succeeds.
    const BOUND_MS = 3000
    const config = await database('in_doubt', BOUND_MS)
    const [a, b] = await instances(config)
    const admin = new SQL({ url: cluster!.urlFor('in_doubt'), max: 1 })
    try {
      await admin.unsafe(`
        CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1.0); RETURN NEW; END $$;
        CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(2.5); RETURN NULL; END $$;
        CREATE TRIGGER slow_insert BEFORE INSERT ON flagstore_commits FOR EACH ROW WHEN (NEW.changes LIKE '%in-doubt%') EXECUTE FUNCTION slow_insert();
        CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON flagstore_commits DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.changes LIKE '%in-doubt%') EXECUTE FUNCTION slow_commit();`)
    } finally {
      await admin.close()
    }

    const answer = await a.createFlag('default', 'in-doubt')
    expect({
      status: answer.status,
      name: (answer.body as { name?: string }).name,
      says: /may have been saved or not/.test(answer.text),
    }).toEqual({ status: 504, name: 'GatewayTimeout', says: true })
    // The COMMIT took effect: A learns it from the log (once), as B does.
    for (const api of [a, b])
      await waitFor(
        async () => (await api.getFlag('default', 'in-doubt')).status === 200,
        'the flag whose COMMIT went unanswered, on both instances',
        { ms: 20_000 },
      )
    expectOk(await a.createFlag('default', 'next'), 201)
    await waitFor(() => a.lastEventId() === b.lastEventId(), 'both instances at the same event')
    expect({ a: created(a, 'in-doubt'), b: created(b, 'in-doubt') }).toEqual({ a: 1, b: 1 })
    expect(a.events().map(event => event.id)).toEqual(Array.from({ length: a.lastEventId() }, (_, i) => i + 1))
    expect(b.events()).toEqual(a.events())
  }, 60_000)
})

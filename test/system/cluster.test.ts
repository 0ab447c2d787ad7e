/**
 * Several instances, one truth (issue 22, §3–4): three real processes (`bun src/main.ts`) on one
 * private PostgreSQL (test/postgres-cluster.ts). Writers on all three create flags, change them
 * with JSON Patches (with a `test` op), turn them on and tag them; an official SDK (`unleash-client`)
 * reads from each. Mid-run one instance is killed with SIGKILL and started again on its port, and
 * then PostgreSQL itself is stopped and started again. At the end:
 *
 * - every acknowledged write (answered 2xx) is on every instance, the killed one included, with
 *   its event, and each writer's acknowledged writes hold their order in the one event log;
 * - event ids run 1…N without a gap, and the three instances' event logs are identical;
 * - their state is identical: the admin list (tags included), `/api/client/features` (body and ETag);
 * - each SDK ends up with the flags the instance it reads from serves, and an instance that
 *   acknowledged a write answers it on the next read;
 * - while PostgreSQL was down, writes answered 503 saying why (504 for one whose COMMIT got no
 *   answer), `/ready` said why, and reads kept answering from memory.
 */
import { afterAll, expect, test } from 'bun:test'
import { InMemStorageProvider, Unleash } from 'unleash-client'
import { join } from 'node:path'
import { startPostgres, type PostgresCluster } from '../postgres-cluster'
import { tempDir } from '../helpers/files'
import { adminCall, freePort, untilReady, waitFor } from '../helpers/processes'
import { destroySdk } from '../helpers/sdk'

const ROOT = join(import.meta.dir, '../..')
const ADMIN = '*:*.cluster-test-admin-secret-0123456789'
const WRITERS_PER_INSTANCE = 2

type Instance = {
  name: string
  port: number
  base: string
  dataDir: { path: string; remove(): void }
  child?: ReturnType<typeof Bun.spawn>
  /** The tail of what the process printed, for a failure's message. */
  output: string
}

let pg: PostgresCluster | undefined
const instances: Instance[] = []
const sdks: Unleash[] = []

afterAll(async () => {
  for (const client of sdks) destroySdk(client)
  for (const instance of instances) {
    if (instance.child && instance.child.exitCode === null) {
      instance.child.kill('SIGKILL')
      await instance.child.exited
    }
    instance.dataDir.remove()
  }
  await pg?.stop()
})

async function collect(instance: Instance, stream: ReadableStream<Uint8Array>) {
  const decoder = new TextDecoder()
  for await (const chunk of stream) instance.output = (instance.output + decoder.decode(chunk)).slice(-8000)
}

async function launch(instance: Instance, databaseUrl: string): Promise<void> {
  const child = Bun.spawn([join(ROOT, 'node_modules', '.bin', 'bun'), 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(instance.port),
      HOST: '127.0.0.1',
      DATA_DIR: instance.dataDir.path,
      DATABASE_URL: databaseUrl,
      INIT_ADMIN_API_TOKENS: ADMIN,
      LOG_LEVEL: 'warn',
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  instance.child = child
  void collect(instance, child.stdout as ReadableStream<Uint8Array>)
  void collect(instance, child.stderr as ReadableStream<Uint8Array>)
  try {
    await untilReady(instance.base, { process: child, ms: 60_000 })
  } catch (error) {
    throw new Error(`${instance.name} did not get ready: ${(error as Error).message}\n${instance.output}`)
  }
}

type Step = 'create' | 'patch' | 'on' | 'tag'
type Write = { writer: string; step: Step; flag: string; description?: string; tag?: string }
const EVENT_OF: Record<Step, string> = {
  create: 'feature-created',
  patch: 'feature-metadata-updated',
  on: 'feature-environment-enabled',
  tag: 'feature-tagged',
}

/** What happened to writes while the test ran: the acknowledged ones in the order their answers came, per writer, and the answers that were not 2xx. */
const acknowledged: Write[] = []
const refusals: { instance: string; status: number; text: string; duringOutage: boolean }[] = []
const staleReads: string[] = []
let outage = false
let writing = true

/**
 * One writer on one instance: a new flag each round, then a patch, on, and a tag, each only after
 * the step before it was acknowledged. A step that fails (no answer, 503) ends the round, and the
 * next round takes a new flag name, so nothing acknowledged is ever retried or overwritten.
 */
async function writer(instance: Instance, id: string) {
  for (let round = 0; writing; round++) {
    const flag = `${id}-r${round}`
    const description = `written through ${instance.name} in round ${round}`
    const tag = `t-${id}-${round}`
    const steps: [Step, string, string, unknown, Partial<Write>][] = [
      ['create', 'POST', '/api/admin/projects/default/features', { name: flag, description: 'new' }, {}],
      [
        'patch',
        'PATCH',
        `/api/admin/projects/default/features/${flag}`,
        [
          { op: 'test', path: '/description', value: 'new' },
          { op: 'replace', path: '/description', value: description },
        ],
        { description },
      ],
      ['on', 'POST', `/api/admin/projects/default/features/${flag}/environments/development/on`, undefined, {}],
      ['tag', 'POST', `/api/admin/features/${flag}/tags`, { type: 'simple', value: tag }, { tag }],
    ]
    for (const [step, method, path, body, extra] of steps) {
      const duringOutage = outage
      let answer: Awaited<ReturnType<typeof adminCall>>
      try {
        answer = await adminCall(instance.base, ADMIN, method, path, body)
      } catch {
        // No answer: the instance is down (killed). Whether it committed is unknown; move on.
        await Bun.sleep(50)
        break
      }
      if (answer.status >= 200 && answer.status < 300) {
        acknowledged.push({ writer: id, step, flag, ...extra })
        // An instance never answers a read older than its own acknowledged writes.
        if (step === 'patch') {
          const read = await adminCall(
            instance.base,
            ADMIN,
            'GET',
            `/api/admin/projects/default/features/${flag}`,
          ).catch(() => undefined)
          if (read && read.body?.description !== description)
            staleReads.push(`${instance.name} ${flag}: ${read.status} ${read.body?.description}`)
        }
        continue
      }
      refusals.push({ instance: instance.name, status: answer.status, text: answer.text, duringOutage })
      await Bun.sleep(50)
      break
    }
  }
}

async function json(base: string, path: string, secret = ADMIN): Promise<{ etag: string | null; body: any }> {
  const response = await fetch(base + path, { headers: { authorization: secret } })
  if (response.status !== 200) throw new Error(`${base}${path}: ${response.status} ${await response.text()}`)
  return { etag: response.headers.get('etag'), body: await response.json() }
}

/** The whole event log of an instance, oldest first. */
async function eventLog(base: string): Promise<any[]> {
  const events: any[] = []
  for (let offset = 0; ; offset += 1000) {
    const page = (await json(base, `/api/admin/search/events?limit=1000&offset=${offset}`)).body
    events.push(...page.events)
    if (page.events.length < 1000) return events.reverse()
  }
}

const lastEventId = async (base: string) =>
  ((await json(base, '/api/admin/search/events?limit=1')).body.events[0]?.id ?? 0) as number

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name)

test('three instances on one PostgreSQL: a kill -9 and a PostgreSQL restart lose no acknowledged write, and all three end identical', async () => {
  pg = await startPostgres()
  const url = await pg.createDatabase('cluster')
  for (const name of ['a', 'b', 'c']) {
    const port = freePort()
    instances.push({ name, port, base: `http://127.0.0.1:${port}`, dataDir: tempDir(`cluster-${name}-`), output: '' })
  }
  // All three at once: the schema is made under a lock, whoever comes first.
  await Promise.all(instances.map(instance => launch(instance, url)))
  const [a, b] = instances

  // One client token, made on A; every instance must come to know it.
  const made = await adminCall(a.base, ADMIN, 'POST', '/api/admin/api-tokens', {
    tokenName: 'cluster-sdk',
    type: 'client',
    projects: ['*'],
    environment: 'development',
  })
  expect(made.status).toBe(201)
  const clientToken: string = made.body.secret
  for (const instance of instances) {
    await waitFor(
      () =>
        fetch(`${instance.base}/api/client/features`, { headers: { authorization: clientToken } }).then(
          r => r.status === 200,
        ),
      `${instance.name} to know the client token`,
      { ms: 5_000 },
    )
  }

  const sdkProblems: string[] = []
  for (const instance of instances) {
    const client = new Unleash({
      url: `${instance.base}/api`,
      appName: `cluster-${instance.name}`,
      instanceId: `sdk-${instance.name}`,
      customHeaders: { Authorization: clientToken },
      refreshInterval: 200,
      disableMetrics: true,
      storageProvider: new InMemStorageProvider(),
    })
    // Errors are expected while B is down; they are kept for a failure's message only.
    client.on('error', (error: Error) => sdkProblems.push(`${instance.name}: ${error.message}`))
    client.on('warn', () => {})
    sdks.push(client)
  }

  const writers = instances.flatMap(instance =>
    Array.from({ length: WRITERS_PER_INSTANCE }, (_, i) => writer(instance, `${instance.name}${i}`)),
  )
  const acknowledgedBy = (name: string) => acknowledged.filter(w => w.writer.startsWith(name)).length

  // kill -9 of B amid its writers' traffic, and B back on its port.
  await waitFor(() => acknowledgedBy('b') >= 20, 'writes acknowledged by B before the kill', { ms: 20_000 })
  b.child!.kill('SIGKILL')
  await b.child!.exited
  const beforeKill = acknowledgedBy('b')
  await Bun.sleep(300)
  await launch(b, url)

  // PostgreSQL stops: writes are refused with 503, reads go on from memory; then it returns.
  await waitFor(() => acknowledgedBy('b') >= beforeKill + 10, 'writes acknowledged by B after its restart', {
    ms: 20_000,
  })
  outage = true
  await pg.halt()
  const readsDuringOutage: number[] = []
  for (const instance of instances)
    readsDuringOutage.push(
      (await fetch(`${instance.base}/api/client/features`, { headers: { authorization: clientToken } })).status,
    )
  await waitFor(
    () => refusals.filter(r => r.duringOutage && r.status === 503).length >= 3,
    'writes refused with 503 while PostgreSQL is down',
    { ms: 10_000 },
  )
  const readyDuringOutage = await Promise.all(
    instances.map(async instance => {
      const response = await fetch(`${instance.base}/ready`)
      return { status: response.status, text: await response.text() }
    }),
  )
  await pg.start()
  outage = false
  for (const instance of instances) await untilReady(instance.base, { process: instance.child, ms: 20_000 })
  const afterOutage = acknowledged.length
  await waitFor(() => acknowledged.length >= afterOutage + 30, 'writes acknowledged after PostgreSQL came back', {
    ms: 20_000,
  })
  writing = false
  await Promise.all(writers)

  expect(readsDuringOutage).toEqual([200, 200, 200])
  expect(staleReads).toEqual([])
  // /ready says why; the refused writes say so too.
  expect(
    readyDuringOutage.map(r => ({
      status: r.status,
      why: /cannot be made durable: .*(PostgreSQL|DATABASE_URL|connect)/i.test(r.text),
    })),
  ).toEqual(instances.map(() => ({ status: 503, why: true })))
  expect(refusals.filter(r => r.duringOutage && !/PostgreSQL|database/i.test(r.text))).toEqual([])
  // A write is refused only while PostgreSQL is away, and then with 503, or 504 when it went away
  // after the write's COMMIT was sent (saved or not: the round moves on to a new flag either way).
  expect(refusals.filter(r => r.status !== 503 && r.status !== 504)).toEqual([])
  expect(beforeKill).toBeGreaterThan(0)

  // Every instance catches up: the same last event, the same client ETag.
  // (Equal in two reads a little apart: a write of the service's own may still be on its way.)
  let heads: number[] = []
  let previous = ''
  await waitFor(
    async () => {
      heads = await Promise.all(instances.map(i => lastEventId(i.base)))
      const settled = heads.every(id => id === heads[0]) && previous === heads.join()
      previous = heads.join()
      return settled
    },
    'the three instances to reach the same last event',
    { ms: 10_000, every: 200 },
  ).catch((error: Error) => {
    throw new Error(
      `${error.message}: they are at ${heads.join(', ')}\n${instances.map(i => `${i.name}: ${i.output.slice(-1500)}`).join('\n')}`,
    )
  })

  // The event logs: identical, gapless from 1, and each writer's acknowledged writes in their order.
  const logs = await Promise.all(instances.map(i => eventLog(i.base)))
  expect(logs[0].map(e => e.id)).toEqual(Array.from({ length: logs[0].length }, (_, i) => i + 1))
  expect(logs[1]).toEqual(logs[0])
  expect(logs[2]).toEqual(logs[0])
  const eventIdOf = new Map(logs[0].map(e => [`${e.type}|${e.featureName}`, e.id as number]))
  expect(new Set(acknowledged.map(w => w.step))).toEqual(new Set<Step>(['create', 'patch', 'on', 'tag']))
  const missing = acknowledged.filter(w => !eventIdOf.has(`${EVENT_OF[w.step]}|${w.flag}`))
  expect(missing).toEqual([])
  for (const id of new Set(acknowledged.map(w => w.writer))) {
    const ids = acknowledged.filter(w => w.writer === id).map(w => eventIdOf.get(`${EVENT_OF[w.step]}|${w.flag}`)!)
    expect({ writer: id, ordered: ids.every((value, i) => i === 0 || ids[i - 1] < value) }).toEqual({
      writer: id,
      ordered: true,
    })
  }

  // The state: the same on every instance, and holding every acknowledged write.
  const states = await Promise.all(
    instances.map(async instance => ({
      list: (await json(instance.base, '/api/admin/projects/default/features')).body.features.sort(byName),
      client: await json(instance.base, '/api/client/features', clientToken),
    })),
  )
  expect(states[1]).toEqual(states[0])
  expect(states[2]).toEqual(states[0])
  const flags = new Map<string, any>(states[0].client.body.features.map((f: any) => [f.name, f]))
  const tagsOf = new Map<string, string[]>(
    states[0].list.map((f: any) => [f.name, (f.tags ?? []).map((t: any) => t.value)]),
  )
  const wrong = acknowledged.filter(w => {
    const flag = flags.get(w.flag)
    if (!flag) return true
    if (w.step === 'patch') return flag.description !== w.description
    if (w.step === 'on') return flag.enabled !== true
    if (w.step === 'tag') return !tagsOf.get(w.flag)?.includes(w.tag!)
    return false
  })
  expect(wrong).toEqual([])

  // Each SDK ends with what its instance serves (B's SDK through its instance's kill).
  const served = [...flags.values()].map(f => `${f.name}:${f.enabled}`).sort()
  for (const [i, client] of sdks.entries()) {
    await waitFor(
      () =>
        client
          .getFeatureToggleDefinitions()
          .map(f => `${f.name}:${f.enabled}`)
          .sort()
          .join() === served.join(),
      `the SDK on ${instances[i].name} to hold the final flags (${sdkProblems.slice(-3).join('; ')})`,
      { ms: 10_000 },
    )
  }
  const others = logs[0].filter(e => !Object.values(EVENT_OF).includes(e.type)).map(e => e.type)
  console.log(
    `cluster: ${acknowledged.length} acknowledged writes (${beforeKill} through B before its kill), ${refusals.length} refused, ${logs[0].length} events (others: ${[...new Set(others)].join(', ')})`,
  )
}, 90_000)

/**
 * What an authenticated request costs with many API tokens (issue 10, item 10), run by hand:
 *
 *   npx bun bench/run.ts tokens [--tokens 5000] [--requests 20000] [--rounds 7] [--http-runs 5] [--seconds 5]
 *
 * Two apps in this process, on memory stores: one with only the admin token, one with `--tokens`
 * more (made in one commit through the store, as the service would store them). Each round sends
 * `--requests` sequential `GET /api/admin/environments` through `app.handle` to each app, in
 * alternating batches of 500, so both see the same machine noise; the table gives each round's
 * median batch cost per request and the ratio, and the medians of rounds. No sockets: this is the
 * service's own work.
 *
 * Then the same over HTTP: two real servers, on data directories that differ only in the tokens
 * their state holds, loaded in turn by autocannon (32 connections, `--seconds` each, `--http-runs`
 * times, alternating which goes first); requests/s, p99 and the ratio of requests/s.
 */
import autocannon from 'autocannon'
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createApp } from '../src/app'
import { createServices, initialise, openStore, stopWorkers } from '../src/services'
import { STATE_FILE } from '../src/storage/files'
import type { ApiTokenRecord } from '../src/features/tokens/tokens.records'
import { SecretHasher } from '../src/features/tokens/secret-hash'
import { newKey, writeKey } from '../src/storage/secret-key'
import type { StateDoc } from '../src/storage/records'
import { SYSTEM_ACTOR } from '../src/domain/events'
import { fmt, median, removeDir, SECRET, seedDataDir, startServer, table, tempDataDir } from './lib'

const { values } = parseArgs({
  options: {
    tokens: { type: 'string', default: '5000' },
    requests: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '7' },
    'http-runs': { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
  },
})
const HTTP_RUNS = Number(values['http-runs'])
const SECONDS = Number(values.seconds)
const TOKENS = Number(values.tokens)
const REQUESTS = Number(values.requests)
const ROUNDS = Number(values.rounds)
const BATCH = 500

/** A viewer token with a random secret nobody uses: it is there to be many. */
function benchToken(hasher: SecretHasher, i: number, userId: number, createdAt: string): ApiTokenRecord {
  const secret = `*:*.${randomBytes(32).toString('hex')}`
  return {
    tokenName: `bench-${i}`,
    type: 'admin',
    role: 'viewer',
    projects: ['*'],
    environment: '*',
    secretHash: hasher.hash(secret),
    prefix: '*:*',
    userId,
    createdAt,
    expiresAt: null,
  }
}

async function makeApp(extraTokens: number) {
  const store = await openStore(null)
  const services = createServices(store)
  const app = createApp(services, { bodyLimit: 102_400 })
  await initialise(services, [SECRET])
  if (extraTokens > 0) {
    await store.transact(SYSTEM_ACTOR, (tx) => {
      const hasher = new SecretHasher(store.secretKey)
      for (let i = 0; i < extraTokens; i++) tx.put('tokens', `bench-${i}`, benchToken(hasher, i, tx.allocateUserId(), tx.now))
    })
  }
  if (Object.keys(store.state.tokens).length !== extraTokens + 1) throw new Error('tokens were not all stored')
  return { app, close: () => stopWorkers(services) }
}

/** Mean microseconds per request over `count` sequential requests. */
async function measure(app: Awaited<ReturnType<typeof makeApp>>['app'], count: number): Promise<number> {
  const request = () => new Request('http://bench/api/admin/environments', { headers: { authorization: SECRET } })
  const started = performance.now()
  for (let i = 0; i < count; i++) {
    const response = await app.handle(request())
    if (response.status !== 200) throw new Error(`status ${response.status}`)
    await response.arrayBuffer()
  }
  return ((performance.now() - started) * 1000) / count
}

const one = await makeApp(0)
const many = await makeApp(TOKENS)
// Warm-up: JIT and caches, not counted.
for (let i = 0; i < 2; i++) {
  await measure(one.app, REQUESTS / 4)
  await measure(many.app, REQUESTS / 4)
}

const rows: (string | number)[][] = []
const ratios: number[] = []
const ones: number[] = []
const manys: number[] = []
for (let round = 1; round <= ROUNDS; round++) {
  // Batches of BATCH requests, alternating between the apps, so a noisy moment of the machine
  // falls on both; each app's figure is the median of its batches.
  const a: number[] = []
  const b: number[] = []
  for (let batch = 0; batch < REQUESTS / BATCH; batch++) {
    if (batch % 2 === 0) {
      a.push(await measure(one.app, BATCH))
      b.push(await measure(many.app, BATCH))
    } else {
      b.push(await measure(many.app, BATCH))
      a.push(await measure(one.app, BATCH))
    }
  }
  const [x, y] = [median(a), median(b)]
  ones.push(x)
  manys.push(y)
  ratios.push(y / x)
  rows.push([round, `${fmt(x)} µs`, `${fmt(y)} µs`, fmt(y / x, 2)])
}
rows.push(['median', `**${fmt(median(ones))} µs**`, `**${fmt(median(manys))} µs**`, `**${fmt(median(ratios), 2)}**`])
console.log(`${REQUESTS} sequential GET /api/admin/environments per app and round, in alternating batches of ${BATCH}, through app.handle; ${new Date().toISOString()}`)
console.log(table(['round', '1 token', `${TOKENS.toLocaleString('en-US')} tokens`, 'ratio'], rows))
one.close()
many.close()

if (HTTP_RUNS > 0) {
  const dirs = [tempDataDir('bench-tokens-1-'), tempDataDir('bench-tokens-many-')]
  dirs.forEach((dir) => seedDataDir(dir, { events: 1000, flags: 10 }))
  const statePath = join(dirs[1], STATE_FILE)
  const state = JSON.parse(readFileSync(statePath, 'utf8')) as StateDoc
  // Stored as the service stores them: keyed by the directory's key, written beside the state.
  const key = newKey()
  writeKey(dirs[1], key)
  const hasher = new SecretHasher(key)
  for (let i = 0; i < TOKENS; i++) state.tokens[`bench-${i}`] = benchToken(hasher, i, state.nextUserId++, new Date().toISOString())
  writeFileSync(statePath, JSON.stringify(state))
  const servers = [await startServer(dirs[0]), await startServer(dirs[1])]
  const load = async (base: string) => {
    const result = await autocannon({ url: `${base}/api/admin/environments`, headers: { authorization: SECRET }, connections: 32, duration: SECONDS })
    if (result.errors + result.non2xx > 0) throw new Error(`${result.errors + result.non2xx} failed requests`)
    return { rps: result.requests.average, p99: result.latency.p99 }
  }
  try {
    // Warm-up, not counted.
    for (const server of servers) await autocannon({ url: `${server.base}/api/admin/environments`, headers: { authorization: SECRET }, connections: 32, duration: 2 })
    const httpRows: (string | number)[][] = []
    const httpRatios: number[] = []
    const rps: [number[], number[]] = [[], []]
    for (let run = 1; run <= HTTP_RUNS; run++) {
      const order = run % 2 === 1 ? [0, 1] : [1, 0]
      const got: { rps: number; p99: number }[] = []
      for (const i of order) got[i] = await load(servers[i].base)
      rps[0].push(got[0].rps)
      rps[1].push(got[1].rps)
      httpRatios.push(got[0].rps / got[1].rps)
      httpRows.push([run, `${fmt(got[0].rps, 0)}/s (p99 ${got[0].p99} ms)`, `${fmt(got[1].rps, 0)}/s (p99 ${got[1].p99} ms)`, fmt(got[0].rps / got[1].rps, 2)])
    }
    httpRows.push(['median', `**${fmt(median(rps[0]), 0)}/s**`, `**${fmt(median(rps[1]), 0)}/s**`, `**${fmt(median(httpRatios), 2)}**`])
    console.log(`\nautocannon, 32 connections, ${SECONDS} s per run, GET /api/admin/environments on a real server (access log on)`)
    console.log(table(['run', '1 token', `${TOKENS.toLocaleString('en-US')} tokens`, 'ratio (1 token / many, requests/s)'], httpRows))
  } finally {
    for (const server of servers) await server.stop()
    dirs.forEach(removeDir)
  }
}

/**
 * What an authenticated request costs with many API tokens (issue 10, item 10), run by hand:
 *
 *   bun bench/tokens.ts [--tokens 5000] [--requests 20000] [--rounds 7]
 *
 * Two apps in this process, on memory stores: one with only the admin token, one with `--tokens`
 * more (made in one commit through the store, as the service would store them). Each round sends
 * `--requests` sequential `GET /api/admin/environments` through `app.handle` to one app and then the
 * other (in alternating order), so both see the same machine noise; the table gives each round's
 * mean cost per request and the ratio, and the medians. No sockets: this is the service's own work.
 */
import { parseArgs } from 'node:util'
import { createHash, randomBytes } from 'node:crypto'
import { createApp } from '../src/app'
import { createServices, initialise, openStore, stopWorkers } from '../src/services'
import type { ApiTokenRecord } from '../src/storage/records'
import { SYSTEM_ACTOR } from '../src/storage/store'
import { fmt, median, SECRET, table } from './lib'

const { values } = parseArgs({
  options: { tokens: { type: 'string', default: '5000' }, requests: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '7' } },
})
const TOKENS = Number(values.tokens)
const REQUESTS = Number(values.requests)
const ROUNDS = Number(values.rounds)

async function makeApp(extraTokens: number) {
  const store = await openStore(null)
  const services = createServices(store)
  const app = createApp(services, { bodyLimit: 102_400 })
  await initialise(services, [SECRET])
  if (extraTokens > 0) {
    await store.transact(SYSTEM_ACTOR, (tx) => {
      for (let i = 0; i < extraTokens; i++) {
        const secret = `*:*.${randomBytes(32).toString('hex')}`
        const token: ApiTokenRecord = {
          tokenName: `bench-${i}`,
          type: 'admin',
          role: 'viewer',
          projects: ['*'],
          environment: '*',
          secretHash: createHash('sha256').update(secret).digest('hex'),
          prefix: '*:*',
          userId: tx.allocateUserId(),
          createdAt: tx.now,
          expiresAt: null,
        }
        tx.put('tokens', token.tokenName, token)
      }
    })
  }
  if (Object.keys(store.state.tokens).length !== extraTokens + 1) throw new Error('tokens were not all stored')
  return { app, close: () => stopWorkers(services) }
}

/** Mean microseconds per request over `REQUESTS` sequential requests. */
async function measure(app: Awaited<ReturnType<typeof makeApp>>['app']): Promise<number> {
  const request = () => new Request('http://bench/api/admin/environments', { headers: { authorization: SECRET } })
  const started = performance.now()
  for (let i = 0; i < REQUESTS; i++) {
    const response = await app.handle(request())
    if (response.status !== 200) throw new Error(`status ${response.status}`)
    await response.arrayBuffer()
  }
  return ((performance.now() - started) * 1000) / REQUESTS
}

const one = await makeApp(0)
const many = await makeApp(TOKENS)
// Warm-up: JIT and caches, not counted.
for (let i = 0; i < 2; i++) {
  await measure(one.app)
  await measure(many.app)
}

const rows: (string | number)[][] = []
const ratios: number[] = []
const ones: number[] = []
const manys: number[] = []
for (let round = 1; round <= ROUNDS; round++) {
  let a: number
  let b: number
  if (round % 2 === 1) {
    a = await measure(one.app)
    b = await measure(many.app)
  } else {
    b = await measure(many.app)
    a = await measure(one.app)
  }
  ones.push(a)
  manys.push(b)
  ratios.push(b / a)
  rows.push([round, `${fmt(a)} µs`, `${fmt(b)} µs`, fmt(b / a, 2)])
}
rows.push(['median', `**${fmt(median(ones))} µs**`, `**${fmt(median(manys))} µs**`, `**${fmt(median(ratios), 2)}**`])
console.log(`${REQUESTS} sequential GET /api/admin/environments per round through app.handle; ${new Date().toISOString()}`)
console.log(table(['round', '1 token', `${TOKENS.toLocaleString('en-US')} tokens`, 'ratio'], rows))
one.close()
many.close()

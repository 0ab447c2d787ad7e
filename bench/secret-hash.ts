/**
 * What storing token secrets keyed costs, against a slow hash (docs/security.md), run by hand:
 *
 *   bun bench/secret-hash.ts [--rounds 5] [--count 20000]
 *
 * Per round, in this process: the cost of one plain SHA-256 (the old stored form), one HMAC-SHA-256
 * (SecretHasher.hash, what authentication computes per request), one scrypt with node's defaults
 * (N=16384, r=8, p=1: what a slow hash would cost per unknown secret), and `TokensService.authenticate`
 * end to end for a known secret, an unknown one, and an unknown one while old-format tokens remain
 * (one more SHA-256). Medians of rounds; the ratios are taken within each round.
 */
import { createHash, randomBytes, scryptSync } from 'node:crypto'
import { parseArgs } from 'node:util'
import { SecretHasher } from '../src/features/tokens/secret-hash'
import { createServices, initialise, openStore } from '../src/services'
import { SYSTEM_ACTOR } from '../src/domain/events'
import { fmt, median, table } from './lib'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, count: { type: 'string', default: '20000' } } })
const ROUNDS = Number(values.rounds)
const COUNT = Number(values.count)
const SCRYPT_COUNT = 20

/** Microseconds per call of `work`, over `count` calls. */
function perCall(count: number, work: (i: number) => unknown): number {
  const started = performance.now()
  for (let i = 0; i < count; i++) work(i)
  return ((performance.now() - started) * 1000) / count
}

const secret = '*:*.short-chosen1'
const hasher = new SecretHasher(randomBytes(32))
const store = await openStore(null)
const services = createServices(store)
await initialise(services, [secret])
const legacyStore = await openStore(null)
const legacy = createServices(legacyStore)
await initialise(legacy, [secret])
await legacyStore.transact(SYSTEM_ACTOR, (tx) => {
  const token = tx.get('tokens', 'admin-bootstrap')!
  tx.put('tokens', 'old-format', { ...token, tokenName: 'old-format', secretHash: createHash('sha256').update('never-sent').digest('hex') })
})

const columns: Record<string, number[]> = {}
const add = (name: string, value: number) => (columns[name] ??= []).push(value)
for (let round = 0; round < ROUNDS; round++) {
  const sha = perCall(COUNT, (i) => createHash('sha256').update(secret + i).digest('hex'))
  const hmac = perCall(COUNT, (i) => hasher.hash(secret + i))
  const scrypt = perCall(SCRYPT_COUNT, (i) => scryptSync(secret + i, 'per-directory-salt', 32))
  const known = perCall(COUNT, () => services.tokens.authenticate(secret))
  const unknown = perCall(COUNT, (i) => {
    try {
      services.tokens.authenticate(`*:*.unknown-${i}`)
    } catch {}
  })
  const unknownLegacy = perCall(COUNT, (i) => {
    try {
      legacy.tokens.authenticate(`*:*.unknown-${i}`)
    } catch {}
  })
  add('SHA-256', sha)
  add('HMAC-SHA-256', hmac)
  add('scrypt N=16384', scrypt)
  add('HMAC / SHA-256', hmac / sha)
  add('scrypt / HMAC', scrypt / hmac)
  add('authenticate, known', known)
  add('authenticate, unknown', unknown)
  add('authenticate, unknown, old tokens left', unknownLegacy)
}
console.log(`bun bench/secret-hash.ts --rounds ${ROUNDS} --count ${COUNT} (scrypt: ${SCRYPT_COUNT} calls a round); ${new Date().toISOString()}`)
console.log(
  table(
    ['measure', ...Array.from({ length: ROUNDS }, (_, i) => `round ${i + 1}`), 'median'],
    Object.entries(columns).map(([name, list]) => {
      const unit = name.includes('/') ? '' : ' µs'
      return [name, ...list.map((value) => `${fmt(value, 2)}${unit}`), `**${fmt(median(list), 2)}${unit}**`]
    }),
  ),
)
await store.close()
await legacyStore.close()

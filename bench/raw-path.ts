/**
 * What checking the path as sent costs (http/routing.ts rawPathRoutes, issue 18 item 8), in
 * process: the check a request passes through before the app, next to the app answering the
 * cheapest route (GET /health through app.handle) in the same run. Over sockets the difference is
 * below the noise of a shared machine, so the comparison is made here.
 * Usage: node_modules/.bin/bun bench/raw-path.ts [rounds=5]
 */
import { rawPathRoutes } from '../src/http/routing'
import { createApp } from '../src/app'
import { createServices, openStore, stopWorkers } from '../src/services'
import { fmt, median, table } from './lib'

const rounds = Number(process.argv[2] ?? 5)
const CALLS = 200_000
const store = await openStore(null, { sync: false })
const services = createServices(store)
const app = createApp(services, { bodyLimit: 102400 })
const fixed = new Response('')
const check = rawPathRoutes(() => fixed)['/:s0/:s1/:s2/:s3/:s4/:s5']
const plain = { url: 'http://127.0.0.1:4242/api/admin/projects/default/features/f', params: { s0: 'api', s1: 'admin', s2: 'projects', s3: 'default', s4: 'features', s5: 'f' } }
const encoded = { url: 'http://127.0.0.1:4242/api/admin/context/plan/legal-values/a%2Fb', params: { s0: 'api', s1: 'admin', s2: 'context', s3: 'plan', s4: 'legal-values', s5: 'a/b' } }

async function perCall(calls: number, work: () => unknown): Promise<number> {
  const start = Bun.nanoseconds()
  for (let i = 0; i < calls; i++) {
    const result = work()
    if (result instanceof Promise) await result
  }
  return (Bun.nanoseconds() - start) / calls
}

const rows: { plain: number; encoded: number; health: number }[] = []
for (let round = 0; round < rounds; round++) {
  rows.push({
    plain: await perCall(CALLS, () => check(plain as never)),
    encoded: await perCall(CALLS, () => check(encoded as never)),
    health: await perCall(CALLS / 20, () => app.handle(new Request('http://127.0.0.1:4242/health'))),
  })
}
const m = (pick: (row: (typeof rows)[number]) => number) => median(rows.map(pick))
console.log(
  table(
    ['path checked', 'ns per request', 'GET /health via app.handle, ns', 'ratio'],
    [
      ['6 plain segments', fmt(m((r) => r.plain), 0), fmt(m((r) => r.health), 0), fmt(m((r) => r.plain / r.health), 3)],
      ['6 segments, one %-encoded', fmt(m((r) => r.encoded), 0), fmt(m((r) => r.health), 0), fmt(m((r) => r.encoded / r.health), 3)],
    ],
  ),
)
console.log(`load average ${(await Bun.file('/proc/loadavg').text()).split(' ')[0]}, ${rounds} rounds, medians`)
await store.close()
stopWorkers(services)

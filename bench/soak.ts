/**
 * Soak (issue "Fast and hard to break"), run by hand:
 *
 *   bun bench/soak.ts [--minutes 5]
 *
 * Mixed reads and writes from 16 autocannon connections at 2,000 requests/s for `--minutes`
 * against a server on a log of 100,000 events and 1,000 flags: flag lists, single flags, searches
 * and name validations, with PATCHes, toggles and tag additions and removals (one request in four
 * writes; every write adds an event, which the log keeps). Reports errors and the resident memory
 * each minute; the target is zero errors and memory at the end within 10 % of what it was after
 * the first minute.
 */
import autocannon from 'autocannon'
import { parseArgs } from 'node:util'
import { authHeaders, fmt, removeDir, rssMiB, seedDataDir, startServer, table, tempDataDir, waitForSearchIndex } from './lib'

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '5' } } })
const MINUTES = Number(values.minutes)

const dir = tempDataDir()
seedDataDir(dir, { events: 100_000, flags: 1000 })
const server = await startServer(dir)
await waitForSearchIndex(server.base)
let counter = 0
const next = () => counter++
const flag = () => `flag-${Math.floor(Math.random() * 1000)}`
const requests = [
  { method: 'GET', setupRequest: (r: any) => ({ ...r, path: '/api/admin/projects/default/features', headers: authHeaders }) },
  { method: 'GET', setupRequest: (r: any) => ({ ...r, path: `/api/admin/projects/default/features/${flag()}`, headers: authHeaders }) },
  {
    method: 'PATCH',
    setupRequest: (r: any) => ({ ...r, path: `/api/admin/projects/default/features/${flag()}`, headers: authHeaders, body: JSON.stringify([{ op: 'replace', path: '/description', value: `soak ${next()}` }]) }),
  },
  { method: 'POST', setupRequest: (r: any) => ({ ...r, path: `/api/admin/projects/default/features/${flag()}/environments/development/${Math.random() < 0.5 ? 'on' : 'off'}`, headers: { authorization: authHeaders.authorization } }) },
  {
    // Tags come and go, so flags do not grow without end: the same ten values are added and removed.
    method: 'POST',
    setupRequest: (r: any) => {
      const n = next()
      const path = `/api/admin/features/flag-${n % 1000}/tags`
      const value = `soak-${Math.floor(n / 1000) % 10}`
      return n % 2000 < 1000 ? { ...r, path, headers: authHeaders, body: JSON.stringify({ value }) } : { ...r, method: 'DELETE', path: `${path}/simple/${value}`, headers: { authorization: authHeaders.authorization } }
    },
  },
  { method: 'GET', setupRequest: (r: any) => ({ ...r, path: `/api/admin/search/events?query=${['often', 'kalomi', 'release', 'seldom'][next() % 4]}&limit=20`, headers: authHeaders }) },
  { method: 'GET', setupRequest: (r: any) => ({ ...r, path: '/api/admin/search/events?type=IS:feature-tagged&limit=50', headers: authHeaders }) },
  { method: 'POST', setupRequest: (r: any) => ({ ...r, path: '/api/admin/features/validate', headers: authHeaders, body: JSON.stringify({ name: `free-${next()}` }) }) },
]

const samples: { minute: number; rss: number; requests: number; errors: number }[] = []
let totalRequests = 0
let totalErrors = 0
for (let minute = 1; minute <= MINUTES; minute++) {
  const result = await autocannon({ url: server.base, connections: 16, duration: 60, overallRate: 2000, requests: requests as any })
  totalRequests += result.requests.total
  totalErrors += result.errors + result.non2xx
  samples.push({ minute, rss: rssMiB(server.pid), requests: result.requests.total, errors: result.errors + result.non2xx })
  console.log(`minute ${minute}: ${result.requests.total} requests, ${result.errors + result.non2xx} errors, p99 ${result.latency.p99} ms, RSS ${fmt(rssMiB(server.pid), 0)} MiB`)
}
await server.stop()
removeDir(dir)
const first = samples[0].rss
const last = samples.at(-1)!.rss
console.log('\n' + table(['minute', 'requests', 'errors', 'resident memory'], samples.map((s) => [s.minute, s.requests, s.errors, `${fmt(s.rss, 0)} MiB`])))
console.log(`\n${totalRequests} requests, ${totalErrors} errors; memory after the last minute is ${fmt((last / first - 1) * 100, 1)} % from after the first (target: 0 errors, within ±10 %).`)

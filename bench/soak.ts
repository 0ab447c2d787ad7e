/**
 * Soak (issue "Fast and hard to break"), run by hand:
 *
 *   npx bun bench/run.ts soak [--minutes 5]
 *
 * Mixed reads and writes from 16 keep-alive clients at 2,000 requests/s for `--minutes`
 * against a server on a log of 100,000 events and 1,000 flags: flag lists, single flags, searches
 * and name validations, and one request in ten a write (PATCH, toggle, tag added or removed).
 * Every write adds an event, which the log keeps (in memory too, for search), so memory grows
 * with the writes by design; Reports errors and the resident
 * memory each minute; the target is zero errors and memory at the end within 10 % of what it was
 * after the first minute.
 */
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
const auth = { authorization: authHeaders.authorization }

/** One request of the mix: method, path, body. */
function nextRequest(): [string, string, unknown?] {
  const n = next()
  if (n % 10 === 9) {
    // One request in ten writes: a PATCH, a toggle, or a tag that comes and goes (so flags do not
    // grow without end).
    const write = Math.floor(n / 10)
    switch (write % 3) {
      case 0:
        return ['PATCH', `/api/admin/projects/default/features/${flag()}`, [{ op: 'replace', path: '/description', value: `soak ${n}` }]]
      case 1:
        return ['POST', `/api/admin/projects/default/features/${flag()}/environments/development/${write % 2 === 0 ? 'on' : 'off'}`]
      default: {
        const target = `flag-${Math.floor(write / 3) % 1000}`
        return Math.floor(write / 3000) % 2 === 0
          ? ['POST', `/api/admin/features/${target}/tags`, { value: 'soak-tag' }]
          : ['DELETE', `/api/admin/features/${target}/tags/simple/soak-tag`]
      }
    }
  }
  switch (n % 5) {
    case 0:
      return ['GET', '/api/admin/projects/default/features']
    case 1:
      return ['GET', `/api/admin/projects/default/features/${flag()}`]
    case 2:
      return ['GET', `/api/admin/search/events?query=${['often', 'kalomi', 'release', 'seldom'][n % 4]}&limit=20`]
    case 3:
      return ['GET', '/api/admin/search/events?type=IS:feature-tagged&limit=50']
    default:
      return ['POST', '/api/admin/features/validate', { name: `free-${n}` }]
  }
}

const CONNECTIONS = 16
/** Requests per second at most, so that the log grows at a steady, moderate pace. */
const RATE = 2000
const samples: { minute: number; rss: number; requests: number; errors: number; p99: number }[] = []
let stopAt = 0
async function client(stats: { requests: number; errors: number; latencies: number[]; examples: string[] }) {
  while (performance.now() < stopAt) {
    const started = performance.now()
    const [method, path, body] = nextRequest()
    try {
      const response = await fetch(server.base + path, { method, headers: body === undefined ? auth : authHeaders, body: body === undefined ? undefined : JSON.stringify(body) })
      await response.arrayBuffer()
      if (response.status >= 300) {
        stats.errors++
        if (stats.examples.length < 5) stats.examples.push(`${method} ${path} → ${response.status}`)
      }
    } catch (error) {
      stats.errors++
      if (stats.examples.length < 5) stats.examples.push(`${method} ${path} → ${String(error)}`)
    }
    stats.requests++
    stats.latencies.push(performance.now() - started)
    const pause = (CONNECTIONS * 1000) / RATE - (performance.now() - started)
    if (pause > 0) await Bun.sleep(pause)
  }
}

let totalRequests = 0
let totalErrors = 0
for (let minute = 1; minute <= MINUTES; minute++) {
  const stats = { requests: 0, errors: 0, latencies: [] as number[], examples: [] as string[] }
  stopAt = performance.now() + 60_000
  await Promise.all(Array.from({ length: CONNECTIONS }, () => client(stats)))
  stats.latencies.sort((a, b) => a - b)
  const p99 = stats.latencies[Math.floor(stats.latencies.length * 0.99)]
  totalRequests += stats.requests
  totalErrors += stats.errors
  samples.push({ minute, rss: rssMiB(server.pid), requests: stats.requests, errors: stats.errors, p99 })
  console.log(`minute ${minute}: ${stats.requests} requests, ${stats.errors} errors ${stats.examples.join('; ')}, p99 ${fmt(p99, 1)} ms, RSS ${fmt(rssMiB(server.pid), 0)} MiB`)
}
await server.stop()
removeDir(dir)
const first = samples[0].rss
const last = samples.at(-1)!.rss
console.log('\n' + table(['minute', 'requests', 'errors', 'p99', 'resident memory'], samples.map((s) => [s.minute, s.requests, s.errors, `${fmt(s.p99, 1)} ms`, `${fmt(s.rss, 0)} MiB`])))
console.log(`\n${totalRequests} requests, ${totalErrors} errors; memory after the last minute is ${fmt((last / first - 1) * 100, 1)} % from after the first (target: 0 errors, within ±10 %).`)

/**
 * One scenario of bench/ofrep.ts alone against one server, for A/B runs and profiles, run by hand:
 *
 *   bun bench/ofrep-server.ts ofrep304|ofrep|frontend|client304 [SECONDS]
 *
 * The frontend benchmark's 1,000 flags; wrk (2 threads, 32 connections) sends one fixed context (no
 * new user per request, unlike bench/ofrep.ts). Prints requests/s and the server's own CPU time per
 * request (/proc/<pid>/stat), user and system apart, and its page faults per request: the figures
 * that survive a loaded machine better. `SRC=other/src` runs another copy of src/ (with a
 * package.json beside it) for a before/after; `PROF=1` writes a `bun --cpu-prof-md` profile of the
 * server to /tmp/prof/<scenario>.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { addFrontendFlags, FLAGS, ENVIRONMENT } from './frontend-data'
import { authHeaders, seedDataDir, startServer, tempDataDir, wrk, removeDir, processStat } from './lib'
const mode = process.argv[2] ?? 'ofrep304'
if (!['ofrep304', 'ofrep', 'frontend', 'client304'].includes(mode)) throw new Error(`unknown scenario ${mode}`)
const dir = tempDataDir()
seedDataDir(dir, { events: 1000, flags: FLAGS, environments: ['development', 'production'] })
addFrontendFlags(dir)
const server = await startServer(dir, {}, process.env.PROF ? ['--cpu-prof-md', `--cpu-prof-dir=/tmp/prof/${mode}`] : [])
const base = server.base
async function token(type: string) {
  const r = await fetch(`${base}/api/admin/api-tokens`, { method: 'POST', headers: authHeaders, body: JSON.stringify({ tokenName: `p-${crypto.randomUUID()}`, type, projects: ['*'], environment: ENVIRONMENT }) })
  return (await r.json()).secret as string
}
const secret = await token('frontend'); const client = await token('client')
const BODY = JSON.stringify({ context: { targetingKey: 'user-1', sessionId: 'session-1', email: 'user-1@example.com', appVersion: '1.4.0', region: 'eu-west', age: '20' } })
const s = await fetch(`${base}/ofrep/v1/evaluate/flags`, { method: 'POST', headers: { authorization: secret, 'content-type': 'application/json' }, body: BODY })
const etag = s.headers.get('etag')!
const script = join(dir, 's.lua')
if (mode === 'ofrep304') writeFileSync(script, `wrk.method="POST"\nwrk.headers["Content-Type"]="application/json"\nwrk.headers["If-None-Match"]=${JSON.stringify(etag)}\nwrk.body=${JSON.stringify(BODY)}\n`)
else if (mode === 'ofrep') writeFileSync(script, `wrk.method="POST"\nwrk.headers["Content-Type"]="application/json"\nwrk.body=${JSON.stringify(BODY)}\n`)
else if (mode === 'frontend') writeFileSync(script, `wrk.method="POST"\nwrk.headers["Content-Type"]="application/json"\nwrk.body=${JSON.stringify(JSON.stringify({ context: { userId: 'user-1', sessionId: 'session-1', properties: { email: 'user-1@example.com', appVersion: '1.4.0', region: 'eu-west', age: '20' } } }))}\n`)
else writeFileSync(script, '')
const ce = (await fetch(`${base}/api/client/features`, { headers: { authorization: client } })).headers.get('etag')!
const url = mode === 'client304' ? `${base}/api/client/features` : mode === 'frontend' ? `${base}/api/frontend` : `${base}/ofrep/v1/evaluate/flags`
const headers: Record<string, string> = mode === 'client304' ? { authorization: client, 'if-none-match': ce } : { authorization: secret }
const before = processStat(server.pid)
const r = await wrk(url, headers, Number(process.argv[3] ?? 6), ['-s', script])
const after = processStat(server.pid)
const per = (value: number) => Math.round((value / (r.requests ?? 1)) * 1e6 * 10) / 10
const user = after.user - before.user
const system = after.system - before.system
console.log(mode, Math.round(r.rps), 'req/s', per(user + system), 'µs/req', `(user ${per(user)}, system ${per(system)}, ${per((after.faults - before.faults) / 1e6)} page faults per request)`)
await server.stop()
removeDir(dir)

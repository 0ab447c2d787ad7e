/**
 * One scenario of bench/ofrep.ts alone against one server, for A/B runs and profiles, run by hand:
 *
 *   bun bench/ofrep-server.ts ofrep304|ofrep|ofrepgz|frontend|client304 [SECONDS]
 *
 * The frontend benchmark's 1,000 flags; wrk (2 threads, 32 connections) sends one fixed context (no
 * new user per request, unlike bench/ofrep.ts). Prints requests/s and the server's own CPU time per
 * request (/proc/<pid>/stat): the figure that survives a loaded machine better. `ofrepgz` sends
 * `Accept-Encoding: gzip` (wrk sends none otherwise). `SRC=other/src` runs another copy of src/ (with
 * a package.json beside it) for a before/after; `PROF=1` writes a `bun --cpu-prof-md` profile of the
 * server to /tmp/prof/<scenario>.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { addFrontendFlags, FLAGS, ENVIRONMENT } from './frontend-data'
import { authHeaders, seedDataDir, tempDataDir, wrk, freePort, SECRET, ROOT, removeDir, cpuSeconds } from './lib'
const mode = process.argv[2] ?? 'ofrep304'
if (!['ofrep304', 'ofrep', 'ofrepgz', 'frontend', 'client304'].includes(mode)) throw new Error(`unknown scenario ${mode}`)
const dir = tempDataDir()
seedDataDir(dir, { events: 1000, flags: FLAGS, environments: ['development', 'production'] })
addFrontendFlags(dir)
const port = freePort()
const child = Bun.spawn([process.execPath, ...(process.env.PROF ? ['--cpu-prof-md', `--cpu-prof-dir=/tmp/prof/${mode}`] : []), (process.env.SRC ?? 'src') + '/main.ts'], { cwd: ROOT, env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, INIT_ADMIN_API_TOKENS: SECRET }, stdout: 'ignore', stderr: 'inherit' })
const base = `http://127.0.0.1:${port}`
for (;;) { try { if ((await fetch(`${base}/ready`)).ok) break } catch {} await Bun.sleep(20) }
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
else if (mode === 'ofrep' || mode === 'ofrepgz') writeFileSync(script, `wrk.method="POST"\nwrk.headers["Content-Type"]="application/json"\nwrk.body=${JSON.stringify(BODY)}\n`)
else if (mode === 'frontend') writeFileSync(script, `wrk.method="POST"\nwrk.headers["Content-Type"]="application/json"\nwrk.body=${JSON.stringify(JSON.stringify({ context: { userId: 'user-1', sessionId: 'session-1', properties: { email: 'user-1@example.com', appVersion: '1.4.0', region: 'eu-west', age: '20' } } }))}\n`)
else writeFileSync(script, '')
const ce = (await fetch(`${base}/api/client/features`, { headers: { authorization: client } })).headers.get('etag')!
const url = mode === 'client304' ? `${base}/api/client/features` : mode === 'frontend' ? `${base}/api/frontend` : `${base}/ofrep/v1/evaluate/flags`
const headers: Record<string, string> = mode === 'client304' ? { authorization: client, 'if-none-match': ce } : mode === 'ofrepgz' ? { authorization: secret, 'accept-encoding': 'gzip' } : { authorization: secret }
/** The server's user and system CPU seconds and minor page faults (/proc/<pid>/stat). */
const usage = () => {
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100, faults: Number(fields[7]) }
}
const before = usage()
const c0 = cpuSeconds(child.pid)
const r = await wrk(url, headers, Number(process.argv[3] ?? 6), ['-s', script])
const after = usage()
const per = (value: number) => Math.round((value / (r.requests ?? 1)) * 1e6 * 10) / 10
console.log(mode, Math.round(r.rps), 'req/s', per(cpuSeconds(child.pid) - c0), 'µs/req', `(user ${per(after.user - before.user)}, system ${per(after.system - before.system)}, ${per((after.faults - before.faults) / 1e6)} page faults per request)`)
child.kill('SIGTERM'); await child.exited
removeDir(dir)

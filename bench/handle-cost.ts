/**
 * CPU per request of the SDK GET paths through `app.handle` (no sockets), this tree against
 * another checkout in the same run, run by hand:
 *
 *   npx bun bench/run.ts handle-cost --root DIR [--runs 3] [--requests 20000]
 *
 * Each run is a child process per checkout, alternating: it builds the app with that checkout's
 * `makeApi` (test/helpers/api.ts), makes a frontend and a client token, sends 2,000 requests to
 * warm up and reads `process.cpuUsage()` around `--requests` more, each answer read to its end.
 */
import { fmt, median, options, ROOT } from './lib'

const PATHS = ['/api/frontend?userId=17&sessionId=4', '/api/client/features']

/** Runs in the child: prints one JSON line of µs per request by path. */
const CHILD = `
const [root, count] = [process.argv[2], Number(process.argv[3])]
const { makeApi } = await import(root + '/test/helpers/api.ts')
const api = await makeApi()
const token = async type => (await api.createToken({ tokenName: type, type, environment: 'development', projects: ['*'] })).body.secret
const secrets = { frontend: await token('frontend'), client: await token('client') }
const result = {}
for (const path of ${JSON.stringify(PATHS)}) {
  const secret = path.startsWith('/api/frontend') ? secrets.frontend : secrets.client
  const request = () => new Request('http://localhost' + path, { headers: { authorization: secret } })
  for (let i = 0; i < 2000; i++) await (await api.app.handle(request())).arrayBuffer()
  const before = process.cpuUsage()
  for (let i = 0; i < count; i++) await (await api.app.handle(request())).arrayBuffer()
  const used = process.cpuUsage(before)
  result[path] = (used.user + used.system) / count
}
console.log(JSON.stringify(result))
await api.close()
process.exit(0)
`

export async function handleCost() {
  const o = options({ root: '', runs: 3, requests: 20000 })
  if (!o.root) throw new Error('--root DIR: the checkout to compare with')
  const script = `${ROOT}/bench/.handle-cost-child.ts`
  await Bun.write(script, CHILD)
  const roots = [ROOT, o.root]
  const figures = new Map<string, number[]>()
  try {
    for (let run = 1; run <= o.runs; run++) {
      for (const root of roots) {
        const child = Bun.spawnSync([process.execPath, script, root, String(o.requests)], { cwd: root })
        const line = child.stdout.toString().trim().split('\n').pop() ?? ''
        const result = JSON.parse(line) as Record<string, number>
        for (const path of PATHS) {
          const key = `${path}\t${root}`
          figures.set(key, [...(figures.get(key) ?? []), result[path]!])
        }
      }
      console.log(`run ${run} of ${o.runs} done`)
    }
  } finally {
    await Bun.file(script).delete()
  }
  console.log(`\nCPU µs per request through app.handle, medians of ${o.runs} alternating runs of ${o.requests}`)
  console.log('| path | this tree | other | runs, this tree | runs, other |\n|---|---|---|---|---|')
  for (const path of PATHS) {
    const ours = figures.get(`${path}\t${ROOT}`)!
    const theirs = figures.get(`${path}\t${o.root}`)!
    const list = (xs: number[]) => xs.map(x => fmt(x, 1)).join(', ')
    console.log(`| ${path} | ${fmt(median(ours), 1)} | ${fmt(median(theirs), 1)} | ${list(ours)} | ${list(theirs)} |`)
  }
}

import { seedDataDir, tempDataDir, SECRET } from './lib'
import { addFrontendFlags, FLAGS, ENVIRONMENT } from './frontend-data'
import { openStore, createServices, initialise } from '../src/services'
import { createApp } from '../src/app'
import { contextFromQuery } from '../src/features/frontend/frontend.context'
const dir = tempDataDir()
seedDataDir(dir, { events: 10, flags: FLAGS })
addFrontendFlags(dir)
const store = await openStore(dir, { sync: false })
const services = createServices(store)
await initialise(services, [SECRET])
const app = createApp(services, { bodyLimit: 100000 })
const created = await app.handle(new Request('http://x/api/admin/api-tokens', { method: 'POST', headers: { authorization: SECRET, 'content-type': 'application/json' }, body: JSON.stringify({ tokenName: 't', type: 'frontend', projects: ['*'], environment: ENVIRONMENT }) }))
const token = (await created.json()).secret
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
const url = (n: number) => `http://x/api/frontend?userId=user-${n % 5000}&sessionId=session-${n}&properties%5Bemail%5D=user-${n}%40example.com&appVersion=1.4.0&region=eu-west&age=${15 + n % 10}`
for (let n = 0; n < 500; n++) await (await app.handle(new Request(url(n), { headers: { authorization: token } }))).text()
let t = cpu()
const N = 2000
for (let n = 0; n < N; n++) await (await app.handle(new Request(url(n), { headers: { authorization: token } }))).arrayBuffer()
console.log('full request µs', ((cpu() - t) / N) * 1000)
t = cpu()
for (let n = 0; n < N; n++) services.frontend.evaluate({ projects: ['*'], environment: ENVIRONMENT }, contextFromQuery(url(n), null))
console.log('evaluate+hash µs', ((cpu() - t) / N) * 1000)
t = cpu()
for (let n = 0; n < N; n++) contextFromQuery(url(n), null)
console.log('context µs', ((cpu() - t) / N) * 1000)
const j = services.frontend.evaluate({ projects: ['*'], environment: ENVIRONMENT }, contextFromQuery(url(1), null)).json
t = cpu()
for (let n = 0; n < N; n++) Bun.hash(j)
console.log('hash µs', ((cpu() - t) / N) * 1000)
t = cpu()
for (let n = 0; n < N; n++) await new Response(j).arrayBuffer()
console.log('response µs', ((cpu() - t) / N) * 1000)
t = cpu()
for (let n = 0; n < N; n++) await (await app.handle(new Request('http://x/api/frontend/nothing', { headers: { authorization: token } }))).arrayBuffer()
console.log('404 route µs', ((cpu() - t) / N) * 1000)
process.exit(0)

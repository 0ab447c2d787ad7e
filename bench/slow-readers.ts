/**
 * Streams whose clients never read: what they cost the server (RSS) and the kernel (TCP memory,
 * both ends on this machine), and how many the server cuts off (STREAMING_MAX_UNSENT_BYTES).
 *
 *   npx bun bench/run.ts slow-readers [--streams 500] [--flags 12] [--heartbeat-ms 2000]
 *
 * One token, a scope of `--flags` flags of about 320 kB each (four strategies of eight constraints
 * of 250 values), `--streams` connections that send the request and then never read. Measured
 * after the streams opened, and after two heartbeat intervals. Linux only (/proc).
 */
import net from 'node:net'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { removeDir, SECRET, startServer, tempDataDir } from './lib'

const { values } = parseArgs({ options: { streams: { type: 'string', default: '500' }, flags: { type: 'string', default: '12' }, 'heartbeat-ms': { type: 'string', default: '2000' } } })
const STREAMS = Number(values.streams)
const HEARTBEAT_MS = Number(values['heartbeat-ms'])

const dir = tempDataDir('bench-slow-readers-')
const server = await startServer(dir, { STREAMING_HEARTBEAT_MS: String(HEARTBEAT_MS), SYNC: 'false' })
try {
  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await fetch(server.base + path, { method, headers: { authorization: SECRET, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${await answer.text()}`)
    return answer.json().catch(() => null)
  }
  const bulky = (tag: string) => Array.from({ length: 250 }, (_, i) => `${tag}-user-${String(i).padStart(4, '0')}-${'x'.repeat(24)}`)
  for (let flag = 0; flag < Number(values.flags); flag++) {
    await call('POST', '/api/admin/projects/default/features', { name: `big-${flag}` })
    for (const part of ['a', 'b', 'c', 'd']) {
      const constraints = Array.from({ length: 8 }, (_, n) => ({ contextName: 'userId', operator: 'IN', values: bulky(`${part}${n}`) }))
      await call('POST', `/api/admin/projects/default/features/big-${flag}/environments/development/strategies`, { name: 'default', constraints })
    }
  }
  const token = await call('POST', '/api/admin/api-tokens', { tokenName: 'slow', type: 'client', environment: 'development' })
  const scopeBytes = (await (await fetch(`${server.base}/api/client/features`, { headers: { authorization: token.secret } })).text()).length
  const port = new URL(server.base).port
  const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024
  const tcpMiB = () => (Number(/TCP:.*mem (\d+)/.exec(readFileSync('/proc/net/sockstat', 'utf8'))![1]) * 4) / 1024
  const measure = () => ({ serverRssMiB: Math.round(rssMiB()), kernelTcpMiB: Math.round(tcpMiB()) })
  const before = measure()
  const sockets: net.Socket[] = []
  let reset = 0
  for (let i = 0; i < STREAMS; i++) {
    const socket = net.connect(Number(port), '127.0.0.1')
    socket.on('error', () => reset++)
    socket.on('connect', () => {
      socket.write(`GET /api/client/streaming HTTP/1.1\r\nHost: bench\r\nAuthorization: ${token.secret}\r\n\r\n`)
      socket.pause()
    })
    sockets.push(socket)
  }
  await Bun.sleep(1500)
  const opened = measure()
  await Bun.sleep(2 * HEARTBEAT_MS)
  const later = measure()
  // A paused socket notices the reset only when it reads: read a little of each, then count.
  for (const socket of sockets) socket.resume()
  await Bun.sleep(1000)
  console.log(JSON.stringify({ streams: STREAMS, scopeBytes, before, opened, afterTwoHeartbeats: later, cutOffByServer: reset }))
  for (const socket of sockets) socket.destroy()
} finally {
  await server.stop()
  removeDir(dir)
}

/**
 * Streaming: `streaming` (delivery to many streams, memory per stream, the cost of idle streams)
 * and `slow-readers` (streams whose clients never read). Run through bench/run.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { InMemStorageProvider, Unleash } from 'unleash-client'
import net from 'node:net'
import { heldElsewhere, holdStreams, until } from './clients'
import {
  authHeaders,
  cpuSeconds,
  fmt,
  type Load,
  loadAverage,
  median,
  percentile,
  removeDir,
  rssMiB,
  type RunningServer,
  SECRET,
  seedDataDir,
  startServer,
  table,
  tempDataDir,
  wrk,
} from './lib'

/**
 * Client API streaming (issue 20, "Must show"), run by hand:
 *
 *   npx bun bench/run.ts streaming [--streams 1000,10000] [--writes 20] [--sdk-writes 50] [--idle 10000] [--idle-rounds 3] [--seconds 10] [--runs 1]
 *
 * One server process (100 flags, fsync on as by default) and this process as the clients:
 * - delivery: N SSE streams held on raw sockets with a client token for default/production; the
 *   server's RSS before and after they connect gives the memory per stream; then `--writes` flag
 *   toggles in production, one at a time, and for each the time from the write's acknowledgement
 *   (its response received here) to the moment each stream's `unleash-updated` is read here; the
 *   figure asked for is the last stream's, whose p99 over the writes is reported, next to the
 *   write's own latency with and without the streams (the fan-out happens before the write answers);
 * - the official SDK (`unleash-client`, experimentalMode streaming), alone: from a write's
 *   acknowledgement to the SDK's copy showing it, `--sdk-writes` times;
 * - idle streams: PATCH throughput (wrk, a new description per request) and /health p99 (wrk)
 *   with no stream and with `--idle` streams open for another project (so the PATCHes send them
 *   nothing but heartbeats), `--idle-rounds` rounds in the same run, every other one with the
 *   streams first; the idle streams are held by a process of bench/clients.ts at nice 19, as SDKs on other
 *   machines would hold them, so that the clients' reading does not take the server's cores.
 * Prints every figure with the load average.
 */
export async function streaming() {
  const { values } = parseArgs({
    options: {
      streams: { type: 'string', default: '1000,10000' },
      writes: { type: 'string', default: '20' },
      'sdk-writes': { type: 'string', default: '50' },
      seconds: { type: 'string', default: '10' },
      runs: { type: 'string', default: '1' },
      idle: { type: 'string', default: '10000' },
      'idle-rounds': { type: 'string', default: '3' },
    },
  })
  const COUNTS = values.streams
    .split(',')
    .map(Number)
    .filter(count => count > 0)
  const WRITES = Number(values.writes)
  const SDK_WRITES = Number(values['sdk-writes'])
  const SECONDS = Number(values.seconds)
  const RUNS = Number(values.runs)
  const IDLE = Number(values.idle)
  const IDLE_ROUNDS = Number(values['idle-rounds'])

  async function admin(
    base: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: any }> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: authHeaders,
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    if (response.status >= 300) throw new Error(`${method} ${path} → ${response.status} ${text}`)
    return { status: response.status, body: text ? JSON.parse(text) : undefined }
  }

  async function clientToken(base: string, name: string, project: string): Promise<string> {
    return (
      await admin(base, 'POST', '/api/admin/api-tokens', {
        tokenName: name,
        type: 'client',
        projects: [project],
        environment: 'production',
      })
    ).body.secret
  }

  /** flag-0 in production: set on at start, every write turns it the other way (so each is a change). */
  let flagOn = true
  /** Toggles flag-0 in production; resolves to [sent, acknowledged] times. */
  async function toggle(base: string): Promise<[number, number]> {
    flagOn = !flagOn
    const sent = performance.now()
    await admin(
      base,
      'POST',
      `/api/admin/projects/default/features/flag-0/environments/production/${flagOn ? 'on' : 'off'}`,
    )
    return [sent, performance.now()]
  }

  async function settleGc(server: RunningServer) {
    // Let the server's heap settle (no admin route forces a GC): a few seconds of idleness.
    await Bun.sleep(3000)
    return rssMiB(server.pid)
  }

  interface Delivery {
    streams: number
    load: number
    rssBefore: number
    rssAfter: number
    connectMs: number
    lastP50: number
    lastP99: number
    allP99: number
    /** From the write sent (not acknowledged) to the last stream: the write's own latency included. */
    sentLastP99: number
    writeP50: number
    writeP50Alone: number
  }

  async function delivery(base: string, server: RunningServer, secret: string, count: number): Promise<Delivery> {
    const load = loadAverage()
    // The write alone first: its latency without streams.
    const alone: number[] = []
    for (let i = 0; i < WRITES; i++) {
      const [sent, ack] = await toggle(base)
      alone.push(ack - sent)
    }
    const rssBefore = await settleGc(server)
    const arrivals: number[][] = []
    const connectStarted = performance.now()
    const streams = await holdStreams(base, secret, count, (index, updates) => {
      ;(arrivals[updates - 1] ??= [])[index] = performance.now()
    })
    const connectMs = performance.now() - connectStarted
    const rssAfter = await settleGc(server)
    const last: number[] = []
    const sentLast: number[] = []
    const all: number[] = []
    const writeTimes: number[] = []
    for (let i = 0; i < WRITES; i++) {
      const [sent, ack] = await toggle(base)
      writeTimes.push(ack - sent)
      await until(() => streams.held.every(state => state.updates > i), 60_000, `write ${i} delivered`)
      const times = arrivals[i]
      let latest = 0
      for (const time of times) {
        all.push(Math.max(0, time - ack))
        latest = Math.max(latest, time)
      }
      last.push(Math.max(0, latest - ack))
      sentLast.push(latest - sent)
      await Bun.sleep(50)
    }
    streams.close()
    await until(() => true, 0, '')
    const sorted = (list: number[]) => [...list].sort((a, b) => a - b)
    return {
      streams: count,
      load,
      rssBefore,
      rssAfter,
      connectMs,
      lastP50: percentile(sorted(last), 50),
      lastP99: percentile(sorted(last), 99),
      allP99: percentile(sorted(all), 99),
      sentLastP99: percentile(sorted(sentLast), 99),
      writeP50: median(writeTimes),
      writeP50Alone: median(alone),
    }
  }

  async function sdkLatency(
    base: string,
    secret: string,
  ): Promise<{ p50: number; p99: number; max: number; load: number }> {
    const load = loadAverage()
    const client = new Unleash({
      url: `${base}/api`,
      appName: 'bench-streaming',
      customHeaders: { Authorization: secret },
      disableMetrics: true,
      storageProvider: new InMemStorageProvider(),
      experimentalMode: { type: 'streaming' } as any,
    })
    await new Promise(resolve => client.once('synchronized', resolve))
    const repository = (client as any).repository
    const latencies: number[] = []
    for (let i = 0; i < SDK_WRITES; i++) {
      const expected = !flagOn
      let seenAt = 0
      const seen = new Promise<void>(resolve => {
        const check = () => {
          if (repository.getToggle('flag-0')?.enabled === expected) {
            seenAt = performance.now()
            repository.off('changed', check)
            resolve()
          }
        }
        repository.on('changed', check)
      })
      const [, ack] = await toggle(base)
      await seen
      latencies.push(Math.max(0, seenAt - ack))
      await Bun.sleep(20)
    }
    client.destroy()
    const sorted = [...latencies].sort((a, b) => a - b)
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1)!, load }
  }

  /** The server's CPU use while nothing is asked of it, with and without `IDLE` streams: what holding them costs, whatever the machine's load. */
  async function idleCpu(
    server: RunningServer,
    idleSecret: string,
    seconds: number,
  ): Promise<{ none: number; idle: number }> {
    const measure = async () => {
      const before = cpuSeconds(server.pid)
      await Bun.sleep(seconds * 1000)
      return (cpuSeconds(server.pid) - before) / seconds
    }
    const none = await measure()
    const streams = await holdStreams(server.base, idleSecret, IDLE, () => {})
    await Bun.sleep(2000)
    const idle = await measure()
    streams.close()
    return { none, idle }
  }

  interface IdleRound {
    none: { patch: Load; health: Load }
    idle: { patch: Load; health: Load }
  }

  /** `--idle-rounds` rounds of (no stream, then `IDLE` idle streams): the machine's drift shows between rounds. */
  async function idleComparison(base: string, dir: string, idleSecret: string): Promise<IdleRound[]> {
    const lua = join(dir, 'patch.lua')
    writeFileSync(
      lua,
      `counter = 0
request = function()
  counter = counter + 1
  return wrk.format("PATCH", "/api/admin/projects/default/features/flag-1", nil, '[{"op":"replace","path":"/description","value":"d' .. counter .. '"}]')
end
`,
    )
    const measure = async () => ({
      patch: await wrk(`${base}/api/admin/projects/default/features/flag-1`, authHeaders, SECONDS, ['-s', lua]),
      health: await wrk(`${base}/health`, {}, SECONDS),
    })
    const rounds: IdleRound[] = []
    for (let round = 0; round < IDLE_ROUNDS; round++) {
      // Every other round measures the streams first, so that neither side always comes second
      // (after the other's garbage, or a warmer cache).
      let none: IdleRound['none'] | undefined
      if (round % 2 === 0) none = await measure()
      const streams = await heldElsewhere(base, idleSecret, IDLE)
      // Opening 10,000 streams is work of its own (connections, hydrations, garbage): let it settle,
      // so that the slice measures streams held, not streams being opened.
      await Bun.sleep(3000)
      const idle = await measure()
      await streams.close()
      await Bun.sleep(2000)
      none ??= await measure()
      rounds.push({ none, idle })
      console.log(JSON.stringify({ round, none, idle }))
    }
    return rounds
  }

  const results: {
    deliveries: Delivery[]
    sdk: Awaited<ReturnType<typeof sdkLatency>>[]
    idle: IdleRound[]
    cpu: { none: number; idle: number }[]
  } = { deliveries: [], sdk: [], idle: [], cpu: [] }
  for (let run = 0; run < RUNS; run++) {
    const dir = tempDataDir('bench-streaming-')
    seedDataDir(join(dir, 'data'), { events: 0, flags: 100 })
    const server = await startServer(join(dir, 'data'), {
      LOG_LEVEL: 'warn',
      STREAMING_MAX_STREAMS: String(Math.max(0, ...COUNTS, IDLE) + 100),
    })
    try {
      await admin(server.base, 'POST', '/api/admin/projects', { id: 'idle', name: 'idle' })
      await admin(server.base, 'POST', '/api/admin/projects/default/features/flag-0/environments/production/on')
      flagOn = true
      const secret = await clientToken(server.base, 'bench', 'default')
      const idleSecret = await clientToken(server.base, 'bench-idle', 'idle')
      for (const count of COUNTS) {
        const result = await delivery(server.base, server, secret, count)
        results.deliveries.push(result)
        console.log(JSON.stringify(result))
        await Bun.sleep(2000)
      }
      if (SDK_WRITES > 0) {
        const sdk = await sdkLatency(server.base, secret)
        results.sdk.push(sdk)
        console.log(JSON.stringify({ sdk }))
      }
      if (IDLE > 0) {
        const cpu = await idleCpu(server, idleSecret, 30)
        results.cpu.push(cpu)
        console.log(JSON.stringify({ cpu }))
        results.idle.push(...(await idleComparison(server.base, dir, idleSecret)))
      }
    } finally {
      await server.stop()
      removeDir(dir)
    }
  }

  console.log(
    '\nDelivery of one flag change to every stream (ms from the write acknowledged to the stream reading it)\n',
  )
  console.log(
    table(
      [
        'streams',
        'ack → last stream p50',
        'ack → last stream p99',
        'ack → any stream p99',
        'sent → last stream p99',
        'write p50 with streams / alone',
        'server RSS before → after',
        'per stream',
        'connect all',
        'load',
      ],
      results.deliveries.map(d => [
        d.streams,
        `${fmt(d.lastP50)} ms`,
        `${fmt(d.lastP99)} ms`,
        `${fmt(d.allP99)} ms`,
        `${fmt(d.sentLastP99)} ms`,
        `${fmt(d.writeP50, 2)} / ${fmt(d.writeP50Alone, 2)} ms`,
        `${fmt(d.rssBefore, 0)} → ${fmt(d.rssAfter, 0)} MiB`,
        `${fmt(((d.rssAfter - d.rssBefore) * 1024) / d.streams, 1)} KiB`,
        `${fmt(d.connectMs / 1000, 1)} s`,
        fmt(d.load, 2),
      ]),
    ),
  )
  console.log('\nThe official SDK in streaming mode: write acknowledged → its copy shows the change\n')
  console.log(
    table(
      ['writes', 'p50', 'p99', 'max', 'load'],
      results.sdk.map(s => [
        SDK_WRITES,
        `${fmt(s.p50, 2)} ms`,
        `${fmt(s.p99, 2)} ms`,
        `${fmt(s.max, 2)} ms`,
        fmt(s.load, 2),
      ]),
    ),
  )
  if (results.idle.length > 0) {
    console.log(
      `\nAdmin API with ${IDLE} idle streams open (another project) next to none, alternating in the same run\n`,
    )
    const rows = results.idle.map((r, index) => [
      String(index + 1),
      `${fmt(r.none.patch.rps, 0)} → ${fmt(r.idle.patch.rps, 0)}`,
      fmt(r.idle.patch.rps / r.none.patch.rps, 2),
      `${fmt(r.none.patch.p99, 1)} → ${fmt(r.idle.patch.p99, 1)} ms`,
      `${fmt(r.none.health.rps, 0)} → ${fmt(r.idle.health.rps, 0)}`,
      `${fmt(r.none.health.p99, 2)} → ${fmt(r.idle.health.p99, 2)} ms`,
      fmt(r.idle.health.p99 / r.none.health.p99, 2),
      [r.none.patch.load, r.idle.patch.load].map(l => fmt(l, 2)).join(', '),
    ])
    const m = (pick: (r: IdleRound) => number) => median(results.idle.map(pick))
    rows.push([
      'median',
      `${fmt(
        m(r => r.none.patch.rps),
        0,
      )} → ${fmt(
        m(r => r.idle.patch.rps),
        0,
      )}`,
      fmt(
        m(r => r.idle.patch.rps / r.none.patch.rps),
        2,
      ),
      `${fmt(
        m(r => r.none.patch.p99),
        1,
      )} → ${fmt(
        m(r => r.idle.patch.p99),
        1,
      )} ms`,
      `${fmt(
        m(r => r.none.health.rps),
        0,
      )} → ${fmt(
        m(r => r.idle.health.rps),
        0,
      )}`,
      `${fmt(
        m(r => r.none.health.p99),
        2,
      )} → ${fmt(
        m(r => r.idle.health.p99),
        2,
      )} ms`,
      fmt(
        m(r => r.idle.health.p99 / r.none.health.p99),
        2,
      ),
      '',
    ])
    console.log(
      `\nServer CPU while idle (30 s, heartbeats every 15 s): ${results.cpu.map(c => `${fmt(c.none * 1000, 1)} ms/s with no stream, ${fmt(c.idle * 1000, 1)} ms/s with ${IDLE}`).join('; ')}\n`,
    )
    console.log(
      table(
        [
          'round',
          'PATCH req/s none → idle streams',
          'ratio',
          'PATCH p99 none → idle',
          '/health req/s none → idle',
          '/health p99 none → idle',
          'p99 ratio',
          'loads',
        ],
        rows,
      ),
    )
  }
  process.exit(0)
}

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
export async function slowReaders() {
  const { values } = parseArgs({
    options: {
      streams: { type: 'string', default: '500' },
      flags: { type: 'string', default: '12' },
      'heartbeat-ms': { type: 'string', default: '2000' },
    },
  })
  const STREAMS = Number(values.streams)
  const HEARTBEAT_MS = Number(values['heartbeat-ms'])

  const dir = tempDataDir('bench-slow-readers-')
  const server = await startServer(dir, { STREAMING_HEARTBEAT_MS: String(HEARTBEAT_MS), SYNC: 'false' })
  try {
    const call = async (method: string, path: string, body?: unknown) => {
      const answer = await fetch(server.base + path, {
        method,
        headers: { authorization: SECRET, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${await answer.text()}`)
      return answer.json().catch(() => null)
    }
    const bulky = (tag: string) =>
      Array.from({ length: 250 }, (_, i) => `${tag}-user-${String(i).padStart(4, '0')}-${'x'.repeat(24)}`)
    for (let flag = 0; flag < Number(values.flags); flag++) {
      await call('POST', '/api/admin/projects/default/features', { name: `big-${flag}` })
      for (const part of ['a', 'b', 'c', 'd']) {
        const constraints = Array.from({ length: 8 }, (_, n) => ({
          contextName: 'userId',
          operator: 'IN',
          values: bulky(`${part}${n}`),
        }))
        await call('POST', `/api/admin/projects/default/features/big-${flag}/environments/development/strategies`, {
          name: 'default',
          constraints,
        })
      }
    }
    const token = await call('POST', '/api/admin/api-tokens', {
      tokenName: 'slow',
      type: 'client',
      environment: 'development',
    })
    const scopeBytes = (
      await (await fetch(`${server.base}/api/client/features`, { headers: { authorization: token.secret } })).text()
    ).length
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
    console.log(
      JSON.stringify({
        streams: STREAMS,
        scopeBytes,
        before,
        opened,
        afterTwoHeartbeats: later,
        cutOffByServer: reset,
      }),
    )
    for (const socket of sockets) socket.destroy()
  } finally {
    await server.stop()
    removeDir(dir)
  }
}

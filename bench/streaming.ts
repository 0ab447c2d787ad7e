/**
 * Streaming: `streaming` (delivery to many streams, memory per stream, the cost of idle streams),
 * and the SSE streams it holds on raw sockets, in this process or in a holder process of their own
 * (`streaming.ts streams <base URL> <client token> <count>`, see heldElsewhere).
 */
import { join } from 'node:path'
import {
  api,
  authHeaders,
  cpuSeconds,
  createToken,
  fmt,
  fmtMedian,
  type Load,
  loadAverage,
  luaScript,
  median,
  options,
  removeDir,
  rssMiB,
  type RunningServer,
  seedDataDir,
  spread,
  startServer,
  table,
  tempDataDir,
  wrk,
} from './lib'
import { holds, officialSdk } from './sdk'

/**
 * `streaming`: client API streaming:
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
 *   streams first; the idle streams are held by a process of this file at nice 19, as SDKs on other
 *   machines would hold them, so that the clients' reading does not take the server's cores.
 * Prints every figure with the load average.
 */
export async function streaming() {
  const o = options({
    streams: '1000,10000',
    writes: 20,
    'sdk-writes': 50,
    seconds: 10,
    runs: 1,
    idle: 10000,
    'idle-rounds': 3,
  })
  const COUNTS = o.streams
    .split(',')
    .map(Number)
    .filter(count => count > 0)
  const { writes: WRITES, seconds: SECONDS, runs: RUNS, idle: IDLE } = o
  const [SDK_WRITES, IDLE_ROUNDS] = [o['sdk-writes'], o['idle-rounds']]

  /** flag-0 in production: set on at start, every write turns it the other way (so each is a change). */
  let flagOn = true
  /** Toggles flag-0 in production; resolves to [sent, acknowledged] times. */
  async function toggle(base: string): Promise<[number, number]> {
    flagOn = !flagOn
    const sent = performance.now()
    await api(
      base,
      'POST',
      `/api/admin/projects/default/features/flag-0/environments/production/${flagOn ? 'on' : 'off'}`,
    )
    return [sent, performance.now()]
  }

  /** The server's RSS once its heap has settled (no admin route forces a GC): after a few seconds of idleness. */
  const settled = async (server: RunningServer) => (await Bun.sleep(3000), rssMiB(server.pid))

  async function delivery(server: RunningServer, secret: string, count: number) {
    const load = loadAverage()
    // The write alone first: its latency without streams.
    const alone: number[] = []
    for (let i = 0; i < WRITES; i++) {
      const [sent, ack] = await toggle(server.base)
      alone.push(ack - sent)
    }
    const rssBefore = await settled(server)
    const arrivals: number[][] = []
    const connectStarted = performance.now()
    const streams = await holdStreams(server.base, secret, count, (index, updates) => {
      ;(arrivals[updates - 1] ??= [])[index] = performance.now()
    })
    const connectMs = performance.now() - connectStarted
    const rssAfter = await settled(server)
    const [last, sentLast, all, writeTimes] = [[], [], [], []] as number[][]
    for (let i = 0; i < WRITES; i++) {
      const [sent, ack] = await toggle(server.base)
      writeTimes.push(ack - sent)
      await until(() => streams.held.every(state => state.updates > i), 60_000, `write ${i} delivered`)
      const latest = Math.max(...arrivals[i])
      for (const time of arrivals[i]) all.push(Math.max(0, time - ack))
      last.push(Math.max(0, latest - ack))
      sentLast.push(latest - sent)
      await Bun.sleep(50)
    }
    streams.close()
    const { p50: lastP50, p99: lastP99 } = spread(last)
    const [allP99, sentLastP99] = [spread(all).p99, spread(sentLast).p99]
    const writes = { writeP50: median(writeTimes), writeP50Alone: median(alone) }
    return { streams: count, load, rssBefore, rssAfter, connectMs, lastP50, lastP99, allP99, sentLastP99, ...writes }
  }

  async function sdkLatency(base: string, secret: string) {
    const load = loadAverage()
    const client = await officialSdk(base, secret, 'streaming')
    const latencies: number[] = []
    for (let i = 0; i < SDK_WRITES; i++) {
      const seen = holds(client, 'flag-0', !flagOn)
      const [, ack] = await toggle(base)
      latencies.push(Math.max(0, (await seen) - ack))
      await Bun.sleep(20)
    }
    client.destroy()
    return { ...spread(latencies), load }
  }

  /** The server's CPU use while nothing is asked of it, with and without `IDLE` streams: what holding them costs, whatever the machine's load. */
  async function idleCpu(server: RunningServer, idleSecret: string, seconds: number) {
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

  type IdleRound = Record<'none' | 'idle', { patch: Load; health: Load }>

  /** `--idle-rounds` rounds of (no stream, then `IDLE` idle streams): the machine's drift shows between rounds. */
  async function idleComparison(base: string, dir: string, idleSecret: string): Promise<IdleRound[]> {
    const lua = luaScript(
      dir,
      'patch',
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

  const results = {
    deliveries: [] as Awaited<ReturnType<typeof delivery>>[],
    sdk: [] as Awaited<ReturnType<typeof sdkLatency>>[],
    idle: [] as IdleRound[],
    cpu: [] as { none: number; idle: number }[],
  }
  for (let run = 0; run < RUNS; run++) {
    const dir = tempDataDir('bench-streaming-')
    seedDataDir(`${dir}/data`, { events: 0, flags: 100 })
    const streams = String(Math.max(0, ...COUNTS, IDLE) + 100)
    const server = await startServer(`${dir}/data`, { LOG_LEVEL: 'warn', STREAMING_MAX_STREAMS: streams })
    try {
      await api(server.base, 'POST', '/api/admin/projects', { id: 'idle', name: 'idle' })
      await api(server.base, 'POST', '/api/admin/projects/default/features/flag-0/environments/production/on')
      flagOn = true
      const secret = await createToken(server.base, 'client', 'production', ['default'])
      const idleSecret = await createToken(server.base, 'client', 'production', ['idle'])
      for (const count of COUNTS) {
        results.deliveries.push(await delivery(server, secret, count))
        console.log(JSON.stringify(results.deliveries.at(-1)))
        await Bun.sleep(2000)
      }
      if (SDK_WRITES > 0) {
        results.sdk.push(await sdkLatency(server.base, secret))
        console.log(JSON.stringify({ sdk: results.sdk.at(-1) }))
      }
      if (IDLE > 0) {
        results.cpu.push(await idleCpu(server, idleSecret, 30))
        console.log(JSON.stringify({ cpu: results.cpu.at(-1) }))
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
  const deliveryRows = results.deliveries.map(d => [
    ...[d.streams, ...[d.lastP50, d.lastP99, d.allP99, d.sentLastP99].map(t => `${fmt(t)} ms`)],
    `${fmt(d.writeP50, 2)} / ${fmt(d.writeP50Alone, 2)} ms`,
    `${fmt(d.rssBefore, 0)} → ${fmt(d.rssAfter, 0)} MiB`,
    `${fmt(((d.rssAfter - d.rssBefore) * 1024) / d.streams, 1)} KiB`,
    `${fmt(d.connectMs / 1000, 1)} s`,
    fmt(d.load, 2),
  ])
  const deliveryColumns = ['streams', 'ack → last stream p50', 'ack → last stream p99', 'ack → any stream p99']
  deliveryColumns.push('sent → last stream p99', 'write p50 with streams / alone', 'server RSS before → after')
  console.log(table([...deliveryColumns, 'per stream', 'connect all', 'load'], deliveryRows))
  console.log('\nThe official SDK in streaming mode: write acknowledged → its copy shows the change\n')
  const sdkRows = results.sdk.map(s => [
    SDK_WRITES,
    `${fmt(s.p50, 2)} ms`,
    `${fmt(s.p99, 2)} ms`,
    `${fmt(s.max, 2)} ms`,
    fmt(s.load, 2),
  ])
  console.log(table(['writes', 'p50', 'p99', 'max', 'load'], sdkRows))
  if (results.idle.length === 0) process.exit(0)
  console.log(
    `\nAdmin API with ${IDLE} idle streams open (another project) next to none, alternating in the same run\n`,
  )
  /** A figure with and without the idle streams, "none → idle", and the ratio idle / none. */
  const change = (digits: number, pick: (side: IdleRound['none']) => number, rounds = results.idle) => [
    `${fmtMedian(rounds, digits, r => pick(r.none))} → ${fmtMedian(rounds, digits, r => pick(r.idle))}`,
    fmtMedian(rounds, 2, r => pick(r.idle) / pick(r.none)),
  ]
  const cells = (rounds: IdleRound[]) => {
    const [patch, patchRatio] = change(0, s => s.patch.rps, rounds)
    const [patchP99] = change(1, s => s.patch.p99, rounds)
    const [health] = change(0, s => s.health.rps, rounds)
    const [healthP99, healthRatio] = change(2, s => s.health.p99, rounds)
    return [patch, patchRatio, `${patchP99} ms`, health, `${healthP99} ms`, healthRatio]
  }
  const rows = results.idle.map((r, index) => [
    String(index + 1),
    ...cells([r]),
    [r.none.patch.load, r.idle.patch.load].map(l => fmt(l, 2)).join(', '),
  ])
  rows.push(['median', ...cells(results.idle), ''])
  const cpu = results.cpu.map(
    c => `${fmt(c.none * 1000, 1)} ms/s with no stream, ${fmt(c.idle * 1000, 1)} ms/s with ${IDLE}`,
  )
  console.log(`\nServer CPU while idle (30 s, heartbeats every 15 s): ${cpu.join('; ')}\n`)
  console.log(
    table(
      [
        ...['round', 'PATCH req/s none → idle streams', 'ratio', 'PATCH p99 none → idle'],
        ...['/health req/s none → idle', '/health p99 none → idle', 'p99 ratio', 'loads'],
      ],
      rows,
    ),
  )
  process.exit(0)
}

const MARKER = 'event: unleash-updated'

interface Held {
  /** `unleash-updated` messages read so far. */
  updates: number
  connected: boolean
  tail: string
}

/** N SSE streams on raw sockets; `onUpdate(index, count)` when stream `index` reads its count-th update. */
async function holdStreams(
  base: string,
  secret: string,
  count: number,
  onUpdate: (index: number, updates: number) => void,
) {
  const url = new URL(base)
  const request = `GET /api/client/streaming HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${secret}\r\nAccept: text/event-stream\r\n\r\n`
  const held: Held[] = []
  const sockets: { end(): void }[] = []
  const batch = 200
  for (let start = 0; start < count; start += batch) {
    const opening: Promise<unknown>[] = []
    for (let index = start; index < Math.min(count, start + batch); index++) {
      const state: Held = { updates: 0, connected: false, tail: '' }
      held.push(state)
      opening.push(
        Bun.connect({
          hostname: url.hostname,
          port: Number(url.port),
          socket: {
            open: socket => void socket.write(request),
            data: (_socket, chunk) => {
              const text = state.tail + chunk.toString('latin1')
              if (!state.connected && text.includes('unleash-connected')) state.connected = true
              let at = text.indexOf(MARKER)
              while (at >= 0) {
                state.updates++
                onUpdate(index, state.updates)
                at = text.indexOf(MARKER, at + MARKER.length)
              }
              state.tail = text.slice(-MARKER.length)
            },
          },
        }).then(socket => sockets.push(socket)),
      )
    }
    await Promise.all(opening)
  }
  await until(() => held.every(state => state.connected), 120_000, 'streams connected')
  return {
    held,
    close: () => {
      for (const socket of sockets) socket.end()
    },
  }
}

async function until(condition: () => boolean, ms: number, what: string) {
  const deadline = performance.now() + ms
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(2)
  }
}

/** `count` idle streams held by a holder process (holdStreamsProcess) at the lowest priority. */
async function heldElsewhere(base: string, secret: string, count: number): Promise<{ close(): Promise<void> }> {
  const holderArgs = [process.execPath, join(import.meta.dir, 'streaming.ts'), 'streams', base, secret, String(count)]
  const holder = Bun.spawn(['nice', '-n', '19', ...holderArgs], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' })
  const reader = (holder.stdout as ReadableStream<Uint8Array>).getReader()
  let said = ''
  while (!said.includes('connected')) {
    const { done, value } = await reader.read()
    if (done) throw new Error(`the stream holder exited before its streams connected (${await holder.exited})`)
    said += new TextDecoder().decode(value)
  }
  return {
    async close() {
      holder.stdin.end()
      await holder.exited
    },
  }
}

/**
 * Holds idle SSE streams in a process of its own, started at the lowest priority (`nice -n 19`):
 * in production the SDKs behind idle streams run on other machines, and here their reading of
 * heartbeats would otherwise take the same two cores as the server and wrk, so that a slower
 * /health with streams open measured the clients as much as the server. Prints `connected <count>`
 * once every stream has its hydration, and closes them all when its standard input ends (the
 * benchmark kills it, or closes the pipe).
 */
async function holdStreamsProcess([base, secret, count]: string[]) {
  const streams = await holdStreams(base!, secret!, Number(count), () => {})
  console.log(`connected ${count}`)
  for await (const _ of Bun.stdin.stream()) {
    // Nothing is sent; the loop ends when the pipe closes.
  }
  streams.close()
  process.exit(0)
}

if (import.meta.main && process.argv[2] === 'streams') await holdStreamsProcess(process.argv.slice(3))

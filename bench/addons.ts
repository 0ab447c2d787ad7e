/**
 * Integrations (docs/integrations.md):
 * - `addons`: PATCH throughput with 0 and with 10 integrations whose receiver takes 5 s to answer
 *   every request (concurrent writers, durable writes): a slow receiver must not slow writes;
 * - `addons-waiting`: what 100,000 waiting deliveries cost, in process: memory (the events of the
 *   in-memory log included), their bytes in the state, and making the checkpoint's JSON.
 */
import { Memory } from 'lowdb'
import { createServices, COLLECTIONS } from '../src/services'
import { FilesLog } from '../src/storage/files-log'
import { MemoryEventLog } from '../src/storage/event-log'
import { MemoryJournal } from '../src/storage/state-journal'
import { Store } from '../src/storage/store'
import type { StateDoc } from '../src/storage/records'
import { api, fmt, median, options, removeDir, SECRET, startServer, table, tempDataDir } from './lib'

/** A receiver that answers every request after `delayMs`. */
function slowReceiver(delayMs: number) {
  let received = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      await request.text()
      received++
      await Bun.sleep(delayMs)
      return new Response('ok')
    },
  })
  return { url: `http://127.0.0.1:${server.port}/hook`, received: () => received, stop: () => server.stop(true) }
}

async function patchRun(integrations: number, receiverUrl: string, seconds: number, clients: number) {
  const dir = tempDataDir('bench-addons-')
  const server = await startServer(dir, { LOG_LEVEL: 'warn' })
  try {
    for (let i = 0; i < integrations; i++)
      await api(server.base, 'POST', '/api/admin/addons', {
        provider: 'webhook',
        enabled: true,
        parameters: { url: receiverUrl, signingSecret: `secret-${i}` },
        events: ['feature-metadata-updated'],
      })
    for (let i = 0; i < clients; i++)
      await api(server.base, 'POST', '/api/admin/projects/default/features', { name: `bench-${i}` })
    let done = 0
    let failed = 0
    const latencies: number[] = []
    const until = performance.now() + seconds * 1000
    await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        for (let n = 0; performance.now() < until; n++) {
          const started = performance.now()
          const response = await fetch(`${server.base}/api/admin/projects/default/features/bench-${client}`, {
            method: 'PATCH',
            headers: { authorization: SECRET, 'content-type': 'application/json' },
            body: JSON.stringify([{ op: 'replace', path: '/description', value: `change ${n}` }]),
          })
          await response.arrayBuffer()
          if (response.ok) done++
          else failed++
          latencies.push(performance.now() - started)
        }
      }),
    )
    latencies.sort((a, b) => a - b)
    const waiting =
      integrations === 0 ? 0 : (await api(server.base, 'GET', '/api/admin/addons/1/events')).waitingCount * integrations
    return {
      perSecond: done / seconds,
      failed,
      p50: latencies[Math.floor(latencies.length / 2)],
      p99: latencies[Math.floor(latencies.length * 0.99)],
      waiting,
    }
  } finally {
    await server.stop()
    removeDir(dir)
  }
}

export async function addonsPatch() {
  const opts = options({ runs: 3, seconds: 10, clients: 8, delay: 5000 })
  const receiver = slowReceiver(opts.delay)
  const rows: (string | number)[][] = []
  try {
    const results: Record<number, Awaited<ReturnType<typeof patchRun>>[]> = { 0: [], 10: [] }
    for (let run = 0; run < opts.runs; run++) {
      // In turn, so that a change in the machine's load falls on both.
      for (const integrations of run % 2 === 0 ? [0, 10] : [10, 0])
        results[integrations].push(await patchRun(integrations, receiver.url, opts.seconds, opts.clients))
    }
    for (const integrations of [0, 10]) {
      const runs = results[integrations]
      rows.push([
        integrations,
        runs.map(r => fmt(r.perSecond, 0)).join(' / '),
        fmt(median(runs.map(r => r.p50)), 1),
        fmt(median(runs.map(r => r.p99)), 1),
        runs.reduce((sum, r) => sum + r.failed, 0),
        median(runs.map(r => r.waiting)),
      ])
    }
  } finally {
    receiver.stop()
  }
  console.log(
    `PATCH /api/admin/projects/default/features/:name, ${opts.clients} writers, ${opts.seconds} s per run, receiver answering after ${opts.delay} ms`,
  )
  console.log(
    table(['integrations', 'PATCH/s per run', 'p50 ms', 'p99 ms', 'failed', 'deliveries waiting at the end'], rows),
  )
}

export async function addonsWaiting() {
  const opts = options({ waiting: 100_000 })
  const store = await Store.open(
    new FilesLog({ checkpoint: new Memory<StateDoc>(), journal: new MemoryJournal(), events: new MemoryEventLog() }),
    { collections: COLLECTIONS },
  )
  // A receiver that never answers within the deadline: every delivery stays waiting.
  const services = createServices(store, { addons: { timeoutMs: 3_600_000 } })
  const hang = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Promise<Response>(() => {}) })
  const actor = { name: 'bench', userId: null }
  await store.transact(actor, tx =>
    tx.put('addons', '1', {
      id: 1,
      provider: 'webhook',
      enabled: true,
      description: '',
      parameters: { url: `http://127.0.0.1:${hang.port}/`, signingSecret: 'x' },
      events: ['feature-metadata-updated'],
      projects: [],
      environments: [],
      createdAt: tx.now,
    }),
  )
  Bun.gc(true)
  const before = process.memoryUsage()
  for (let made = 0; made < opts.waiting; made += 1000)
    await store.transact(actor, tx => {
      for (let i = 0; i < 1000; i++)
        tx.appendEvent({
          type: 'feature-metadata-updated',
          project: 'default',
          featureName: `f-${(made + i) % 500}`,
          data: { description: `change ${made + i}` },
          preData: { description: '' },
        })
    })
  Bun.gc(true)
  const after = process.memoryUsage()
  const bytes = Buffer.byteLength(JSON.stringify(store.state.addonDeliveries))
  const started = performance.now()
  const stateBytes = Buffer.byteLength(JSON.stringify(store.state))
  const checkpointMs = performance.now() - started
  const waiting = services.addons.deliveryLog('1').waitingCount
  services.addonDispatcher.close()
  hang.stop(true)
  console.log(
    table(
      [
        'waiting deliveries',
        'heap added',
        'RSS added',
        'their bytes in state.json',
        'per delivery',
        'state.json made (JSON)',
      ],
      [
        [
          waiting,
          `${fmt((after.heapUsed - before.heapUsed) / 2 ** 20, 1)} MiB`,
          `${fmt((after.rss - before.rss) / 2 ** 20, 1)} MiB`,
          `${fmt(bytes / 2 ** 20, 1)} MiB`,
          `${fmt(bytes / waiting, 0)} B`,
          `${fmt(stateBytes / 2 ** 20, 1)} MiB in ${fmt(checkpointMs, 0)} ms`,
        ],
      ],
    ),
  )
  process.exit(0)
}

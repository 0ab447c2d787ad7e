/**
 * The process's metrics, under the names, HELP texts and units of prom-client's default metrics
 * (which Unleash uses, so Unleash's and Node.js dashboards find them), read directly: CPU time from
 * `process.cpuUsage()` (since the process started), resident and virtual memory from
 * `/proc/self/status`, open file descriptors from `/proc/self/fd`, their limit from
 * `/proc/self/limits`, the JS heap in use and external memory from `process.memoryUsage()`, and
 * the event loop's delay from `monitorEventLoopDelay` (reset at each scrape; NaN when it took no
 * sample since the last) and from how long a `setImmediate` waits during the scrape.
 *
 * Where there is no `/proc` (macOS), the resident memory comes from `process.memoryUsage()` and the
 * metrics that need `/proc` (virtual memory, open and maximum file descriptors) are left out
 * rather than made up.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { Registry } from './prometheus'

/**
 * prom-client's default metrics that Bun does not back with real figures, checked on Bun 1.4, and
 * so not made: VmData, which prom-client reports as the heap, is gigabytes of address space Bun
 * reserves; `heapTotal` comes out smaller than `heapUsed`; heap spaces are all zero; active handles,
 * requests and resources are always empty lists; no GC entries reach a PerformanceObserver; and the
 * "Node.js version" is the one Bun claims to be compatible with.
 */
export const NOT_ON_BUN = [
  'process_heap_bytes',
  'nodejs_heap_size_total_bytes',
  'nodejs_heap_space_size_total_bytes',
  'nodejs_heap_space_size_used_bytes',
  'nodejs_heap_space_size_available_bytes',
  'nodejs_active_resources',
  'nodejs_active_resources_total',
  'nodejs_active_handles',
  'nodejs_active_handles_total',
  'nodejs_active_requests',
  'nodejs_active_requests_total',
  'nodejs_gc_duration_seconds',
  'nodejs_version_info',
]

/** A `/proc` file's text, or null where there is none. */
function proc(path: string): string | null {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return null
  }
}

/** `VmRSS:   38216 kB` and the like, in bytes. */
function statusBytes(status: string, field: string): number {
  const match = new RegExp(`^${field}:\\s*(\\d+) kB`, 'm').exec(status)
  return match ? Number(match[1]) * 1024 : Number.NaN
}

type Delays = ReturnType<typeof monitorEventLoopDelay>

/** Each figure of the event loop's recorded delays: its name, HELP text, and its value in nanoseconds. */
const LAG_FIGURES: readonly [string, string, (delays: Delays) => number][] = [
  ['min', 'The minimum recorded event loop delay.', delays => delays.min],
  ['max', 'The maximum recorded event loop delay.', delays => delays.max],
  ['mean', 'The mean of the recorded event loop delays.', delays => delays.mean],
  ['stddev', 'The standard deviation of the recorded event loop delays.', delays => delays.stddev],
  ['p50', 'The 50th percentile of the recorded event loop delays.', delays => delays.percentile(50)],
  ['p90', 'The 90th percentile of the recorded event loop delays.', delays => delays.percentile(90)],
  ['p99', 'The 99th percentile of the recorded event loop delays.', delays => delays.percentile(99)],
]

/** The event loop's delay monitor, started (as prom-client's: a sample every 10 ms), or null where the runtime has none. */
function startDelayMonitor(): Delays | null {
  try {
    const delays = monitorEventLoopDelay({ resolution: 10 })
    delays.enable()
    return delays
  } catch {
    return null
  }
}

function makeProcessMetrics() {
  const registry = new Registry()
  const startTime = Math.round(Date.now() / 1000 - process.uptime())
  const hasProc = proc('/proc/self/status') !== null
  const maxFds = Number(/^Max open files\s+(\d+)/m.exec(proc('/proc/self/limits') ?? '')?.[1] ?? Number.NaN)
  const delays = startDelayMonitor()

  // Read once per scrape, before the metrics are written.
  let cpu: NodeJS.CpuUsage = { user: 0, system: 0 }
  let status = ''
  let memory: Pick<NodeJS.MemoryUsage, 'rss' | 'heapUsed' | 'external'> = { rss: 0, heapUsed: 0, external: 0 }
  let lagSeconds = 0

  const gauge = (name: string, help: string, read: () => number) => registry.collected('gauge', name, help, read)
  const counter = (name: string, help: string, read: () => number) => registry.collected('counter', name, help, read)
  counter('process_cpu_user_seconds_total', 'Total user CPU time spent in seconds.', () => cpu.user / 1e6)
  counter('process_cpu_system_seconds_total', 'Total system CPU time spent in seconds.', () => cpu.system / 1e6)
  counter(
    'process_cpu_seconds_total',
    'Total user and system CPU time spent in seconds.',
    () => (cpu.user + cpu.system) / 1e6,
  )
  gauge('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', () => startTime)
  gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () =>
    hasProc ? statusBytes(status, 'VmRSS') : memory.rss,
  )
  if (hasProc) {
    gauge('process_virtual_memory_bytes', 'Virtual memory size in bytes.', () => statusBytes(status, 'VmSize'))
    // Less the descriptor that reading the directory opened.
    gauge('process_open_fds', 'Number of open file descriptors.', () => readdirSync('/proc/self/fd').length - 1)
  }
  if (!Number.isNaN(maxFds)) gauge('process_max_fds', 'Maximum number of open file descriptors.', () => maxFds)
  gauge('nodejs_eventloop_lag_seconds', 'Lag of event loop in seconds.', () => lagSeconds)
  // No sample since the last scrape (the loop was busy all along, or scrapes came fast): no figures.
  if (delays)
    for (const [figure, help, read] of LAG_FIGURES)
      gauge(`nodejs_eventloop_lag_${figure}_seconds`, help, () =>
        delays.count === 0 ? Number.NaN : read(delays) / 1e9,
      )
  gauge('nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', () => memory.heapUsed)
  gauge('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', () => memory.external)

  return async function render(): Promise<string> {
    const started = performance.now()
    await new Promise(resolve => setImmediate(resolve))
    lagSeconds = (performance.now() - started) / 1000
    cpu = process.cpuUsage()
    status = hasProc ? (proc('/proc/self/status') ?? '') : ''
    memory = process.memoryUsage()
    // The delays since the last scrape are written, then recording starts again.
    const text = registry.render()
    delays?.reset()
    return text
  }
}

let processMetrics: (() => Promise<string>) | undefined

/**
 * The process's metrics belong to the process, not to an app: made once and shared by every app in
 * it (a test run makes hundreds, and each would otherwise keep an event-loop monitor). The first
 * call starts the event-loop monitor; the function it returns writes the metrics' text.
 */
export function processMetricsOnce(): () => Promise<string> {
  processMetrics ??= makeProcessMetrics()
  return processMetrics
}

/**
 * The SDK metrics' CPU per report, this checkout against another, in one process, run by hand:
 *
 *   git archive <commit> src | tar -x -C /tmp/base     (the checkout to compare with)
 *   npx bun bench/run.ts metrics-cpu --base /tmp/base [--rounds 10] [--reports 20000]
 *
 * Each side opens its own data directory of 1,000 flags and its own services (from its own src/);
 * then, round after round, each side in turn (the order alternating) counts `reports` reports of
 * an SDK that evaluated 20 flags (yes 1, no 0, variants on five of them), from 20 applications,
 * through MetricsService.report, with a flush every 2,000 reports, on the same injected clock, and
 * the process's CPU time (user + system) is divided by the reports. Taking turns in one process
 * shares whatever else the machine runs between both sides. Prints each round and the medians.
 */
import { openStoreOf } from './cost-process'
import { join } from 'node:path'
import { fmt, options, withDataDir } from './lib'

const FLAGS = 1000
const REPORTED = 20
const FLUSH_EVERY = Number(process.env.FLUSH_EVERY ?? 2000)

interface Side {
  name: string
  report: (app: number) => void
  flush: () => Promise<void>
  close: () => Promise<void>
}

async function openSide(name: string, root: string, dir: string, clock: () => Date): Promise<Side> {
  const { createServices } = await import(join(root, 'src/services.ts'))
  const store = await (await openStoreOf(root))(dir, { sync: false })
  const services = createServices(store, { metricsFlushMs: 3_600_000, metricsClock: clock })
  const toggles: Record<string, { yes: number; no: number; variants: Record<string, number> }> = {}
  for (let i = 0; i < REPORTED; i++) toggles[`flag-${i}`] = { yes: 1, no: 0, variants: i % 4 === 0 ? { blue: 1 } : {} }
  const bodies = Array.from({ length: 20 }, (_, app) => ({
    appName: `app-${app}`,
    instanceId: `app-${app}-1`,
    bucket: { start: 0, stop: 0, toggles },
  }))
  const scope = { projects: ['*'], environment: 'development' }
  return {
    name,
    report: app => services.metrics.report(scope, bodies[app], null),
    flush: () => services.metrics.flush(),
    close: async () => {
      await store.close()
    },
  }
}

async function round(side: Side, reports: number): Promise<number> {
  const before = process.cpuUsage()
  for (let i = 0; i < reports; i++) {
    side.report(i % 20)
    if ((i + 1) % FLUSH_EVERY === 0) await side.flush()
  }
  await side.flush()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / reports
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export async function metricsCpu() {
  const { base, rounds: ROUNDS, reports: REPORTS } = options({ base: undefined, rounds: 10, reports: 20000 })
  if (!base) throw new Error('--base <dir> names the checkout to compare with (its src/)')
  let now = Date.UTC(2026, 0, 1, 10)
  const clock = () => new Date(now)
  await withDataDir({ events: 1, flags: FLAGS }, thisDir =>
    withDataDir({ events: 1, flags: FLAGS }, async baseDir => {
      const sides = [
        await openSide('base', base, baseDir, clock),
        await openSide('this', join(import.meta.dir, '..'), thisDir, clock),
      ]
      const times = new Map<string, number[]>(sides.map(side => [side.name, []]))
      for (let r = 0; r < ROUNDS; r++) {
        // Every other round a new hour, so that rounds open new hours as well as count into held ones.
        if (r % 2 === 0) now += 3_600_000
        const order = r % 2 === 0 ? sides : [...sides].reverse()
        const line: string[] = []
        for (const side of order) {
          const micros = await round(side, REPORTS)
          times.get(side.name)!.push(micros)
          line.push(`${side.name} ${fmt(micros)} µs`)
        }
        console.log(`round ${r + 1}: ${line.join(', ')}`)
      }
      for (const side of sides) await side.close()
      console.log(
        `\nCPU per report of ${REPORTED} flags (${REPORTS} reports a round, ${ROUNDS} rounds), median: ` +
          sides.map(side => `${side.name} ${fmt(median(times.get(side.name)!))} µs`).join(', '),
      )
    }),
  )
}

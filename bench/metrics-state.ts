/**
 * What SDK metrics held at their caps cost the store (issue 13, durability), run by hand:
 *
 *   bun bench/metrics-state.ts [--runs 3]
 *
 * Seeds a data directory with 1,000 flags (two environments) and 1,000 events, then fills the
 * metrics to their caps through the metrics service: 1,000 applications of 10 instances each
 * (10,000 instances, 10 strategies per application) and 50,000 usage rows (1,000 flags × 2
 * environments × 25 applications, 5 variants each: 250,000 variant counters). It then measures
 *
 * - the journal line of one flush: the first (everything new), one where every row, instance and
 *   application changed (every instance reported every flag), and one where every instance
 *   reported a single flag (the common case: 10,000 instances, 2,000 rows);
 * - the checkpoint written when the store closes (its time, and the size of state.json);
 * - opening the store again (read, check, replay) and building the metrics service's tables from
 *   it, `--runs` times;
 * - reading one journal line of 4, 16 and 64 MiB (storage/files.ts readLines), as a replay does.
 */
import { statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { APPLICATION_LIMITS } from '../src/features/metrics/app-registry'
import { USAGE_LIMITS } from '../src/features/metrics/usage-table'
import { createServices, JOURNAL_FILE, openStore, STATE_FILE } from '../src/services'
import { readLines } from '../src/storage/files'
import { fmt, median, removeDir, seedDataDir, table, tempDataDir } from './lib'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } })
const RUNS = Number(values.runs)
const FLAGS = 1000
const ENVIRONMENTS = ['development', 'production']
// One scope (an all-projects token) full to its own caps; the caps over all scopes are larger (see app-registry.ts).
const APPS = APPLICATION_LIMITS.applicationsPerScope
const INSTANCES_PER_APP = APPLICATION_LIMITS.instancesPerScope / APPS
const APPS_REPORTING = USAGE_LIMITS.rows / (FLAGS * ENVIRONMENTS.length)
const VARIANTS = USAGE_LIMITS.variantCounters / USAGE_LIMITS.rows
const HUGE = 1 << 30

const MiB = (bytes: number) => `${fmt(bytes / 1048576, 2)} MiB`
const size = (path: string) => statSync(path).size

const dir = tempDataDir('bench-metrics-state-')
try {
  seedDataDir(dir, { events: 1000, flags: FLAGS, environments: ENVIRONMENTS })
  const journal = join(dir, JOURNAL_FILE)
  const store = await openStore(dir, { sync: true, checkpointAfterBytes: HUGE })
  const services = createServices(store, { metricsFlushMs: 3_600_000 })
  const metrics = services.metrics
  const flags = Array.from({ length: FLAGS }, (_, i) => `flag-${i}`)
  const variants = Object.fromEntries(Array.from({ length: VARIANTS }, (_, i) => [`variant-${i}`, 1]))
  const allToggles = Object.fromEntries(flags.map((name) => [name, { yes: 3, no: 1, variants }]))
  const appName = (a: number) => `application-${a}`
  const strategies = ['default', 'flexibleRollout', 'userWithId', 'remoteAddress', 'applicationHostname', 'gradualRolloutUserId', 'gradualRolloutSessionId', 'gradualRolloutRandom', 'custom-a', 'custom-b']

  for (let a = 0; a < APPS; a++) {
    for (let i = 0; i < INSTANCES_PER_APP; i++) {
      const environment = ENVIRONMENTS[i % ENVIRONMENTS.length]
      metrics.register({ projects: ['*'], environment }, { appName: appName(a), instanceId: `${appName(a)}-pod-${i}`, sdkVersion: 'unleash-client-node:6.1.0', strategies, started: new Date().toISOString(), interval: 10_000 }, '10.0.0.1')
    }
  }
  /** Every application that counts reports every flag from each of its instances. */
  const reportEverything = () => {
    for (let a = 0; a < APPS_REPORTING; a++) {
      for (let i = 0; i < INSTANCES_PER_APP; i++) {
        const environment = ENVIRONMENTS[i % ENVIRONMENTS.length]
        metrics.report({ projects: ['*'], environment }, { appName: appName(a), instanceId: `${appName(a)}-pod-${i}`, bucket: { start: 0, stop: 0, toggles: allToggles } }, '10.0.0.1')
      }
    }
    for (let a = APPS_REPORTING; a < APPS; a++) {
      for (let i = 0; i < INSTANCES_PER_APP; i++) {
        metrics.report({ projects: ['*'], environment: ENVIRONMENTS[i % ENVIRONMENTS.length] }, { appName: appName(a), instanceId: `${appName(a)}-pod-${i}`, bucket: { start: 0, stop: 0, toggles: {} } }, '10.0.0.1')
      }
    }
  }
  /** Every instance reports one flag (its own, round the flags). */
  const reportOneFlagEach = () => {
    let n = 0
    for (let a = 0; a < APPS; a++) {
      for (let i = 0; i < INSTANCES_PER_APP; i++) {
        const toggles = { [flags[n++ % FLAGS]]: { yes: 1, no: 0, variants: { 'variant-0': 1 } } }
        metrics.report({ projects: ['*'], environment: ENVIRONMENTS[i % ENVIRONMENTS.length] }, { appName: appName(a), instanceId: `${appName(a)}-pod-${i}`, bucket: { start: 0, stop: 0, toggles } }, '10.0.0.1')
      }
    }
  }
  const flush = async () => {
    const before = size(journal)
    const started = performance.now()
    await metrics.flush()
    return { ms: performance.now() - started, bytes: size(journal) - before }
  }

  reportEverything()
  const sizes = metrics.sizes
  if (sizes.usageRows !== USAGE_LIMITS.rows || sizes.instances !== APPLICATION_LIMITS.instancesPerScope || sizes.applications !== APPS) {
    throw new Error(`not at the caps: ${JSON.stringify(sizes)}`)
  }
  const first = await flush()
  reportEverything()
  const everything = await flush()
  reportOneFlagEach()
  const oneFlag = await flush()
  // As after a crash: the journal holds the three flushes, replayed at start.
  const journalBytes = size(journal)
  let started = performance.now()
  const replaying = await openStore(dir, { sync: true, checkpointAfterBytes: HUGE })
  const replayMs = performance.now() - started
  if (Object.keys(replaying.state.flagUsage).length !== sizes.usageRows) throw new Error('the replay lost rows')
  started = performance.now()
  const problem = await store.close()
  if (problem) throw new Error(problem)
  const checkpointMs = performance.now() - started
  const stateBytes = size(join(dir, STATE_FILE))
  console.log(`at the caps: ${JSON.stringify(sizes)}`)

  const opens: { openMs: number; servicesMs: number }[] = []
  for (let run = 0; run < RUNS; run++) {
    started = performance.now()
    const again = await openStore(dir, { sync: true })
    const openMs = performance.now() - started
    started = performance.now()
    const reopened = createServices(again, { metricsFlushMs: 3_600_000 })
    const servicesMs = performance.now() - started
    const found = reopened.metrics.sizes
    if (found.usageRows !== sizes.usageRows || found.instances !== sizes.instances) throw new Error(`reopened with ${JSON.stringify(found)}`)
    opens.push({ openMs, servicesMs })
    console.log(`run ${run + 1}: open ${fmt(openMs, 0)} ms, services ${fmt(servicesMs, 0)} ms`)
    await again.close()
  }

  console.log(
    '\n' +
      table(
        ['scenario', 'measured'],
        [
          [`first flush: ${sizes.usageRows.toLocaleString('en')} rows, ${sizes.instances.toLocaleString('en')} instances, ${sizes.applications.toLocaleString('en')} applications new`, `${MiB(first.bytes)} line, ${fmt(first.ms, 0)} ms`],
          ['flush after every instance reported every flag (all changed)', `${MiB(everything.bytes)} line, ${fmt(everything.ms, 0)} ms`],
          ['flush after every instance reported one flag (10,000 instances, 1,000 applications, 2,000 rows)', `${MiB(oneFlag.bytes)} line, ${fmt(oneFlag.ms, 0)} ms`],
          [`open the store replaying a journal of the three flushes (${MiB(journalBytes)}), as after a crash`, `${fmt(replayMs, 0)} ms`],
          ['checkpoint at close (state.json)', `${MiB(stateBytes)}, ${fmt(checkpointMs, 0)} ms`],
          [`open the store (read, check, replay), median of ${RUNS}`, `${fmt(median(opens.map((o) => o.openMs)), 0)} ms`],
          [`build the services (metrics tables) from it, median of ${RUNS}`, `${fmt(median(opens.map((o) => o.servicesMs)), 0)} ms`],
        ],
      ),
  )

  const lineRows: string[][] = []
  for (const mib of [4, 16, 64]) {
    const path = join(dir, 'one-line.jsonl')
    writeFileSync(path, JSON.stringify({ text: 'x'.repeat(mib * 1048576) }) + '\n')
    const times: number[] = []
    for (let run = 0; run < RUNS; run++) {
      started = performance.now()
      let length = 0
      await readLines(path, (text) => void (length += text.length))
      times.push(performance.now() - started)
      if (length < mib * 1048576) throw new Error('short line')
    }
    lineRows.push([`read one line of ${mib} MiB, median of ${RUNS}`, `${fmt(median(times), 0)} ms`])
  }
  console.log('\n' + table(['scenario', 'measured'], lineRows))
} finally {
  removeDir(dir)
}

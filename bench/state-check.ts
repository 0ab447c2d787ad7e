/**
 * The cost of checking every record of the state against its schema at start-up (issue 10, item
 * 15), run by hand:
 *
 *   bun bench/state-check.ts [--flags 10000] [--runs 5]
 *
 * Seeds a data directory with `--flags` flags (two environments each, one strategy per
 * environment) and 1,000 events, then, in each run, times opening the store (read, check, replay,
 * cut) and the record check alone over the loaded state; prints both, their ratio, and the medians.
 */
import { parseArgs } from 'node:util'
import { openStore } from '../src/services'
import { recordChecks, recordProblem } from '../src/storage/record-check'
import { COLLECTIONS } from '../src/services'
import { fmt, median, removeDir, seedDataDir, table, tempDataDir } from './lib'

const { values } = parseArgs({ options: { flags: { type: 'string', default: '10000' }, runs: { type: 'string', default: '5' } } })
const FLAGS = Number(values.flags)
const RUNS = Number(values.runs)

const dir = tempDataDir()
try {
  seedDataDir(dir, { events: 1000, flags: FLAGS })
  const runs: { openMs: number; checkMs: number }[] = []
  for (let run = 0; run < RUNS; run++) {
    let started = performance.now()
    const store = await openStore(dir, { sync: false })
    const openMs = performance.now() - started
    started = performance.now()
    let records = 0
    const checks = recordChecks(COLLECTIONS)
    for (const { name } of COLLECTIONS) {
      for (const [key, record] of Object.entries(store.state[name])) {
        if (recordProblem(checks, name, key, record) !== null) throw new Error(`${name}/${key} does not check`)
        records++
      }
    }
    const checkMs = performance.now() - started
    runs.push({ openMs, checkMs })
    console.log(`run ${run + 1}: open ${fmt(openMs, 1)} ms, record check of ${records} records ${fmt(checkMs, 1)} ms (${fmt((100 * checkMs) / openMs, 0)} % of the open)`)
  }
  console.log(
    '\n' +
      table(
        ['scenario', 'median of runs'],
        [
          [`open the store, ${FLAGS.toLocaleString('en')} flags (includes the check)`, `${fmt(median(runs.map((r) => r.openMs)), 1)} ms`],
          ['record check alone', `${fmt(median(runs.map((r) => r.checkMs)), 1)} ms`],
          ['check / open (same run)', fmt(median(runs.map((r) => r.checkMs / r.openMs)), 2)],
        ],
      ),
  )
} finally {
  removeDir(dir)
}

/**
 * The event search of this checkout (segments, issue 21) next to another checkout's (main), in one
 * process and one run, over a directory bench/generate-events.ts wrote:
 *
 *   git archive main src package.json tsconfig.json | tar -x -C /tmp/main && ln -s $PWD/node_modules /tmp/main/
 *   bun bench/search-segments.ts --dir /tmp/flagstore-1m --other /tmp/main [--rounds 15]
 *
 * Each engine's worker is started on the directory's events.jsonl (this one maps search/, building
 * it first if missing: run once before measuring), and timed to loaded and to index built; then the
 * queries run in turns, one engine then the other, sequentially (1 connection), and the p50 of each
 * is printed with the ratio. Totals are checked against the generator's manifest. Resident memory
 * is the real server's, measured by bench/audit-log.ts.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { GeneratedManifest } from './generate-events'

const { values } = parseArgs({ options: { dir: { type: 'string' }, other: { type: 'string' }, rounds: { type: 'string', default: '15' } } })
if (!values.dir || !values.other) throw new Error('--dir DIR (bench/generate-events.ts) and --other CHECKOUT are required')
const DIR = values.dir.replace(/\/+$/, '')
const ROUNDS = Number(values.rounds)
const manifest = JSON.parse(readFileSync(`${DIR}.generated.json`, 'utf8')) as GeneratedManifest
const ADMIN = { tokenName: 'admin', kind: 'token', userId: 1, role: 'admin', projects: ['*'] }

interface Engine {
  load(): Promise<void>
  indexReady: boolean
  search(query: unknown, caller: unknown): Promise<{ total: number }>
  close(): void
}

async function open(root: string, name: string) {
  const { EventsService } = await import(join(root, 'src/features/events/events.service.ts'))
  const { parseEventQuery } = await import(join(root, 'src/features/events/event-query.ts'))
  const source = { lastEventId: manifest.events, eventLogPath: join(DIR, 'events.jsonl'), readEvents: async () => {}, onCommit: () => {} }
  const engine = new EventsService(source) as Engine
  const started = performance.now()
  await engine.load()
  const loadedMs = performance.now() - started
  while (!engine.indexReady) await Bun.sleep(5)
  const indexMs = performance.now() - started
  console.log(JSON.stringify({ engine: name, loadedMs: Math.round(loadedMs), indexMs: Math.round(indexMs) }))
  return { name, engine, parse: parseEventQuery as (params: Record<string, string>) => unknown, loadedMs, indexMs }
}

const queries: [string, Record<string, string>, number][] = [
  ['rare word', { query: manifest.words.rare.word }, manifest.words.rare.total],
  ['word, ~5,000 matches', { query: manifest.words.thousands.word }, manifest.words.thousands.total],
  ['word in most events', { query: manifest.words.most.word }, manifest.words.most.total],
  ['type filter', { type: 'IS:feature-metadata-updated' }, manifest.types['feature-metadata-updated']],
  ['last page', { offset: String(manifest.events - 50) }, manifest.events],
  ['two words', { query: `${manifest.words.thousands.word} qx` }, -1],
  ['word start', { query: manifest.words.thousands.word.slice(0, 6) }, -1],
  ['type filter and word', { type: 'IS:feature-metadata-updated', query: manifest.words.thousands.word }, -1],
]

const engines = [await open(values.other, 'other'), await open(join(import.meta.dir, '..'), 'this')]
const times = engines.map(() => queries.map(() => [] as number[]))
const totals = engines.map(() => queries.map(() => -1))
for (let round = 0; round < ROUNDS; round++) {
  for (const [q, [, params]] of queries.entries()) {
    for (const [e, { engine, parse }] of engines.entries()) {
      const started = performance.now()
      const page = await engine.search(parse(params), ADMIN)
      times[e][q].push(performance.now() - started)
      totals[e][q] = page.total
    }
  }
}
const p50 = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]
console.log(`\n${manifest.events.toLocaleString('en')} events, ${ROUNDS} rounds, load average ${(await import('node:os')).loadavg()[0].toFixed(1)}`)
console.log('| | other | this | other / this | total |\n|---|---|---|---|---|')
console.log(`| loaded (ms) | ${Math.round(engines[0].loadedMs)} | ${Math.round(engines[1].loadedMs)} | ${(engines[0].loadedMs / engines[1].loadedMs).toFixed(1)}× | |`)
console.log(`| index built (ms) | ${Math.round(engines[0].indexMs)} | ${Math.round(engines[1].indexMs)} | ${(engines[0].indexMs / engines[1].indexMs).toFixed(1)}× | |`)
for (const [q, [label, , expected]] of queries.entries()) {
  const [a, b] = [p50(times[0][q]), p50(times[1][q])]
  if (totals[0][q] !== totals[1][q] || (expected >= 0 && totals[1][q] !== expected)) throw new Error(`${label}: totals ${totals[0][q]} and ${totals[1][q]}, expected ${expected}`)
  console.log(`| ${label} p50 (ms) | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(a / b).toFixed(1)}× | ${totals[1][q]} |`)
}
engines.forEach(({ engine }) => engine.close())

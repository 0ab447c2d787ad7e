/**
 * The search engine alone, in this process (no HTTP, no worker): load time, index build time and
 * heap size for a synthetic log. For tuning; the end-to-end figures come from bench/search.ts.
 *
 *   bun bench/search-engine.ts [--events 1000000]
 */
import { heapStats } from 'bun:jsc'
import { parseArgs } from 'node:util'
import { EventSearchEngine } from '../src/features/events/search/search-engine'
import { random, syntheticEvent } from './lib'

const { values } = parseArgs({ options: { events: { type: 'string', default: '1000000' } } })
const EVENTS = Number(values.events)
const rand = random(42)
const start = Date.UTC(2025, 0, 1)
const lines: string[] = []
for (let id = 1; id <= EVENTS; id++) lines.push(JSON.stringify(syntheticEvent(id, rand, 10000, new Date(start + id * 30_000).toISOString())))
Bun.gc(true)
const baseline = heapStats().heapSize
const engine = new EventSearchEngine()
let t = performance.now()
for (const line of lines) engine.add(line)
const loadMs = performance.now() - t
Bun.gc(true)
const loaded = heapStats().heapSize
t = performance.now()
while (!engine.indexStep(2000)) {}
const indexMs = performance.now() - t
Bun.gc(true)
const indexedHeap = heapStats().heapSize
const mib = (bytes: number) => (bytes / 1048576).toFixed(0)
console.log(`events ${EVENTS}: add ${loadMs.toFixed(0)} ms, index ${indexMs.toFixed(0)} ms`)
console.log(`heap beyond the raw lines: loaded ${mib(loaded - baseline)} MiB, indexed ${mib(indexedHeap - baseline)} MiB (lines themselves ${mib(baseline)} MiB, kept in memory here)`)

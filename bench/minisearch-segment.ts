/**
 * Why segments do not keep their terms in MiniSearch (issue 21): the cost of having one segment's
 * terms searchable after a restart, MiniSearch's way (its index serialised with toJSON, read back
 * with loadJSON into the JS heap) next to the segment's (the file mapped, nothing read per term):
 *
 *   bun bench/minisearch-segment.ts --dir /tmp/seg-bench/d1m
 *
 * The segment is the first of the directory's search/ (written by the service or bench/search-segments.ts).
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { heapStats } from 'bun:jsc'
import MiniSearch from 'minisearch'
import { readEventLines } from '../src/storage/event-log'
import { tokenize } from '../src/features/events/search/event-tokens'
import { searchableText } from '../src/features/events/search/searchable-text'
import { Segment } from '../src/features/events/search/segment'

const { values } = parseArgs({ options: { dir: { type: 'string' } } })
if (!values.dir) throw new Error('--dir DIR: a data directory with search/ segments')
const dir = values.dir
const name = readdirSync(join(dir, 'search')).sort()[0]
const started = performance.now()
const segment = new Segment(Bun.mmap(join(dir, 'search', name)))
const mappedMs = performance.now() - started

// The same events' terms, one MiniSearch document per block of 64 events, every term kept.
const blocks: { id: number; terms: string }[] = []
let current = new Set<string>()
await readEventLines(join(dir, 'events.jsonl'), segment.count, (_line, event) => {
  for (const term of tokenize(searchableText(event))) current.add(term)
  if (event.id % 64 === 0) {
    blocks.push({ id: blocks.length, terms: [...current].join(' ') })
    current = new Set()
  }
})
const options = { fields: ['terms'], storeFields: [], tokenize: (text: string) => text.split(' ') }
const index = new MiniSearch(options)
let at = performance.now()
index.addAll(blocks)
const buildMs = performance.now() - at
const json = JSON.stringify(index)
Bun.gc(true)
const heapBefore = heapStats().heapSize
at = performance.now()
const loaded = MiniSearch.loadJSON(json, options)
const loadMs = performance.now() - at
Bun.gc(true)
const heapAfter = heapStats().heapSize
console.log(
  JSON.stringify({
    segment: name,
    events: segment.count,
    segmentBytes: segment.byteLength,
    segmentOpenMs: Math.round(mappedMs * 100) / 100,
    miniSearchBuildMs: Math.round(buildMs),
    miniSearchJsonBytes: json.length,
    miniSearchLoadJsonMs: Math.round(loadMs),
    miniSearchHeapMiB: Math.round((heapAfter - heapBefore) / 1048576),
    terms: loaded.termCount,
  }),
)


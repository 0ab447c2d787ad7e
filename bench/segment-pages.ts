/**
 * What a directory's search segments cost in resident memory when opened as the event-search
 * worker opens them, run by hand (Linux: /proc/self/smaps):
 *
 *   bun bench/segment-pages.ts DIR/search [--rewrite BYTES]
 *
 * Maps every segment, builds each `Segment` and then the `Vocabulary` over all of them, and prints
 * after each phase the anonymous and file-backed RSS and, of the file-backed part, the segment
 * mappings' own; then the peak (VmHWM) and the anonymous RSS after a full collection. With
 * `--rewrite BYTES` the files are first copied to a temporary directory in writes of BYTES each (the
 * page cache keeps them in blocks as large as those writes: compare 65536 with 100000000).
 */
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Segment } from '../src/features/events/search/segment'
import { Vocabulary } from '../src/features/events/search/vocabulary'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { rewrite: { type: 'string' } } })
if (positionals.length !== 1) throw new Error('usage: bun bench/segment-pages.ts DIR/search [--rewrite BYTES]')
let dir = positionals[0]
let temp: string | null = null
if (values.rewrite) {
  const chunk = Number(values.rewrite)
  temp = mkdtempSync(join(tmpdir(), 'segment-pages-'))
  for (const name of readdirSync(dir)) {
    const bytes = readFileSync(join(dir, name))
    const fd = openSync(join(temp, name), 'w')
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, Math.min(chunk, bytes.length - done))
    closeSync(fd)
  }
  dir = temp
}

const mib = (kib: number) => Math.round(kib / 1024)
function report(phase: string) {
  const status = readFileSync('/proc/self/status', 'utf8')
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0)
  let segments = 0
  let ours = false
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) ours = line.endsWith('.seg')
    else if (ours && line.startsWith('Rss:')) segments += Number(line.split(/\s+/)[1])
  }
  console.log(`${phase} ${JSON.stringify({ anonMiB: mib(kib('RssAnon')), fileMiB: mib(kib('RssFile')), segmentPagesMiB: mib(segments), peakMiB: mib(kib('VmHWM')) })}`)
}

try {
  report('start')
  const segments = readdirSync(dir)
    .filter((name) => name.endsWith('.seg'))
    .sort()
    .map((name) => new Segment(Bun.mmap(join(dir, name), { shared: false })))
  report(`${segments.length} segments opened`)
  const vocabulary = new Vocabulary()
  for (const segment of segments) vocabulary.add(segment)
  report('vocabulary built')
  Bun.gc(true)
  report('after a full collection')
} finally {
  if (temp) rmSync(temp, { recursive: true, force: true })
}

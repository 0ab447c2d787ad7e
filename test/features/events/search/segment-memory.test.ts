/**
 * What a mapped segment counts in the process's resident memory. Segments are used where they lie,
 * memory-mapped, and a search touches a few places of each: those places, not the whole file, must
 * count. A file written in one large write is kept by the page cache in large blocks, and a touch
 * of the mapping then maps a whole block (measured: 2 MiB a touch, 0.6 GB after a cold rebuild of
 * 10M events); segment-files.ts writes in small blocks. Linux only (/proc/self/smaps).
 */
import { afterEach, expect } from 'bun:test'
import { readFileSync } from 'node:fs'
import { SegmentFiles } from '../../../../src/features/events/search/segment-files'
import { tempDir } from '../../../helpers'
import { needs, TOOLS } from '../../../tools'

const dirs: { remove(): void }[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove()
})

/** KiB resident of the mappings whose path holds `name`. */
function residentKiB(name: string): number {
  let kib = 0
  let ours = false
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) ours = line.includes(name)
    else if (ours && line.startsWith('Rss:')) kib += Number(line.split(/\s+/)[1])
  }
  return kib
}

needs(TOOLS.smaps).test(
  'a written segment, mapped, counts about the pages touched, not the blocks it was written in',
  () => {
    const dir = tempDir('flags-segmem-')
    dirs.push(dir)
    const files = new SegmentFiles(dir.path)
    // 8 MiB, a full segment's size; the content is not read as a segment here.
    const bytes = new Uint8Array(8 << 20)
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i & 0xff
    const mapped = files.write(bytes, 1, 65536)
    expect(mapped).not.toBe(bytes)
    const name = 'events-000000000001-65536.seg'
    expect(residentKiB(name)).toBe(0)
    // Three touches, as the header, the term list and one posting list are.
    let sum = 0
    for (const at of [0, 5 << 20, 7 << 20]) sum += mapped[at]
    expect(sum).toBe(0 + ((5 << 20) & 0xff) + ((7 << 20) & 0xff))
    // The kernel maps up to 64 KiB around a fault (fault-around): three touches, well under 1 MiB.
    // Written in one write, the same touches counted 6 MiB.
    expect(residentKiB(name)).toBeLessThan(1024)
  },
)

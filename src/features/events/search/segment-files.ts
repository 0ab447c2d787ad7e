/**
 * Segments on disk: `search/events-<first id>-<count>.seg` in the data directory, each written to a
 * temporary file, fsynced and renamed into place, so a file under its final name is whole unless
 * the disk lies. At start every segment is loaded (memory-mapped: nothing is read per event) that
 * is whole, of this version, matches its checksum and matches the log (its first and last lines'
 * bytes are where it says); one that does not is deleted. The events no segment holds are rebuilt
 * from the log (segment-rebuild.ts), whatever the order the files were lost or written in (a
 * rebuild writes the newest first, and may be stopped halfway). The log is the truth.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { DIR_MODE, FILE_MODE, fsyncDirectory } from '../../../storage/files'
import { Segment } from './segment'
import { readHeader, SEGMENT_VERSION } from './segment-format'

/** The directory of the data directory that holds the segments. */
export const SEARCH_DIR = 'search'

const NAME = /^events-(\d+)-(\d+)\.seg$/

export function segmentName(firstId: number, count: number): string {
  return `events-${String(firstId).padStart(12, '0')}-${count}.seg`
}

/** CRC-32 of `length` bytes of `fd` at `position`, read in bounded chunks. */
export function crcOfRange(fd: number, position: number, length: number): number {
  const chunk = Buffer.allocUnsafe(Math.min(length, 1 << 20))
  let crc = 0
  for (let done = 0; done < length; ) {
    const read = readSync(fd, chunk, 0, Math.min(chunk.length, length - done), position + done)
    if (read === 0) throw new Error('short read')
    crc = Bun.hash.crc32(chunk.subarray(0, read), crc)
    done += read
  }
  return crc >>> 0
}

/** Why a segment file can't be used, or null when it can. */
function problemOf(path: string, firstId: number, lastId: number): string | null {
  const fd = openSync(path, 'r')
  try {
    const head = Buffer.alloc(64)
    readSync(fd, head, 0, 64, 0)
    const header = readHeader(head)
    if (header === null) return 'not a segment'
    if (header.version !== SEGMENT_VERSION) return `version ${header.version}, not ${SEGMENT_VERSION}`
    if (header.firstId !== firstId) return `starts at event ${header.firstId}, not ${firstId}`
    if (header.firstId + header.count - 1 > lastId) return `holds events past ${lastId}, the last in the log`
    const size = Bun.file(path).size
    if (size !== header.length) return `is ${size} bytes, not ${header.length}`
    if (crcOfRange(fd, 64, size - 64) !== header.crc) return 'checksum does not match'
    return null
  } finally {
    closeSync(fd)
  }
}

/** Whether the segment's first and last lines are, byte for byte, where it says in the log. */
function matchesLog(segment: Segment, logFd: number, firstLineCrc: number, lastLineCrc: number): boolean {
  try {
    const [firstStart, firstEnd] = segment.lineRange(0)
    const [lastStart, lastEnd] = segment.lineRange(segment.count - 1)
    return crcOfRange(logFd, firstStart, firstEnd - firstStart) === firstLineCrc && crcOfRange(logFd, lastStart, lastEnd - lastStart) === lastLineCrc
  } catch {
    return false
  }
}

export class SegmentFiles {
  readonly dir: string

  constructor(
    dataDir: string,
    private readonly log: (message: string) => void = () => {},
  ) {
    this.dir = join(dataDir, SEARCH_DIR)
  }

  /**
   * The usable segments, by their first event, for a log whose descriptor is `logFd` and whose last
   * committed event is `lastId`; deletes every other file in the directory.
   */
  load(logFd: number, lastId: number): Segment[] {
    // Made with the first segment: a log shorter than one has none.
    if (!existsSync(this.dir)) return []
    try {
      return this.usable(logFd, lastId)
    } catch (error) {
      // A cache that can't be read is no reason not to start: the log is read instead.
      this.log(`search segments in ${this.dir} not used: ${error instanceof Error ? error.message : String(error)}`)
      return []
    }
  }

  private usable(logFd: number, lastId: number): Segment[] {
    const files = new Map<number, string>()
    for (const name of readdirSync(this.dir)) {
      const match = NAME.exec(name)
      if (match) files.set(Number(match[1]), name)
      else this.remove(name, 'not a segment (a write cut short)')
    }
    const segments: Segment[] = []
    // The next event not yet held: a file starting before it overlaps one already taken.
    let next = 1
    for (const [firstId, name] of [...files].sort(([a], [b]) => a - b)) {
      if (firstId < next) {
        this.remove(name, `overlaps the segment before it`)
        continue
      }
      const path = join(this.dir, name)
      const problem = problemOf(path, firstId, lastId)
      if (problem !== null) {
        this.remove(name, problem)
        continue
      }
      const bytes = Bun.mmap(path, { shared: false })
      const header = readHeader(bytes)!
      const segment = new Segment(bytes)
      if (!matchesLog(segment, logFd, header.firstLineCrc, header.lastLineCrc)) {
        this.remove(name, 'does not match the event log')
        continue
      }
      segments.push(segment)
      next = firstId + segment.count
    }
    return segments
  }

  private remove(name: string, why: string) {
    this.log(`search segment ${name} ignored and deleted: ${why}`)
    try {
      unlinkSync(join(this.dir, name))
    } catch {
      // Gone already, or not ours to delete: it is ignored either way.
    }
  }

  /** Writes a segment's bytes durably under its name; returns the mapped file (or the bytes if writing fails). */
  write(bytes: Uint8Array, firstId: number, count: number): Uint8Array {
    const name = segmentName(firstId, count)
    const temp = join(this.dir, `.${name}.tmp`)
    try {
      mkdirSync(this.dir, { recursive: true, mode: DIR_MODE })
      const fd = openSync(temp, 'w', FILE_MODE)
      try {
        for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done)
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
      renameSync(temp, join(this.dir, name))
      fsyncDirectory(join(this.dir, name))
      return Bun.mmap(join(this.dir, name), { shared: false })
    } catch (error) {
      // Searches go on from memory; the next start rebuilds this segment from the log.
      this.log(`search segment ${name} not written: ${error instanceof Error ? error.message : String(error)}`)
      try {
        unlinkSync(temp)
      } catch {}
      return bytes
    }
  }
}

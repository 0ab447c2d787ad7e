/**
 * Segments on disk: `search/events-<first id>-<count>.seg` in the data directory, each written to a
 * temporary file, fsynced and renamed into place, so a file under its final name is whole unless
 * the disk lies. At start every segment is loaded (memory-mapped: nothing is read per event) that
 * is whole (its size is the header's: a torn write is caught here), of this version and matches
 * the log (its first and last lines' bytes are where it says); one that does not is deleted. Its
 * checksum is not read then: that reads every byte of every segment, which made the start depend
 * on the disk (10.8 s to /ready at 10M with a cold page cache). It is checked afterwards, a file
 * at a time in the background (`SegmentCheck`), and before any search uses the segment
 * (segmented-search.ts); a segment that fails is dropped and rebuilt. The events no segment holds
 * are rebuilt from the log (segment-rebuild.ts), whatever the order the files were lost or written
 * in (a rebuild writes the newest first, and may be stopped halfway). The log is the truth.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import { DIR_MODE, FILE_MODE, fsyncDirectory } from '../../../storage/files'
import { Segment } from './segment'
import { HEADER, readHeader, SEGMENT_VERSION } from './segment-format'

/** The directory of the data directory that holds the segments. */
export const SEARCH_DIR = 'search'

const NAME = /^events-(\d+)-(\d+)\.seg$/

export function segmentName(firstId: number, count: number): string {
  return `events-${String(firstId).padStart(12, '0')}-${count}.seg`
}

/**
 * Bytes of a segment written at once. The page cache keeps a file's pages in blocks ("folios") as
 * large as the writes that made them (up to 2 MiB on this kernel), and a fault on a mapping maps the
 * whole block: a segment written in one write and then mapped counted up to 2 MiB of resident memory
 * per place touched (its header, its terms), about 4 MiB a segment, 0.6 GB after a cold rebuild of
 * 10M events, against a tenth of that for the same files read back from disk. Written in small
 * blocks, a touch maps little more than what it reads.
 */
const WRITE_CHUNK = 1 << 16

/** One read buffer for every checksum: a check allocates nothing per call. */
let chunkBuffer = Buffer.allocUnsafe(0)

/** CRC-32 of `length` bytes of `fd` at `position` (continuing `crc`), read in bounded chunks. */
export function crcOfRange(fd: number, position: number, length: number, crc = 0): number {
  if (chunkBuffer.length < Math.min(length, 1 << 20)) chunkBuffer = Buffer.allocUnsafe(1 << 20)
  const chunk = chunkBuffer
  for (let done = 0; done < length; ) {
    const read = readSync(fd, chunk, 0, Math.min(chunk.length, length - done), position + done)
    if (read === 0) throw new Error('short read')
    crc = Bun.hash.crc32(chunk.subarray(0, read), crc)
    done += read
  }
  return crc >>> 0
}

/** Why a segment file can't be used, or null when it can, but for its checksum (see `SegmentCheck`). */
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
    return (
      crcOfRange(logFd, firstStart, firstEnd - firstStart) === firstLineCrc &&
      crcOfRange(logFd, lastStart, lastEnd - lastStart) === lastLineCrc
    )
  } catch {
    return false
  }
}

/**
 * The checksum of a segment loaded without it, read from its file a part at a time (`step`), through
 * a small buffer: the OS keeps the pages in its cache, not in the process's memory as reading the
 * mapping would. The file is opened per step, so an abandoned check holds no descriptor.
 */
export class SegmentCheck {
  private position = HEADER
  private crc = 0

  constructor(
    readonly segment: Segment,
    readonly name: string,
    private readonly path: string,
    private readonly expected: number,
    private readonly length: number,
  ) {}

  /** Reads up to `budget` more bytes; once all are read, says why the segment is damaged (null: it is whole). */
  step(budget: number): { done: false } | { done: true; problem: string | null } {
    try {
      const fd = openSync(this.path, 'r')
      try {
        const length = Math.min(budget, this.length - this.position)
        this.crc = crcOfRange(fd, this.position, length, this.crc)
        this.position += length
      } finally {
        closeSync(fd)
      }
    } catch (error) {
      return { done: true, problem: `cannot be read (${error instanceof Error ? error.message : String(error)})` }
    }
    if (this.position < this.length) return { done: false }
    return { done: true, problem: this.crc === this.expected ? null : 'checksum does not match' }
  }

  /** The whole check at once (a search about to use the segment). */
  finish(): string | null {
    for (;;) {
      const result = this.step(1 << 24)
      if (result.done) return result.problem
    }
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
   * committed event is `lastId`, each with the check of its checksum still to make; deletes every
   * other file in the directory.
   */
  load(logFd: number, lastId: number): SegmentCheck[] {
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

  private usable(logFd: number, lastId: number): SegmentCheck[] {
    const files = new Map<number, string>()
    for (const name of readdirSync(this.dir)) {
      const match = NAME.exec(name)
      if (match) files.set(Number(match[1]), name)
      else this.remove(name, 'not a segment (a write cut short)')
    }
    const segments: SegmentCheck[] = []
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
      let segment: Segment
      try {
        segment = new Segment(bytes)
      } catch (error) {
        // Its checksum is not checked yet: a damaged meta section shows here first.
        this.remove(name, `cannot be read (${error instanceof Error ? error.message : String(error)})`)
        continue
      }
      if (!matchesLog(segment, logFd, header.firstLineCrc, header.lastLineCrc)) {
        this.remove(name, 'does not match the event log')
        continue
      }
      segments.push(new SegmentCheck(segment, name, path, header.crc, header.length))
      next = firstId + segment.count
    }
    return segments
  }

  /** Deletes a segment found damaged after it was loaded (see `SegmentCheck`). */
  remove(name: string, why: string) {
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
        for (let done = 0; done < bytes.length; )
          done += writeSync(fd, bytes, done, Math.min(WRITE_CHUNK, bytes.length - done))
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

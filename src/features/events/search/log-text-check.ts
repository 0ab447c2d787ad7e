/** The check of a candidate event against a needle the terms don't decide, read back from the log. */
import type { EventRecord } from '../../../storage/records'
import { readFully } from './file-lines'
import type { Segment } from './segment'
import { searchableText } from './searchable-text'
import type { SearchWork } from './search-work'

/** Bytes read from the log at once to check candidates. */
const WINDOW = 1 << 12

export class LogTextCheck {
  /** Bytes of the log around the lines last read: candidates are checked newest first, often near each other. */
  private window = Buffer.alloc(0)
  private windowStart = 0

  constructor(
    private readonly fd: number,
    /** The bound of the search under way, which counts each line read. */
    private readonly work: () => SearchWork,
  ) {}

  /**
   * Whether event `i` of `segment` holds `needle` in its searchable text. The log's lines are the
   * records as JSON.stringify wrote them, so data, preData and tags are in the line as in the
   * searchable text: a line that, lower-cased, does not hold the needle is passed over unparsed.
   */
  readonly check = (segment: Segment, i: number, needle: string): boolean => {
    this.work().readOne()
    const [start, end] = segment.lineRange(i)
    let bytes: Buffer
    if (start >= this.windowStart && end <= this.windowStart + this.window.length) {
      bytes = this.window.subarray(start - this.windowStart, end - this.windowStart)
    } else if (end - start > WINDOW / 4) {
      bytes = Buffer.allocUnsafe(end - start)
      readFully(this.fd, bytes, start)
    } else {
      // The window ends with this line: the next candidates come before it.
      this.windowStart = Math.max(segment.lineStart[0], end - WINDOW)
      if (this.window.length !== end - this.windowStart) this.window = Buffer.allocUnsafe(end - this.windowStart)
      readFully(this.fd, this.window, this.windowStart)
      bytes = this.window.subarray(start - this.windowStart, end - this.windowStart)
    }
    const line = bytes.toString('utf8')
    if (!line.toLowerCase().includes(needle)) return false
    return searchableText(JSON.parse(line) as EventRecord).includes(needle)
  }
}

/**
 * The event log of a data directory, as searches see it: the older events in segments (segment.ts,
 * on disk, segment-files.ts), the newest ones, fewer than a segment, in an EventSearchEngine in
 * memory (the tail, with its term index). Each time the tail fills a segment, the segment is
 * built, written and mapped, and the tail starts afresh after it; so memory holds at most one
 * segment's worth of events, whatever the length of the log.
 *
 * A search runs over the tail, then the segments, newest first, each answering its count and the
 * part of the page that falls in it; the page's lines are read back from `events.jsonl` by the byte
 * ranges the tail and the segments keep. Segments missing at start are rebuilt in the background
 * (segment-rebuild.ts); until then their part of the log answers by being read (log-scan.ts).
 *
 * The segments found at start are used before their checksums are read (segment-files.ts): those
 * are read in the background (`checkStep`), and a search first finishes the check of every segment
 * not yet checked, since every search reads every segment (its count, or at least its times). A
 * segment that fails is dropped: its events become a run of the log again, read by searches and
 * rebuilt like a missing segment, so no answer ever comes from damaged bytes.
 */
import type { EventRecord } from '../../../storage/records'
import { collectNow } from '../../../workers/garbage'
import type { EventQuery } from '../event-query'
import { FILTER_COLUMNS } from './columns'
import { FileLines, joinRanges } from './file-lines'
import { LogTextCheck } from './log-text-check'
import { searchRun, type LogRun } from './log-scan'
import { EventSearchEngine, type EventVisibility, type SearchResult } from './search-engine'
import { Segment } from './segment'
import { prepareText, type SegmentQuery } from './segment-query'
import { SEGMENT_MAX_EVENTS } from './segment-format'
import { SegmentFiles, type SegmentCheck } from './segment-files'
import { nextPiece, PieceBuilder, planRebuild, tailSegment } from './segment-rebuild'
import { READ_BACK_LIMIT, SearchWork } from './search-work'
import { Vocabulary } from './vocabulary'

/** More distinct terms than this for the last of several query words (a short word start) are not listed per segment (see Segment.search). */
const MANY_TERMS = 256

/** Events per segment: a segment is written each time the tail holds this many. */
export const SEGMENT_EVENTS_DEFAULT = 65536

export interface SegmentedOptions {
  dataDir: string
  /** Events per segment (tests make it small), a multiple of 64 up to 65536. */
  segmentEvents?: number
  commonAfter?: number
  /** More terms than this for the last of several query words are tested per term (tests make it small). */
  manyTerms?: number
  /** Events one search may read back from the log to check them (search-work.ts); tests make it small. */
  readBackLimit?: number
  log?: (message: string) => void
}

export class SegmentedSearch {
  private readonly fd: number
  /** Reads candidates' lines back from the log for the queries the terms don't decide. */
  private readonly textCheck: LogTextCheck['check']
  private readonly files: SegmentFiles
  private readonly segmentEvents: number
  private segments: Segment[] = []
  /** The segments loaded at start whose checksums are not read yet, oldest first (checked newest first). */
  private unchecked: SegmentCheck[] = []
  /** The segments' terms in one place, built in the background (indexStep) and kept up as segments are cut. */
  private vocabulary = new Vocabulary()
  tail: EventSearchEngine
  /** The tail's lines: byte ranges in the log. */
  private tailLines: FileLines
  /** Runs of the log that segments should hold and do not yet, oldest first; built newest first. */
  private pending: LogRun[] = []
  private builder: PieceBuilder | null = null
  /** The lines the last search found in runs not yet built: their byte ranges, by event index. */
  private runRanges = new Map<number, [number, number]>()

  constructor(
    path: string,
    private readonly options: SegmentedOptions,
  ) {
    this.fd = new FileLines(path).descriptor
    this.textCheck = new LogTextCheck(this.fd, () => this.work).check
    this.files = new SegmentFiles(options.dataDir, options.log)
    this.segmentEvents = options.segmentEvents ?? SEGMENT_EVENTS_DEFAULT
    if (this.segmentEvents % 64 !== 0 || this.segmentEvents < 64 || this.segmentEvents > SEGMENT_MAX_EVENTS) {
      throw new Error(
        `segmentEvents must be a multiple of 64 from 64 to ${SEGMENT_MAX_EVENTS}, not ${this.segmentEvents}`,
      )
    }
    this.tailLines = new FileLines(this.fd, 0)
    this.tail = this.newTail(0, 0)
  }

  private newTail(base: number, start: number): EventSearchEngine {
    this.tailLines = new FileLines(this.fd, start)
    return new EventSearchEngine({ base, commonAfter: this.options.commonAfter, lines: this.tailLines })
  }

  /** Maps the segments that match the log (up to event `lastId`); the tail then starts after them. */
  openSegments(lastId: number): void {
    this.unchecked = this.files.load(this.fd, lastId)
    this.segments = this.unchecked.map(check => check.segment)
    this.vocabulary = new Vocabulary()
    const last = this.segments.at(-1)
    this.tail = this.newTail(last ? last.firstId + last.count - 1 : 0, last ? last.end : 0)
  }

  /**
   * Finds the runs of the log (up to event `lastId`) that the segments lack, to be built by
   * `rebuildStep`; the tail then starts after the last whole segment's worth of events. Returns
   * how many events are to be built.
   */
  planRebuild(lastId: number): number {
    const plan = planRebuild(this.fd, this.segments, lastId, this.segmentEvents)
    this.pending = plan.pieces
    this.tail = this.newTail(plan.tail.id, plan.tail.offset)
    const events = plan.pieces.reduce((n, piece) => n + piece.count, 0)
    if (events > 0) {
      const runs = this.runs().map(run => `${run.firstId}–${run.firstId + run.count - 1}`)
      this.options.log?.(
        `search segments missing for events ${runs.join(', ')} (${events} events): rebuilt from the log, newest first; searches read those events from the log until then`,
      )
    }
    return events
  }

  /** Whether segments loaded at start are still to be checked against their checksums. */
  get checking(): boolean {
    return this.unchecked.length > 0
  }

  /**
   * Reads up to `budget` bytes of the checksum of the newest segment not yet checked; a segment that
   * fails is dropped (and its events are to be rebuilt: `rebuilding`). True when none is left.
   */
  checkStep(budget: number): boolean {
    const check = this.unchecked.at(-1)
    if (check === undefined) return true
    const result = check.step(budget)
    if (result.done) {
      this.unchecked.pop()
      if (result.problem !== null) this.drop(check, result.problem)
    }
    return this.unchecked.length === 0
  }

  /** Finishes every check left (a search is about to read every segment). */
  private checkAll(): void {
    while (this.unchecked.length > 0) {
      const check = this.unchecked.pop()!
      const problem = check.finish()
      if (problem !== null) this.drop(check, problem)
    }
  }

  /** Turns a damaged segment back into a run of the log: read by searches, rebuilt in the background. */
  private drop(check: SegmentCheck, problem: string): void {
    const { segment } = check
    this.segments.splice(this.segments.indexOf(segment), 1)
    this.files.remove(
      check.name,
      `${problem}; its events ${segment.firstId}–${segment.firstId + segment.count - 1} are read from the log until it is rebuilt`,
    )
    const run: LogRun = {
      firstId: segment.firstId,
      count: segment.count,
      start: segment.lineStart[0],
      end: segment.end,
    }
    const after = this.pending.findIndex(other => other.firstId > run.firstId)
    this.pending.splice(after === -1 ? this.pending.length : after, 0, run)
    // A piece being built may no longer be the newest run: built again from its run, which holds it until it is done.
    this.builder = null
    // The vocabulary numbers the segments by position: made again once the rebuild is done.
    this.vocabulary = new Vocabulary()
  }

  /** Events still to be built from the log. */
  get pendingEvents(): number {
    return this.pending.reduce((n, run) => n + run.count, 0)
  }

  /** Whether segments are still to be built from the log. */
  get rebuilding(): boolean {
    return this.pending.length > 0
  }

  /** Builds about `budget` events of the newest missing segment (writing it once whole); true when none is left. */
  rebuildStep(budget: number): boolean {
    const run = this.pending.at(-1)
    if (run === undefined) return true
    // The piece is taken off the run once built: until then, searches read it with the run.
    this.builder ??= new PieceBuilder(this.fd, nextPiece(this.fd, { ...run }, this.segmentEvents))
    if (!this.builder.step(budget)) return false
    const bytes = this.builder.finish()
    const piece = this.builder.piece
    this.builder = null
    if (piece.count === run.count) this.pending.pop()
    else this.pending[this.pending.length - 1] = { ...run, count: run.count - piece.count, end: piece.start }
    const segment = new Segment(this.files.write(bytes, piece.firstId, piece.count))
    const after = this.segments.findIndex(other => other.firstId > piece.firstId)
    this.segments.splice(after === -1 ? this.segments.length : after, 0, segment)
    // The piece's text and lists are garbage now (workers/garbage.ts).
    collectNow()
    return this.pending.length === 0
  }

  /** The pending runs, adjacent ones joined (a search reads each in one pass), oldest first. */
  private runs(): LogRun[] {
    const runs: LogRun[] = []
    for (const piece of this.pending) {
      const last = runs.at(-1)
      if (last && last.end === piece.start)
        runs[runs.length - 1] = { ...last, count: last.count + piece.count, end: piece.end }
      else runs.push(piece)
    }
    return runs
  }

  /** Events held, in segments and the tail. */
  get size(): number {
    return this.tail.base + this.tail.size
  }

  /** Where the events held end in the log: the tail's lines are read from there on. */
  get logEnd(): number {
    return this.tailLines.end
  }

  get segmentCount(): number {
    return this.segments.length
  }

  /** The segments' bytes: mapped files (or, where one could not be written, bytes in memory). */
  get segmentBytes(): number {
    return this.segments.reduce((n, segment) => n + segment.byteLength, 0)
  }

  get indexReady(): boolean {
    return (
      this.pending.length === 0 &&
      this.unchecked.length === 0 &&
      this.tail.indexReady &&
      this.vocabulary.covered === this.segments.length
    )
  }

  /**
   * Index work of about `budget` events: the segments' vocabulary first (a segment a step), then the
   * tail's text index. Not begun while segments are rebuilt: the vocabulary numbers them in order.
   */
  indexStep(budget: number): boolean {
    if (this.pending.length > 0 || this.unchecked.length > 0) return false
    if (this.vocabulary.covered < this.segments.length) {
      this.vocabulary.add(this.segments[this.vocabulary.covered])
      return false
    }
    return this.tail.indexStep(budget)
  }

  add(line: string, event?: EventRecord): void {
    this.tail.add(line, event)
    if (this.tail.size >= this.segmentEvents) this.cut()
  }

  /** Turns the tail into a segment, written to disk, and starts an empty tail after it. */
  private cut(): void {
    const tail = this.tail
    const lines = this.tailLines
    const count = tail.size
    const firstId = tail.base + 1
    const bytes = tailSegment(tail, lines, this.fd)
    this.segments.push(new Segment(this.files.write(bytes, firstId, count)))
    // A vocabulary being built in the background takes the new segment in its turn.
    if (this.vocabulary.covered === this.segments.length - 1 && tail.indexReady)
      this.vocabulary.add(this.segments.at(-1)!)
    this.tail = this.newTail(tail.base + count, lines.end)
    // Once built, the tail's index is kept complete from its first event.
    if (tail.indexReady) this.tail.indexStep(Infinity)
    // The old tail and the building's maps are garbage now (workers/garbage.ts).
    collectNow()
  }

  /** The bound of the search under way (search-work.ts). */
  private work = SearchWork.unbounded()

  /** `deadline`: when the request behind the search is given up (epoch ms), and the search with it. */
  search(query: EventQuery, visibility: EventVisibility, deadline = Infinity): SearchResult {
    this.work = new SearchWork(this.options.readBackLimit ?? READ_BACK_LIMIT, deadline)
    this.checkAll()
    const tail = this.tail.search(query, visibility)
    const events = tail.events.map(i => i + this.tail.base)
    const needle = query.query ? query.query.toLowerCase() : null
    this.runRanges.clear()
    if ((this.segments.length === 0 && this.pending.length === 0) || needle?.includes('\n')) return { ...tail, events }
    const conditions: SegmentQuery['conditions'] = []
    for (const name of FILTER_COLUMNS) {
      const values = query[name]
      if (values) conditions.push({ column: name, values })
    }
    if (visibility.projects) conditions.push({ column: 'project', values: visibility.projects })
    if (query.createdBy) conditions.push({ column: ['creatorName', 'creatorId'], values: query.createdBy })
    const segmentQuery: SegmentQuery = {
      conditions,
      hiddenTypes: visibility.hiddenTypes,
      ids: query.id ? new Set(query.id) : null,
      fromMs: query.from ? Date.parse(query.from) : -Infinity,
      toMs: query.to ? Date.parse(query.to) : Infinity,
      needle,
    }
    const text = needle === null ? null : prepareText(needle)
    // Each token's terms per segment, from the vocabulary for the segments it covers; the last of
    // several words, when it stands for very many terms, is tested per term by each segment ('many').
    const known = text
      ? text.tokens.map(({ token, match }, k) =>
          this.vocabulary.termsBySegment(
            token,
            match,
            k > 0 && k === text.tokens.length - 1 ? (this.options.manyTerms ?? MANY_TERMS) : Infinity,
          ),
        )
      : []
    const none: readonly number[] = []
    let total = tail.total
    const runs = this.runs()
    let r = runs.length - 1
    const readRun = (run: LogRun) => {
      const part = searchRun(
        this.fd,
        run,
        segmentQuery,
        Math.max(0, query.offset - total),
        query.limit - events.length,
        this.work,
      )
      total += part.total
      part.events.forEach((index, k) => {
        events.push(index)
        this.runRanges.set(index, part.ranges[k])
      })
    }
    for (let s = this.segments.length - 1; s >= 0; s--) {
      while (r >= 0 && runs[r].firstId > this.segments[s].firstId) readRun(runs[r--])
      const offset = Math.max(0, query.offset - total)
      this.work.checkTime()
      const tokenTerms =
        s < this.vocabulary.covered
          ? known.map(bySegment => (bySegment === null ? 'many' : (bySegment.get(s) ?? none)))
          : null
      const part = this.segments[s].search(
        segmentQuery,
        text,
        offset,
        query.limit - events.length,
        this.textCheck,
        tokenTerms,
      )
      total += part.total
      events.push(...part.events)
    }
    while (r >= 0) readRun(runs[r--])
    return {
      total,
      events,
      plan: needle === null ? 'none' : text!.tokens.length > 0 || text!.separators ? 'index' : 'scan',
    }
  }

  /** The answer's JSON, as in EventSearchEngine.pageJson; `result.events` are event indexes (id - 1). */
  pageJson(result: SearchResult): Uint8Array<ArrayBuffer> {
    const tailLines = this.tailLines
    const ranges = result.events.map((index): [number, number] => {
      if (index >= this.tail.base) return tailLines.range(index - this.tail.base)
      const read = this.runRanges.get(index)
      if (read) return read
      const segment = this.segments[this.segmentOf(index)]
      return segment.lineRange(index - (segment.firstId - 1))
    })
    return joinRanges(this.fd, ranges, '{"events":[', ',', `],"total":${result.total}}`)
  }

  /** The segment holding event index `index`. */
  private segmentOf(index: number): number {
    let low = 0
    let high = this.segments.length - 1
    while (low < high) {
      const middle = (low + high + 1) >>> 1
      if (this.segments[middle].firstId - 1 <= index) low = middle
      else high = middle - 1
    }
    return low
  }
}

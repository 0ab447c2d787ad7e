/**
 * Rebuilding the segments that the log has and the search directory lacks: all of them on a first
 * start after an upgrade that changed their format or with the directory deleted, one when a file
 * was damaged. The log's runs that no segment holds are split into pieces of a segment's size, and
 * the pieces are built in the background, newest first (searches page from the newest events, so
 * those are the first to be answered from a segment), a few thousand events a step so that the
 * worker answers searches in between. Until a piece is built, searches read its part of the log
 * (log-scan.ts): exact, and cheaper with every piece built.
 *
 * A piece is built from its bytes alone (no index of the tail's kind): of each line only the head
 * is parsed (searchable-text.ts, lineParts), and only what buildSegment takes is kept, each line's
 * start, time, column values and searchable text.
 */
import { fstatSync, readSync } from 'node:fs'
import { withoutCommit } from '../../../storage/event-log'
import type { EventRecord } from '../../../storage/records'
import { COLUMN_NAMES, eventColumn, type ColumnName } from './columns'
import { readFully, type FileLines } from './file-lines'
import type { EventSearchEngine } from './search-engine'
import type { LogRun } from './log-scan'
import type { Segment } from './segment'
import { buildSegment, type SegmentColumn } from './segment-format'
import { crcOfRange } from './segment-files'
import { lineParts, searchableText, type EventHead } from './searchable-text'

const CHUNK = 1 << 22

/**
 * The start of the line `count` lines before byte `end` (a line's start) of the log, reading back
 * over newlines, not below `floor` (a line's start too).
 */
function linesBack(fd: number, end: number, count: number, floor: number): number {
  if (count === 0) return end
  const buffer = Buffer.allocUnsafe(CHUNK)
  let found = 0
  // The newline at `end - 1` ends the last line; each one before it starts a line.
  for (let to = end - 1; to > floor; ) {
    const from = Math.max(floor, to - CHUNK)
    const bytes = buffer.subarray(0, to - from)
    readFully(fd, bytes, from)
    for (let p = bytes.lastIndexOf(0x0a); p !== -1; p = p > 0 ? bytes.lastIndexOf(0x0a, p - 1) : -1) {
      if (++found === count) return from + p + 1
    }
    to = from
  }
  if (found === count - 1) return floor
  throw new Error(`the event log holds ${found + 1} lines where ${count} were expected`)
}

/** Where event `lastId`'s line ends in the log (past its newline), found from the file's end, over any lines after it (a commit made since). */
function endOf(fd: number, lastId: number): number {
  const size = fstatSync(fd).size
  // A commit being written may have left half a line at the end.
  let end = size > 0 ? linesBack(fd, size + 1, 1, 0) : 0
  const head = Buffer.alloc(32)
  for (;;) {
    if (end === 0) throw new Error(`the event log holds no event ${lastId}`)
    const start = linesBack(fd, end, 1, 0)
    readSync(fd, head, 0, Math.min(32, end - start), start)
    const id = Number(/^\{"id":(\d+),/.exec(head.toString('latin1'))?.[1])
    if (id === lastId) return end
    if (!(id > lastId)) throw new Error(`the event log holds no event ${lastId} where it should end`)
    end = start
  }
}

export interface RebuildPlan {
  /** The runs to build, oldest first; one longer than `size` events is split from its end as it is built (`nextPiece`). */
  pieces: LogRun[]
  /** The events that stay in memory (fewer than a segment): after event `id`, from byte `offset`. */
  tail: { id: number; offset: number }
}

/**
 * What is left to build, given the segments found (sorted, not overlapping) and the log up to event
 * `lastId`: the runs between them, and the whole segments' worth after the last one. Nothing is read
 * but the end of the log (where the tail starts): the runs' ends are the segments' own.
 */
export function planRebuild(fd: number, segments: readonly Segment[], lastId: number, size: number): RebuildPlan {
  const pieces: LogRun[] = []
  let id = 1
  let offset = 0
  for (const segment of segments) {
    if (segment.firstId > id)
      pieces.push({ firstId: id, count: segment.firstId - id, start: offset, end: segment.lineStart[0] })
    id = segment.firstId + segment.count
    offset = segment.end
  }
  if (lastId < id) return { pieces, tail: { id: id - 1, offset } }
  const whole = Math.floor((lastId - id + 1) / size) * size
  if (whole === 0) return { pieces, tail: { id: id - 1, offset } }
  const tailStart = linesBack(fd, endOf(fd, lastId), lastId - id + 1 - whole, offset)
  pieces.push({ firstId: id, count: whole, start: offset, end: tailStart })
  return { pieces, tail: { id: id + whole - 1, offset: tailStart } }
}

/** Takes the newest piece of at most `size` events off the end of `run` (the run keeps the rest). */
export function nextPiece(fd: number, run: LogRun, size: number): LogRun {
  if (run.count <= size) return { ...run }
  const start = linesBack(fd, run.end, size, run.start)
  const piece = { firstId: run.firstId + run.count - size, count: size, start, end: run.end }
  run.count -= size
  run.end = start
  return piece
}

/** Builds one piece's segment a few events at a time (`step`), then its bytes (`finish`). */
export class PieceBuilder {
  private readonly text: string
  /** Whether every character is one byte: line lengths are then byte lengths. */
  private readonly ascii: boolean
  private position = 0
  private byte: number
  private done = 0
  private readonly lineStart: Float64Array
  private readonly createdAt: Float64Array
  private readonly values: Record<ColumnName, (string | null)[]>
  private readonly texts: string[]

  constructor(
    private readonly fd: number,
    readonly piece: LogRun,
  ) {
    const bytes = Buffer.allocUnsafe(piece.end - piece.start)
    readFully(fd, bytes, piece.start)
    this.text = bytes.toString('utf8')
    this.ascii = this.text.length === bytes.length
    this.byte = piece.start
    this.lineStart = new Float64Array(piece.count + 1)
    this.createdAt = new Float64Array(piece.count)
    this.values = Object.fromEntries(COLUMN_NAMES.map(name => [name, new Array(piece.count)])) as Record<
      ColumnName,
      (string | null)[]
    >
    this.texts = new Array(piece.count)
  }

  /** Reads up to `budget` more events; true once all of the piece's are read. */
  step(budget: number): boolean {
    const { piece, text } = this
    for (const stop = Math.min(piece.count, this.done + budget); this.done < stop; this.done++) {
      const i = this.done
      const end = text.indexOf('\n', this.position)
      if (end === -1) throw new Error(`the event log ends before event ${piece.firstId + i}`)
      const stored = text.slice(this.position, end)
      // The event's JSON (the line without the log's commit member), for lineParts and the parse.
      const line = withoutCommit(stored)
      let parts: { head: EventHead; text: string } | null
      try {
        parts = lineParts(line)
        if (parts === null) {
          const event = JSON.parse(line) as EventRecord
          parts = { head: event, text: searchableText(event) }
        }
      } catch (error) {
        throw new Error(`line ${piece.firstId + i} of the event log is not valid JSON (${(error as Error).message})`)
      }
      const { head } = parts
      if (head?.id !== piece.firstId + i)
        throw new Error(`line ${piece.firstId + i} of the event log is not event ${piece.firstId + i}`)
      this.lineStart[i] = this.byte
      this.byte += this.ascii ? stored.length + 1 : Buffer.byteLength(stored) + 1
      this.position = end + 1
      this.createdAt[i] = Date.parse(head.createdAt)
      for (const name of COLUMN_NAMES) this.values[name][i] = eventColumn(head, name)
      this.texts[i] = parts.text
    }
    return this.done === piece.count
  }

  /** The segment's bytes, once every event is read. */
  finish(): Uint8Array {
    const { piece, lineStart, fd } = this
    lineStart[piece.count] = this.byte
    if (this.byte !== piece.end)
      throw new Error(
        `events ${piece.firstId}–${piece.firstId + piece.count - 1} do not end where the log's lines do (not valid UTF-8?)`,
      )
    const lineCrc = (i: number) => crcOfRange(fd, lineStart[i], lineStart[i + 1] - 1 - lineStart[i])
    return buildSegment({
      firstId: piece.firstId,
      count: piece.count,
      lineStart: i => lineStart[i],
      createdAt: i => this.createdAt[i],
      value: (name, i) => this.values[name][i],
      text: i => this.texts[i],
      firstLineCrc: lineCrc(0),
      lastLineCrc: lineCrc(piece.count - 1),
    })
  }
}

/** A full tail (the newest events, indexed in memory) as a segment's bytes; `lines` are its lines in the log. */
export function tailSegment(tail: EventSearchEngine, lines: FileLines, fd: number): Uint8Array {
  const count = tail.size
  const columns = tail.columns
  const column: Record<SegmentColumn, { valueAt(i: number): string | null }> = {
    type: columns.type,
    project: columns.project,
    feature: columns.feature,
    environment: columns.environment,
    creatorName: columns.creatorName,
    creatorId: columns.creatorId,
  }
  const lineCrc = (i: number) => {
    const [start, end] = lines.range(i)
    return crcOfRange(fd, start, end - start)
  }
  return buildSegment({
    firstId: tail.base + 1,
    count,
    lineStart: i => lines.start(i),
    createdAt: i => columns.createdAt[i],
    value: (name, i) => column[name].valueAt(i),
    text: i => tail.texts.get(i),
    firstLineCrc: lineCrc(0),
    lastLineCrc: lineCrc(count - 1),
  })
}

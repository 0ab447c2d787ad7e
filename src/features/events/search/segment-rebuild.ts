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
import { readSync } from 'node:fs'
import type { EventRecord } from '../../../storage/records'
import { COLUMN_NAMES, eventColumn, type ColumnName } from './columns'
import { readFully } from './file-lines'
import type { LogRun } from './log-scan'
import type { Segment } from './segment'
import { buildSegment } from './segment-format'
import { crcOfRange } from './segment-files'
import { lineParts, searchableText, type EventHead } from './searchable-text'

const CHUNK = 1 << 22

/**
 * Byte offsets in the log from `start` on, where `count` lines begin: of the first line, of every
 * `every`-th one after it, and where the last ends (past its newline).
 */
function lineMarks(fd: number, start: number, count: number, every: number): number[] {
  const marks = [start]
  const buffer = Buffer.allocUnsafe(CHUNK)
  let seen = 0
  for (let at = start; seen < count; ) {
    const read = readSync(fd, buffer, 0, buffer.length, at)
    if (read === 0) throw new Error(`the event log ends ${count - seen} events early`)
    const bytes = buffer.subarray(0, read)
    for (let newline = bytes.indexOf(0x0a); newline !== -1 && seen < count; newline = bytes.indexOf(0x0a, newline + 1)) {
      seen++
      if (seen % every === 0 || seen === count) marks.push(at + newline + 1)
    }
    at += read
  }
  return marks
}

export interface RebuildPlan {
  /** The runs to build, oldest first, each at most `size` events. */
  pieces: LogRun[]
  /** The events that stay in memory (fewer than a segment): after event `id`, from byte `offset`. */
  tail: { id: number; offset: number }
}

/** What is left to build, given the segments found (sorted, not overlapping) and the log up to event `lastId`. */
export function planRebuild(fd: number, segments: readonly Segment[], lastId: number, size: number): RebuildPlan {
  const pieces: LogRun[] = []
  const split = (firstId: number, start: number, count: number) => {
    const marks = lineMarks(fd, start, count, size)
    for (let k = 0; k + 1 < marks.length; k++) {
      pieces.push({ firstId: firstId + k * size, count: Math.min(size, count - k * size), start: marks[k], end: marks[k + 1] })
    }
    return marks[marks.length - 1]
  }
  let id = 1
  let offset = 0
  for (const segment of segments) {
    if (segment.firstId > id) split(id, offset, segment.firstId - id)
    id = segment.firstId + segment.count
    offset = segment.end
  }
  // After the last segment: whole segments' worth to build, the rest to the tail.
  const whole = Math.floor((lastId - id + 1) / size) * size
  if (whole > 0) offset = split(id, offset, whole)
  return { pieces, tail: { id: id + whole - 1, offset } }
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
    this.values = Object.fromEntries(COLUMN_NAMES.map((name) => [name, new Array(piece.count)])) as Record<ColumnName, (string | null)[]>
    this.texts = new Array(piece.count)
  }

  /** Reads up to `budget` more events; true once all of the piece's are read. */
  step(budget: number): boolean {
    const { piece, text } = this
    for (const stop = Math.min(piece.count, this.done + budget); this.done < stop; this.done++) {
      const i = this.done
      const end = text.indexOf('\n', this.position)
      if (end === -1) throw new Error(`the event log ends before event ${piece.firstId + i}`)
      const line = text.slice(this.position, end)
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
      if (head?.id !== piece.firstId + i) throw new Error(`line ${piece.firstId + i} of the event log is not event ${piece.firstId + i}`)
      this.lineStart[i] = this.byte
      this.byte += this.ascii ? line.length + 1 : Buffer.byteLength(line) + 1
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
    if (this.byte !== piece.end) throw new Error(`events ${piece.firstId}–${piece.firstId + piece.count - 1} do not end where the log's lines do (not valid UTF-8?)`)
    const lineCrc = (i: number) => crcOfRange(fd, lineStart[i], lineStart[i + 1] - 1 - lineStart[i])
    return buildSegment({
      firstId: piece.firstId,
      count: piece.count,
      lineStart: (i) => lineStart[i],
      createdAt: (i) => this.createdAt[i],
      value: (name, i) => this.values[name][i],
      text: (i) => this.texts[i],
      firstLineCrc: lineCrc(0),
      lastLineCrc: lineCrc(piece.count - 1),
    })
  }
}

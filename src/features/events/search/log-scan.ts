/**
 * Searching a run of the event log that no segment covers yet (while segments are rebuilt, see
 * segment-rebuild.ts): its bytes are read from `events.jsonl`, newest first, and every match is
 * counted, so the answer is as exact as a segment's, at the cost of reading the run.
 *
 * The lines are the records as JSON.stringify wrote them, keys in the store's order: the scalar
 * fields (id, createdAt, type, creator, environment, project, flag) come before `"data":`, and
 * only data, preData and tags follow. So candidates are found without parsing: a free-text needle
 * by a case-insensitive search of the raw bytes, a column filter by the bytes its value has in the
 * line (`"type":"feature-created",`), and only the candidates' heads (the fields before data) are
 * parsed. A needle found inside the data text is a match as it stands; one found elsewhere in the
 * line (a key, a field before data) is checked against the searchable text of the parsed event.
 */
import type { EventRecord } from '../../../storage/records'
import { eventColumn } from './columns'
import { readFully } from './file-lines'
import type { SegmentQuery } from './segment'
import { searchableText } from './searchable-text'

/** Events `firstId … firstId + count - 1`, whose lines are the log's bytes `[start, end)` (end past the last newline). */
export interface LogRun {
  firstId: number
  count: number
  start: number
  end: number
}

/** A run's part of an answer: its count, and the page's events (index = id - 1) with their lines' byte ranges (without the newline). */
export interface RunAnswer {
  total: number
  events: number[]
  ranges: [number, number][]
}

/** Bytes read at once, newest first. */
const CHUNK = 1 << 22
const NEWLINE = 0x0a
const DATA_KEY = Buffer.from(',"data":')
const PRE_DATA_KEY = Buffer.from(',"preData":')
const HEAD_FIELDS: Record<string, string> = {
  type: 'type',
  project: 'project',
  feature: 'featureName',
  environment: 'environment',
  creatorName: 'createdBy',
  creatorId: 'createdByUserId',
}

/** The fields of an event that decide its structure (everything but data, preData and tags). */
type Head = Omit<EventRecord, 'data' | 'preData' | 'tags'>

/** Whether an event's structured fields pass the query (conditions, hidden types, ids, dates). */
export function headMatches(head: Head, query: SegmentQuery): boolean {
  if (query.hiddenTypes.includes(head.type)) return false
  if (query.ids !== null && !query.ids.has(head.id)) return false
  if (query.fromMs !== -Infinity || query.toMs !== Infinity) {
    const time = Date.parse(head.createdAt)
    if (time < query.fromMs || time > query.toMs) return false
  }
  for (const { column, values } of query.conditions) {
    const columns = Array.isArray(column) ? column : [column]
    if (!columns.some((name) => values.includes(eventColumn(head as EventRecord, name) as string))) return false
  }
  return true
}

/** The byte patterns one of which a line must hold to pass a column condition (a superset: candidates are checked). */
function conditionPatterns({ column, values }: SegmentQuery['conditions'][number]): Buffer[] {
  const columns = Array.isArray(column) ? column : [column]
  return columns.flatMap((name) =>
    values.map((value) => Buffer.from(`"${HEAD_FIELDS[name]}":${name === 'creatorId' ? value : JSON.stringify(value)},`)),
  )
}

/**
 * A case-insensitive search for the needle in latin1-decoded bytes (one character per byte, so
 * positions are byte offsets), when that finds exactly the lines whose lower-cased text holds it:
 * for an ASCII needle, whose characters only ASCII letters lower-case to, except `k` (the Kelvin
 * sign) and a final `i` (`İ` lower-cases to `i` and a combining dot). Null otherwise.
 */
function byteMatcher(needle: string): RegExp | null {
  if (!/^[\x20-\x7e]*$/.test(needle) || needle.includes('k') || needle.endsWith('i')) return null
  return new RegExp(needle.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&'), 'gi')
}

/** The run's matches of the query: `total`, and those at `offset` and after, newest first, at most `limit`. */
export function searchRun(fd: number, run: LogRun, query: SegmentQuery, offset: number, limit: number): RunAnswer {
  const answer: RunAnswer = { total: 0, events: [], ranges: [] }
  const take = (id: number, start: number, end: number) => {
    if (answer.total >= offset && answer.events.length < limit) {
      answer.events.push(id - 1)
      answer.ranges.push([start, end])
    }
    answer.total++
  }
  const structured = query.conditions.length > 0 || query.hiddenTypes.length > 0 || query.ids !== null || query.fromMs !== -Infinity || query.toMs !== Infinity
  const needle = query.needle
  const matcher = needle === null ? null : byteMatcher(needle)
  const patterns = needle === null && query.conditions.length > 0 ? conditionPatterns(query.conditions[0]) : null
  if (!structured && needle === null && offset >= run.count) return { total: run.count, events: [], ranges: [] }
  // Lines are counted down from the run's last event when every one is visited.
  let nextId = run.firstId + run.count - 1

  chunksBackward(fd, run, (bytes, at) => {
    /** The line starting at `start` (ending at `end`, its newline), with its head parsed unless `headless`; a full parse where its layout is not the usual one. */
    const head = (start: number, end: number): { head: Head; dataAt: number } => {
      const dataAt = bytes.indexOf(DATA_KEY, start)
      if (dataAt === -1 || dataAt > end || bytes[start + 1] !== 0x22) return { head: JSON.parse(bytes.toString('utf8', start, end)), dataAt: -1 }
      return { head: JSON.parse(bytes.toString('utf8', start, dataAt) + '}'), dataAt }
    }
    const lineEnd = (position: number) => bytes.indexOf(NEWLINE, position)
    const lineStart = (position: number) => bytes.lastIndexOf(NEWLINE, position - 1) + 1

    if (needle !== null) {
      const found = matcher ? hitsByBytes(bytes, matcher) : hitsByText(bytes, needle)
      for (let k = found.length - 2; k >= 0; k -= 2) {
        const [start, hit] = [found[k], found[k + 1]]
        const end = lineEnd(start)
        const { head: fields, dataAt } = structured || hit < 0 ? head(start, end) : { head: null, dataAt: -2 }
        if (fields && !headMatches(fields, query)) continue
        if (!textInData(bytes, start, end, hit, needle.length, dataAt) && !searchableText(JSON.parse(bytes.toString('utf8', start, end))).includes(needle)) continue
        take(fields ? fields.id : idOf(bytes, start, end), at + start, at + end)
      }
      return true
    }
    if (patterns !== null) {
      const starts = new Set<number>()
      for (const pattern of patterns) {
        for (let p = bytes.indexOf(pattern); p !== -1; p = bytes.indexOf(pattern, p + pattern.length)) starts.add(lineStart(p))
      }
      for (const start of [...starts].sort((a, b) => b - a)) {
        const end = lineEnd(start)
        const { head: fields } = head(start, end)
        if (headMatches(fields, query)) take(fields.id, at + start, at + end)
      }
      return true
    }
    // No text and no column: every line is a candidate, visited newest first.
    for (let end = bytes.length - 1; end > 0; nextId--) {
      const start = lineStart(end)
      if (!structured || headMatches(head(start, end).head, query)) take(nextId, at + start, at + end)
      end = start - 1
      // Every line matches: once the page is full, the rest is only counted.
      if (!structured && answer.events.length === limit && answer.total > offset) {
        answer.total = run.count
        return false
      }
    }
    return true
  })
  return answer
}

/** The event id at the start of a line (`{"id":N,`), parsed whole if it does not start so. */
function idOf(bytes: Buffer, start: number, end: number): number {
  let id = 0
  let k = start + 6
  if (bytes.toString('latin1', start, k) !== '{"id":') return (JSON.parse(bytes.toString('utf8', start, end)) as EventRecord).id
  for (; bytes[k] >= 0x30 && bytes[k] <= 0x39; k++) id = id * 10 + bytes[k] - 0x30
  return id
}

/**
 * Whether a needle found at byte `hit` (length `length`, ASCII) lies inside the line's data text:
 * after the line's `"data":` (the first in a line, as every field before it is a scalar) and
 * before the first `,"preData":` after it (the key that ends data, or one inside data: either way
 * the bytes before it are data). `dataAt` is the data key's position when known (-2: not looked up).
 */
function textInData(bytes: Buffer, start: number, end: number, hit: number, length: number, dataAt: number): boolean {
  if (hit < 0) return false
  const data = dataAt === -2 ? bytes.indexOf(DATA_KEY, start) : dataAt
  if (data === -1 || data > end || hit < data + DATA_KEY.length) return false
  const preData = bytes.indexOf(PRE_DATA_KEY, data)
  return preData !== -1 && preData < end && hit + length <= preData
}

/** Per line holding the needle (case-insensitive), its start and the needle's byte position, ascending. */
function hitsByBytes(bytes: Buffer, matcher: RegExp): number[] {
  const text = bytes.toString('latin1')
  const found: number[] = []
  matcher.lastIndex = 0
  for (let match = matcher.exec(text); match !== null; match = matcher.exec(text)) {
    const end = text.indexOf('\n', match.index)
    found.push(text.lastIndexOf('\n', match.index) + 1, match.index)
    matcher.lastIndex = end + 1
  }
  return found
}

/**
 * `hitsByBytes` for any needle, by lower-casing the decoded text; positions inside a line are not
 * kept (-1): such a candidate is checked by parsing it.
 */
function hitsByText(bytes: Buffer, needle: string): number[] {
  const found: number[] = []
  let byte = 0
  let char = 0
  const text = bytes.toString('utf8')
  for (let start = 0; start < text.length; ) {
    const end = text.indexOf('\n', start)
    const line = text.slice(start, end)
    // Lines are lower-cased one by one: lower-casing may change a text's length, not a line's newline.
    if (line.toLowerCase().includes(needle)) {
      byte += Buffer.byteLength(text.slice(char, start))
      char = start
      found.push(byte, -1)
    }
    start = end + 1
  }
  return found
}

/**
 * Calls `visit` with the run's bytes a chunk at a time, newest first, each chunk whole lines
 * (`at`: its position in the log), until it returns false.
 */
function chunksBackward(fd: number, run: LogRun, visit: (bytes: Buffer, at: number) => boolean) {
  let size = CHUNK
  let buffer = Buffer.allocUnsafe(Math.min(CHUNK, run.end - run.start))
  for (let to = run.end; to > run.start; ) {
    const from = Math.max(run.start, to - size)
    if (buffer.length < to - from) buffer = Buffer.allocUnsafe(to - from)
    const bytes = buffer.subarray(0, to - from)
    readFully(fd, bytes, from)
    // Begun inside a line: the chunk starts after it, and the next one takes it.
    let first = 0
    if (from > run.start) {
      first = bytes.indexOf(NEWLINE) + 1
      if (first === 0 || first === bytes.length) {
        // A line longer than the chunk.
        size *= 2
        continue
      }
    }
    if (!visit(bytes.subarray(first), from + first)) return
    to = from + first
  }
}

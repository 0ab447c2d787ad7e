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
 * line (a key, a field before data, the log's commit member after tags) is checked against the
 * searchable text of the parsed event.
 */
import { commitMemberAt } from '../../../storage/event-log'
import type { EventRecord } from '../../../storage/records'
import { eventColumn } from './columns'
import { readFully } from './file-lines'
import type { SegmentQuery } from './segment-query'
import type { SearchWork } from './search-work'
import { searchableText, type EventHead as Head } from './searchable-text'

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
const HEAD_FIELDS: Record<string, string> = {
  type: 'type',
  project: 'project',
  feature: 'featureName',
  environment: 'environment',
  creatorName: 'createdBy',
  creatorId: 'createdByUserId',
}

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
    if (!columns.some(name => values.includes(eventColumn(head, name) as string))) return false
  }
  return true
}

/** The byte patterns one of which a line must hold to pass a column condition (a superset: candidates are checked). */
function conditionPatterns({ column, values }: SegmentQuery['conditions'][number]): Buffer[] {
  const columns = Array.isArray(column) ? column : [column]
  return columns.flatMap(name =>
    values.map(value => Buffer.from(`"${HEAD_FIELDS[name]}":${name === 'creatorId' ? value : JSON.stringify(value)},`)),
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

/**
 * The run's matches of the query: `total`, and those at `offset` and after, newest first, at most
 * `limit`. A run may be most of the log: `work` is asked before each chunk whether to go on.
 */
export function searchRun(
  fd: number,
  run: LogRun,
  query: SegmentQuery,
  offset: number,
  limit: number,
  work: SearchWork,
): RunAnswer {
  const answer: RunAnswer = { total: 0, events: [], ranges: [] }
  /** Whether the next match is on the page (else it is only counted). */
  const wanted = () => answer.total >= offset && answer.events.length < limit
  const take = (id: number, start: number, end: number) => {
    answer.events.push(id - 1)
    answer.ranges.push([start, end])
    answer.total++
  }
  const structured =
    query.conditions.length > 0 ||
    query.hiddenTypes.length > 0 ||
    query.ids !== null ||
    query.fromMs !== -Infinity ||
    query.toMs !== Infinity
  const needle = query.needle
  const matcher = needle === null ? null : byteMatcher(needle)
  const patterns = needle === null && query.conditions.length > 0 ? conditionPatterns(query.conditions[0]) : null
  if (!structured && needle === null && offset >= run.count) return { total: run.count, events: [], ranges: [] }
  // Lines are counted down from the run's last event when every one is visited.
  let nextId = run.firstId + run.count - 1

  chunksBackward(fd, run, (bytes, at) => {
    work.checkTime()
    /** The head of the line from `start` to `end` (its newline): the whole line parsed where it is not laid out as usual. */
    const head = (start: number, end: number): Head => {
      const dataAt = bytes.indexOf(DATA_KEY, start)
      if (dataAt === -1 || dataAt > end || bytes[start + 1] !== 0x22)
        return JSON.parse(bytes.toString('utf8', start, end))
      return JSON.parse(bytes.toString('utf8', start, dataAt) + '}')
    }
    const lineEnd = (position: number) => bytes.indexOf(NEWLINE, position)
    const lineStart = (position: number) => bytes.lastIndexOf(NEWLINE, position - 1) + 1

    if (needle !== null) {
      const found = matcher ? hitsByBytes(bytes, matcher, needle.length) : hitsByText(bytes, needle)
      for (let k = found.length - 3; k >= 0; k -= 3) {
        const start = found[k]
        const end = found[k + 1]
        const fields = structured ? head(start, end) : null
        if (fields && !headMatches(fields, query)) continue
        if (found[k + 2] === 0 && !searchableText(JSON.parse(bytes.toString('utf8', start, end))).includes(needle))
          continue
        if (wanted()) take(fields ? fields.id : idOf(bytes, start, end), at + start, at + end)
        else answer.total++
      }
      return true
    }
    if (patterns !== null) {
      const starts = patternLines(bytes, patterns)
      for (let k = starts.length - 1; k >= 0; k--) {
        const start = starts[k]
        const end = lineEnd(start)
        const fields = head(start, end)
        if (!headMatches(fields, query)) continue
        if (wanted()) take(fields.id, at + start, at + end)
        else answer.total++
      }
      return true
    }
    // No text and no column: every line is a candidate, visited newest first. Hidden types are
    // found by their bytes, and only those lines' heads are read, unless ids or dates must be read
    // from every line; once the page is full, the lines are only counted.
    const everyHead = query.ids !== null || query.fromMs !== -Infinity || query.toMs !== Infinity
    const suspects = everyHead
      ? []
      : patternLines(
          bytes,
          query.hiddenTypes.map(type => Buffer.from(`"type":${JSON.stringify(type)},`)),
        )
    if (!everyHead && answer.events.length === limit && answer.total >= offset) {
      let lines = 0
      for (let newline = bytes.indexOf(NEWLINE); newline !== -1; newline = bytes.indexOf(NEWLINE, newline + 1)) lines++
      for (const start of suspects) if (!headMatches(head(start, lineEnd(start)), query)) lines--
      answer.total += lines
      return true
    }
    let s = suspects.length - 1
    for (let end = bytes.length - 1; end > 0; nextId--) {
      const start = lineStart(end)
      while (s >= 0 && suspects[s] > start) s--
      if (!structured || (everyHead || suspects[s] === start ? headMatches(head(start, end), query) : true)) {
        if (wanted()) take(nextId, at + start, at + end)
        else answer.total++
      }
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
  if (bytes.toString('latin1', start, k) !== '{"id":')
    return (JSON.parse(bytes.toString('utf8', start, end)) as EventRecord).id
  for (; bytes[k] >= 0x30 && bytes[k] <= 0x39; k++) id = id * 10 + bytes[k] - 0x30
  return id
}

/** The starts of the lines holding any of the patterns, ascending. */
function patternLines(bytes: Buffer, patterns: Buffer[]): number[] {
  const starts = new Set<number>()
  for (const pattern of patterns) {
    for (let p = bytes.indexOf(pattern); p !== -1; p = bytes.indexOf(pattern, p + pattern.length))
      starts.add(bytes.lastIndexOf(NEWLINE, p) + 1)
  }
  return [...starts].sort((a, b) => a - b)
}

/** Where the tags text of the line `[start, end)` of `text` (as the log holds it, not lower-cased) ends: before its commit member or its `}`. */
function tagsEnd(text: string, start: number, end: number): number {
  const member = commitMemberAt(i => text.charCodeAt(i), start, end)
  return member === -1 ? end - 1 : member
}

/**
 * Whether `[hit, hit + length)` of the line `[start, end)` of `text` lies inside its data, preData
 * or tags text (tags ending at `close`), where it is a match as it stands. Data runs from the line's `,"data":` (the first in
 * a line, every field before it being a scalar) to the first `,"preData":` after it (the key that
 * ends data, or one inside data: the bytes before it are data either way). Where that key and
 * `,"tags":` each occur once in the line, they are the keys, and preData and tags lie between them
 * and after. Elsewhere (a key, a field before data, the commit member) the line must be parsed to tell.
 */
function inTexts(
  text: string,
  start: number,
  end: number,
  close: number,
  hit: number,
  length: number,
  preDataKey: string,
): boolean {
  const data = text.indexOf(',"data":', start)
  if (data === -1 || hit < data + 8) return false
  const preData = text.indexOf(preDataKey, data)
  if (preData === -1 || preData >= end) return false
  if (hit + length <= preData) return true
  const tags = text.indexOf(',"tags":', preData)
  if (
    tags === -1 ||
    tags >= end ||
    text.lastIndexOf(preDataKey, end) !== preData ||
    text.lastIndexOf(',"tags":', end) !== tags
  )
    return false
  return (hit >= preData + preDataKey.length && hit + length <= tags) || (hit >= tags + 8 && hit + length <= close)
}

/**
 * Per line holding the needle (case-insensitive), ascending: its start, its end, and 1 when the
 * needle lies inside its searchable texts (`inTexts`), else 0: to be checked.
 */
function hitsByBytes(bytes: Buffer, matcher: RegExp, length: number): number[] {
  const text = bytes.toString('latin1')
  const found: number[] = []
  matcher.lastIndex = 0
  while (matcher.test(text)) {
    const hit = matcher.lastIndex - length
    const start = text.lastIndexOf('\n', hit) + 1
    const end = text.indexOf('\n', hit)
    found.push(start, end, inTexts(text, start, end, tagsEnd(text, start, end), hit, length, ',"preData":') ? 1 : 0)
    matcher.lastIndex = end + 1
  }
  return found
}

/**
 * `hitsByBytes` for any needle, by lower-casing the decoded text (its keys then lower-cased too).
 * Byte positions are counted from the text where it is not all ASCII.
 */
function hitsByText(bytes: Buffer, needle: string): number[] {
  const found: number[] = []
  const text = bytes.toString('utf8')
  const lower = text.toLowerCase()
  const ascii = text.length === bytes.length
  let byte = 0
  let char = 0
  const push = (start: number, end: number, checked: number) => {
    if (ascii) return found.push(start, end, checked)
    byte += Buffer.byteLength(text.slice(char, start))
    char = start
    found.push(byte, byte + Buffer.byteLength(text.slice(start, end)), checked)
  }
  if (lower.length === text.length) {
    // Positions in the lower-cased text are the text's.
    for (let hit = lower.indexOf(needle); hit !== -1; ) {
      const start = lower.lastIndexOf('\n', hit) + 1
      const end = lower.indexOf('\n', hit)
      const close = tagsEnd(text, start, end)
      push(start, end, inTexts(lower, start, end, close, hit, needle.length, ',"predata":') ? 1 : 0)
      hit = lower.indexOf(needle, end + 1)
    }
    return found
  }
  // Lower-casing changed a length: lines one by one (it never adds or removes a newline).
  for (let start = 0; start < text.length; ) {
    const end = text.indexOf('\n', start)
    if (text.slice(start, end).toLowerCase().includes(needle)) push(start, end, 0)
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

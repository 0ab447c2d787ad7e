/**
 * The byte layout of a segment (see segment.ts for what it is for) and how one is built.
 *
 * Layout (little-endian): a 64-byte header, a JSON meta section naming the dictionaries and where
 * each typed array starts, then the arrays, each 8-byte aligned. The checksum (CRC-32) covers
 * everything after the header; a file of another version, size or checksum is not used.
 */
import { wordsAndGaps } from './event-tokens'
import { encodePostings } from './postings'
import { encodeStreams } from './token-stream'

/**
 * 2: terms numbered most frequent first, the token streams (token-stream.ts) and the word pairs
 * (word-pairs.ts). 3: each gap's events (needles made only of separators).
 */
export const SEGMENT_VERSION = 3
const MAGIC = 'FLAGSEG\n'
export const HEADER = 64
/** At most this many events, so that an event's number in its segment fits 16 bits. */
export const SEGMENT_MAX_EVENTS = 65536

/** The columns, in the order they are stored (their names in the event query). */
export const SEGMENT_COLUMNS = ['type', 'project', 'feature', 'environment', 'creatorName', 'creatorId'] as const
export type SegmentColumn = (typeof SEGMENT_COLUMNS)[number]

/** What a segment is built from: events `firstId … firstId + count - 1`, by their position 0 … count - 1. */
export interface SegmentInput {
  firstId: number
  count: number
  /** Where line `i` starts in the log; `lineStart(count)` is where the last one ends (past its newline). */
  lineStart(i: number): number
  createdAt(i: number): number
  value(column: SegmentColumn, i: number): string | null
  /** The searchable text (searchable-text.ts). */
  text(i: number): string
  /** CRC-32 of the first and the last line's bytes: checked against the log before a file is used. */
  firstLineCrc: number
  lastLineCrc: number
}

export interface Meta {
  dictionaries: (string | null)[][]
  /** The token streams' gaps (token-stream.ts). */
  gaps: string[]
  /** Whether the word pairs are kept (word-pairs.ts). */
  pairs: boolean
  minTime: number
  maxTime: number
  termCount: number
  /** Byte offset of each typed array. */
  at: Record<string, number>
  /** Byte length of each typed array. */
  lengths: Record<string, number>
}

/** Builds a segment's bytes. */
export function buildSegment(input: SegmentInput): Uint8Array {
  const { count } = input
  if (count < 1 || count > SEGMENT_MAX_EVENTS)
    throw new Error(`a segment holds 1 to ${SEGMENT_MAX_EVENTS} events, not ${count}`)
  const lineStart = new Float64Array(count + 1)
  const createdAt = new Float64Array(count)
  for (let i = 0; i <= count; i++) lineStart[i] = input.lineStart(i)
  let minTime = Infinity
  let maxTime = -Infinity
  for (let i = 0; i < count; i++) {
    const time = input.createdAt(i)
    createdAt[i] = time
    if (time < minTime) minTime = time
    if (time > maxTime) maxTime = time
  }
  const arrays: [string, ArrayBufferView][] = [
    ['lineStart', lineStart],
    ['createdAt', createdAt],
  ]
  const dictionaries: (string | null)[][] = []
  for (const [c, column] of SEGMENT_COLUMNS.entries()) {
    const ids = new Map<string | null, number>()
    const lists: number[][] = []
    for (let i = 0; i < count; i++) {
      const value = input.value(column, i)
      let id = ids.get(value)
      if (id === undefined) {
        ids.set(value, (id = lists.length))
        lists.push([])
      }
      lists[id].push(i)
    }
    dictionaries.push([...ids.keys()])
    const offsets = new Uint32Array(lists.length + 1)
    const postings = new Uint16Array(count)
    let at = 0
    lists.forEach((list, id) => {
      offsets[id] = at
      postings.set(list, at)
      at += list.length
    })
    offsets[lists.length] = at
    arrays.push([`columnOffsets${c}`, offsets], [`columnPostings${c}`, postings])
  }

  // Terms: each term's events, ascending (an event is listed once per term), and how often it
  // occurs. Texts repeat (a flag toggled on and off: a third of them are distinct, measured), so
  // each distinct text is split once, into its words and gaps and its terms with how often each
  // occurs in it, and its every event is added to those.
  interface TermEntry {
    events: number[]
    occurrences: number
  }
  const termEvents = new Map<string, TermEntry>()
  const texts: string[][] = []
  const splitTexts = new Map<string, { pieces: string[]; terms: [TermEntry, number][] }>()
  for (let i = 0; i < count; i++) {
    const text = input.text(i)
    let split = splitTexts.get(text)
    if (split === undefined) {
      const pieces = wordsAndGaps(text)
      const times = new Map<string, number>()
      for (let w = 1; w < pieces.length; w += 2) times.set(pieces[w], (times.get(pieces[w]) ?? 0) + 1)
      const terms: [TermEntry, number][] = []
      for (const [term, n] of times) {
        let entry = termEvents.get(term)
        if (entry === undefined) termEvents.set(term, (entry = { events: [], occurrences: 0 }))
        terms.push([entry, n])
      }
      splitTexts.set(text, (split = { pieces, terms }))
    }
    texts.push(split.pieces)
    for (const [entry, n] of split.terms) {
      entry.occurrences += n
      entry.events.push(i)
    }
  }
  // Numbered most frequent first: the token streams then hold mostly one-byte numbers.
  const terms = [...termEvents.keys()].sort((a, b) => termEvents.get(b)!.occurrences - termEvents.get(a)!.occurrences)
  const streams = encodeStreams(texts, new Map(terms.map((term, j) => [term, j])))
  texts.length = 0
  arrays.push(['tokenStarts', streams.starts], ['tokenStream', streams.stream])
  const gapLists = encodePostings(streams.gapEvents, count)
  streams.gapEvents.length = 0
  arrays.push(['gapCounts', gapLists.counts], ['gapAt', gapLists.at], ['gapPostings', gapLists.postings])
  const encoder = new TextEncoder()
  const termText = encoder.encode('\n' + terms.map(term => term + '\n').join(''))
  const termStarts = new Uint32Array(terms.length + 1)
  let textAt = 1
  terms.forEach((term, j) => {
    termStarts[j] = textAt
    textAt += encoder.encode(term).length + 1
  })
  termStarts[terms.length] = textAt
  const {
    counts,
    at: termAt,
    postings,
  } = encodePostings(
    terms.map(term => termEvents.get(term)!.events),
    count,
  )
  arrays.push(
    ['termText', termText],
    ['termStarts', termStarts],
    ['termCounts', counts],
    ['termAt', termAt],
    ['termPostings', postings],
  )
  if (streams.pairs) arrays.push(...streams.pairs)

  // Where each array goes: after the meta, whose length depends on those offsets' digits; the meta
  // gets a generous fixed room.
  const at: Record<string, number> = {}
  const lengths = Object.fromEntries(arrays.map(([name, array]) => [name, array.byteLength]))
  let metaText = ''
  for (let room = 4096; ; room *= 2) {
    let offset = HEADER + room
    for (const [name, array] of arrays) {
      at[name] = offset
      offset = align8(offset + array.byteLength)
    }
    const meta: Meta = {
      dictionaries,
      gaps: streams.gaps,
      pairs: streams.pairs !== null,
      lengths,
      minTime,
      maxTime,
      termCount: terms.length,
      at,
    }
    metaText = JSON.stringify(meta)
    const metaBytes = encoder.encode(metaText)
    if (metaBytes.length > room) continue
    const bytes = new Uint8Array(offset)
    bytes.set(encoder.encode(MAGIC), 0)
    bytes.set(metaBytes, HEADER)
    for (const [name, array] of arrays)
      bytes.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), at[name])
    const header = new DataView(bytes.buffer)
    header.setUint32(8, SEGMENT_VERSION, true)
    header.setUint32(12, count, true)
    header.setFloat64(16, input.firstId, true)
    header.setUint32(28, metaBytes.length, true)
    header.setFloat64(32, offset, true)
    header.setUint32(40, input.firstLineCrc >>> 0, true)
    header.setUint32(44, input.lastLineCrc >>> 0, true)
    header.setUint32(24, Bun.hash.crc32(bytes.subarray(HEADER)) >>> 0, true)
    return bytes
  }
}

function align8(n: number) {
  return (n + 7) & ~7
}

export interface SegmentHeader {
  version: number
  count: number
  firstId: number
  crc: number
  length: number
  firstLineCrc: number
  lastLineCrc: number
}

/** The header of a segment's bytes, or null when they are not a segment's. */
export function readHeader(bytes: Uint8Array): SegmentHeader | null {
  // Decoded through a Buffer view: TextDecoder on a view of a mapped file reads the whole file.
  if (bytes.length < HEADER || Buffer.from(bytes.buffer, bytes.byteOffset, 8).toString('latin1') !== MAGIC) return null
  const view = new DataView(bytes.buffer, bytes.byteOffset, HEADER)
  return {
    version: view.getUint32(8, true),
    count: view.getUint32(12, true),
    firstId: view.getFloat64(16, true),
    crc: view.getUint32(24, true),
    length: view.getFloat64(32, true),
    firstLineCrc: view.getUint32(40, true),
    lastLineCrc: view.getUint32(44, true),
  }
}

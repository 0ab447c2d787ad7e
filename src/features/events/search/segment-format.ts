/**
 * The byte layout of a segment (see segment.ts for what it is for) and how one is built.
 *
 * Layout (little-endian): a 64-byte header, a JSON meta section naming the dictionaries and where
 * each typed array starts, then the arrays, each 8-byte aligned. The checksum (CRC-32) covers
 * everything after the header; a file of another version, size or checksum is not used.
 */
import { tokenize } from './event-tokens'

export const SEGMENT_VERSION = 1
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
  minTime: number
  maxTime: number
  termCount: number
  /** Byte offset of each typed array. */
  at: Record<string, number>
}

/** Builds a segment's bytes. */
export function buildSegment(input: SegmentInput): Uint8Array {
  const { count } = input
  if (count < 1 || count > SEGMENT_MAX_EVENTS) throw new Error(`a segment holds 1 to ${SEGMENT_MAX_EVENTS} events, not ${count}`)
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

  // Terms: each term's events, ascending (an event is listed once per term). Texts repeat (a flag
  // toggled on and off: a third of them are distinct, measured), so each distinct text is split
  // once, into the lists of its terms, which its every event is added to.
  const termEvents = new Map<string, number[]>()
  const textLists = new Map<string, number[][]>()
  for (let i = 0; i < count; i++) {
    const text = input.text(i)
    let lists = textLists.get(text)
    if (lists === undefined) {
      lists = []
      for (const term of tokenize(text)) {
        let list = termEvents.get(term)
        if (list === undefined) termEvents.set(term, (list = []))
        if (list[list.length - 1] !== i) {
          list.push(i)
          lists.push(list)
        }
      }
      textLists.set(text, lists)
    } else for (const list of lists) list.push(i)
  }
  const terms = [...termEvents.keys()]
  const encoder = new TextEncoder()
  const termText = encoder.encode('\n' + terms.map((term) => term + '\n').join(''))
  const termStarts = new Uint32Array(terms.length + 1)
  const termCounts = new Uint32Array(terms.length)
  const termAt = new Uint32Array(terms.length)
  const words = bitmapWords(count)
  let postingUnits = 0
  let textAt = 1
  terms.forEach((term, j) => {
    termStarts[j] = textAt
    textAt += encoder.encode(term).length + 1
    const events = termEvents.get(term)!.length
    termCounts[j] = events
    // A bitmap starts on a 32-bit boundary (two 16-bit units).
    if (isBitmap(events, count)) postingUnits += postingUnits & 1
    termAt[j] = postingUnits
    postingUnits += isBitmap(events, count) ? words * 2 : events
  })
  termStarts[terms.length] = textAt
  const postings = new Uint16Array(postingUnits + 2)
  terms.forEach((term, j) => {
    const list = termEvents.get(term)!
    if (!isBitmap(list.length, count)) return postings.set(list, termAt[j])
    const bitmap = new Uint32Array(postings.buffer, termAt[j] * 2, words)
    for (const i of list) bitmap[i >>> 5] |= 1 << (i & 31)
  })
  arrays.push(['termText', termText], ['termStarts', termStarts], ['termCounts', termCounts], ['termAt', termAt], ['termPostings', postings])

  // Where each array goes: after the meta, whose length depends on those offsets' digits; the meta
  // gets a generous fixed room.
  const at: Record<string, number> = {}
  let metaText = ''
  for (let room = 4096; ; room *= 2) {
    let offset = HEADER + room
    for (const [name, array] of arrays) {
      at[name] = offset
      offset = align8(offset + array.byteLength)
    }
    const meta: Meta = { dictionaries, minTime, maxTime, termCount: terms.length, at }
    metaText = JSON.stringify(meta)
    const metaBytes = encoder.encode(metaText)
    if (metaBytes.length > room) continue
    const bytes = new Uint8Array(offset)
    bytes.set(encoder.encode(MAGIC), 0)
    bytes.set(metaBytes, HEADER)
    for (const [name, array] of arrays) bytes.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), at[name])
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

export function bitmapWords(count: number) {
  return (count + 31) >>> 5
}

/** A term in more than 1/16 of the events is kept as a bitmap: it is then the smaller form. */
export function isBitmap(events: number, count: number) {
  return events * 16 > count
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

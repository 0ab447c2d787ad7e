/** Messages between the HTTP thread (EventsService) and the event-search worker. */
import type { EventQuery } from '../event-query'
import type { EventVisibility } from './search-engine'
import type { WorkExceeded } from './search-work'

/** Events built per step of a segment rebuild, and a pause between steps. */
export interface RebuildPace {
  stepEvents: number
  pauseMs: number
}

/** Bytes of segment checksums read per step of the background check, and a pause between steps. */
export interface CheckPace {
  stepBytes: number
  pauseMs: number
}

export type EventSearchRequest =
  /**
   * Read the log file up to event `lastId`, or take `lines` when `path` is null (a memory store's
   * log). With `cache` the file is the local copy of a database's log (log-cache.ts): a part of it
   * that cannot be read is cut off (`loaded` says how many events are left), and the events in
   * `append`s are written to it before they are searched.
   */
  | {
      type: 'open'
      path: string | null
      lines: string[]
      lastId: number
      commonAfter?: number
      buildIndex: boolean
      /** Where the log file's segments are kept (see segmented-search.ts): by default the log's directory. */
      segmentDir?: string
      segmentEvents?: number
      /** Events one search may read back from the log to check them (search-work.ts). */
      readBackLimit?: number
      cache?: boolean
      /** How the rebuild of missing segments paces itself (tests slow it down to search meanwhile). */
      rebuild?: RebuildPace
      /** How the background check of the segments' checksums paces itself (tests slow it down). */
      check?: CheckPace
    }
  /** Committed events, as JSON lines, in id order. */
  | { type: 'append'; lines: string[] }
  /** Build the text index now (after a log handed over in `append`s). */
  | { type: 'build-index' }
  /** `deadline`: when the request is given up (epoch ms); the search stops then too (search-work.ts). */
  | { type: 'search'; id: number; query: EventQuery; visibility: EventVisibility; deadline: number }

export type EventSearchReply =
  /** The segments are mapped: what is left to read of the log is the tail (or a rebuild). */
  | { type: 'opened'; segments: number; events: number }
  /** The log is read; `rebuilding`: missing segments are being built from it (searches read those events meanwhile). */
  | { type: 'loaded'; events: number; rebuilding: boolean }
  /** Every missing segment is built. */
  | { type: 'rebuilt'; segments: number; events: number; ms: number }
  /** Something the operator should know (a segment ignored, not written). */
  | { type: 'notice'; message: string }
  | { type: 'load-failed'; message: string }
  /**
   * `heapBytes`: the collector's heap size, which counts every ArrayBuffer's bytes, the mapped
   * segment files too; `segmentBytes`: those files' bytes (paged in by the OS, not heap).
   */
  | { type: 'index-ready'; events: number; buildMs: number; heapBytes: number; segmentBytes: number }
  /** `body` is the whole answer's JSON text as UTF-8, its buffer transferred, not copied. */
  | { type: 'result'; id: number; total: number; body: Uint8Array<ArrayBuffer>; plan: 'none' | 'index' | 'scan' }
  /** `exceeded`: the search went past its bound (search-work.ts) and was stopped. */
  | { type: 'failed'; id: number; message: string; exceeded?: WorkExceeded }

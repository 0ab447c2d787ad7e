/** What a store is opened on (store.ts): its files, or a shared database, and its options. */
import type { Adapter } from 'lowdb'
import type { EventLog } from './event-log'
import type { SharedLog } from './postgres'
import type { CollectionDefinition, EventRecord, StateDoc } from './records'
import type { StateJournal } from './state-journal'

export type CommitListener = (events: readonly EventRecord[], lines: readonly string[]) => void

export interface StoreFiles {
  /** The checkpoint of the state, through lowdb. */
  checkpoint: Adapter<StateDoc>
  journal: StateJournal
  events: EventLog
  /** Shown in load errors: the checkpoint's file path. */
  checkpointName?: string
  /** The data directory, named when it cannot be written. */
  dataDir?: string
  /**
   * Checks that the directory takes a file of `bytes` (creating the journal and the event log if
   * missing); throws the file system's error. Run at open, before anything is cut, and by `/ready`
   * after a failed commit, to see whether writes can be made durable again.
   */
  probe?: (bytes?: number) => Promise<void>
  /** The data directory's secret key (storage/secret-key.ts); a memory store gets a new one. */
  secretKey?: Buffer
  /**
   * A database shared with other instances (storage/postgres.ts): commits are made through it, each
   * after applying the commits the others made, instead of through `events` and `journal`.
   */
  shared?: SharedLog
}

export interface StoreOptions {
  /** The collections of the state document (each feature's, see services.ts); records loaded from disk are checked against their schemas. */
  collections: readonly CollectionDefinition[]
  checkpointAfterBytes?: number
}

/** A new checkpoint is written once the journal holds this many bytes. */
export const CHECKPOINT_AFTER_BYTES = 8 * 1024 * 1024

export const CHECKPOINT_RETRY_MIN_MS = 1000
export const CHECKPOINT_RETRY_MAX_MS = 60_000
/** `/ready` probes the directory at most this often while writes fail. */
export const PROBE_INTERVAL_MS = 1000
/** The least a probe writes after a failed commit: a few free pages are not room for the next commit. */
export const PROBE_MIN_BYTES = 16 * 1024

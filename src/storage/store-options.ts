/** The options a store is opened with (store.ts), and its bounds. */
import type { CollectionDefinition, EventRecord } from './records'

export type CommitListener = (events: readonly EventRecord[], lines: readonly string[]) => void

export interface StoreOptions {
  /** The collections of the state document (each feature's, see services.ts); records loaded from disk are checked against their schemas. */
  collections: readonly CollectionDefinition[]
  checkpointAfterBytes?: number
}

/** A new checkpoint is written once the journal holds this many bytes. */
export const CHECKPOINT_AFTER_BYTES = 8 * 1024 * 1024

export const CHECKPOINT_RETRY_MIN_MS = 1000
export const CHECKPOINT_RETRY_MAX_MS = 60_000
/** `/ready` probes the log at most this often while writes fail. */
export const PROBE_INTERVAL_MS = 1000

/**
 * One in-process feed of "these flags and segments changed at revision N", for everything that
 * pushes changes to SDKs (the client API's stream and delta here; any other push transport can
 * subscribe the same way). A revision is the store's commit number (`commitSeq`): it survives a
 * restart, so a revision an SDK names after a restart is still meaningful (older than anything held
 * → a full hydration, never a wrong resume).
 *
 * Derived from the store's record watchers, which see every change of the two collections the SDK
 * answers are made of (what `/api/client/features` serves is a function of `flags` and `segments`
 * alone), and published from the commit listener, which runs only once a commit is durable and
 * before its writes are answered. A commit that fails is undone through the same watchers, the
 * other way round: its changes net out before the next durable commit publishes anything.
 *
 * The last commits are kept (a bounded buffer, counted in changed records) so that a client that
 * reconnects, or polls a delta, can be sent what changed since its revision instead of everything.
 */
import type { Store } from '../../storage/store'
import type { FlagRecord } from '../flags/flags.records'
import type { SegmentRecord } from '../segments/segments.records'

export interface RecordChange<R> {
  key: string
  /** undefined: the record is new. */
  before: R | undefined
  /** undefined: the record was deleted. */
  after: R | undefined
}

export interface Revision {
  /** The store commit these changes were made in. */
  revision: number
  flags: readonly RecordChange<FlagRecord>[]
  segments: readonly RecordChange<SegmentRecord>[]
  /**
   * What derived views of this revision cost to make, shared by every subscriber (see delta.ts);
   * made when first needed: most held revisions are never asked for one.
   */
  memo?: Map<string, unknown>
}

export type RevisionListener = (revision: Revision) => void

/**
 * Changed records kept for resuming, by default (`STREAMING_BUFFER_CHANGES`): hours of changes at the
 * pace flags are changed by people, 50 times Unleash's window (its delta cache keeps the last 20
 * events). Each held change keeps a version of its record alive: about 0.9 KiB for a toggle of a
 * flag, so 10,000 held were 9 MiB of a seeded server's 23.6 MiB heap (docs/performance.md).
 */
export const DEFAULT_BUFFER_CHANGES = 1_000

export class ChangeFeed {
  private readonly pendingFlags = new Map<string, RecordChange<FlagRecord>>()
  private readonly pendingSegments = new Map<string, RecordChange<SegmentRecord>>()
  private readonly held: Revision[] = []
  private heldChanges = 0
  /** Every change after this revision is held: a client at this revision or later can resume. */
  private heldFrom: number
  private readonly listeners = new Set<RevisionListener>()
  /** The last durable commit. Not the state's `commitSeq`, which runs ahead while a commit is being made durable. */
  private published: number

  constructor(
    private readonly store: Pick<Store, 'state' | 'watch' | 'onCommit'>,
    private readonly bufferChanges = DEFAULT_BUFFER_CHANGES,
  ) {
    this.heldFrom = store.state.commitSeq
    this.published = store.state.commitSeq
    // `watch` replays the records there are now; those are no change.
    let loading = true
    store.watch('flags', (key, before, after) => loading || note(this.pendingFlags, key, before, after))
    store.watch('segments', (key, before, after) => loading || note(this.pendingSegments, key, before, after))
    loading = false
    store.onCommit(() => this.publish())
  }

  /**
   * The revision of the last durable commit. The state may already hold the next commit's changes
   * (they are applied before they are made durable): what is made from it and named by this
   * revision holds them too, and they come again, the same, as the next revision's events. Naming
   * it by the state's own counter instead would make a client skip that commit's events for good.
   */
  get revision(): number {
    return this.published
  }

  /** Calls `listener` for each later durable commit that changed a flag or a segment; returns the unsubscribe. */
  subscribe(listener: RevisionListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /**
   * The revisions after `revision` up to now, oldest first; null when they are not all held (too
   * old, or not a revision of this store: from the future, say after a restore), so the caller
   * must send everything instead.
   */
  since(revision: number): Revision[] | null {
    if (!Number.isSafeInteger(revision) || revision < this.heldFrom || revision > this.revision) return null
    let first = this.held.length
    while (first > 0 && this.held[first - 1].revision > revision) first--
    return this.held.slice(first)
  }

  private publish(): void {
    this.published = this.store.state.commitSeq
    if (this.pendingFlags.size === 0 && this.pendingSegments.size === 0) return
    // Records put back as they were (an undone commit, a write that changed nothing) are no change.
    const flags = [...this.pendingFlags.values()].filter(change => change.before !== change.after)
    const segments = [...this.pendingSegments.values()].filter(change => change.before !== change.after)
    this.pendingFlags.clear()
    this.pendingSegments.clear()
    if (flags.length === 0 && segments.length === 0) return
    const revision: Revision = { revision: this.published, flags, segments }
    this.held.push(revision)
    this.heldChanges += flags.length + segments.length
    while (this.heldChanges > this.bufferChanges && this.held.length > 0) {
      const dropped = this.held.shift()!
      this.heldChanges -= dropped.flags.length + dropped.segments.length
      this.heldFrom = dropped.revision
    }
    for (const listener of this.listeners) listener(revision)
  }
}

/** Keeps the first `before` and the last `after` of a record within one commit. */
function note<R>(
  pending: Map<string, RecordChange<R>>,
  key: string,
  before: R | undefined,
  after: R | undefined,
): void {
  const known = pending.get(key)
  if (known) known.after = after
  else pending.set(key, { key, before, after })
}

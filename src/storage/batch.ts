/**
 * A batch of the commit loop (store.ts): its work items run on the state one at a time, and the
 * commits other writers made applied to it (log.ts).
 */
import { deepFreeze, sharedWith, Tx, type EventAuthor, type RecordWatcher, type Replaced, type WriteRule } from './tx'
import { recordProblem, type recordChecks } from './record-check'
import { replayJournal, type JournalEntry } from './state-journal'
import type { EventRecord, StateDoc } from './records'
import { CommitInDoubt, type Commit } from './log'
import { eventLine, eventOfLine } from './event-log'
import { StoreFailedError, StoreUnanswered, WriteOutcomeUnknown } from '../errors'

export interface WorkItem {
  actor: EventAuthor
  work: (tx: Tx) => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/** A batch run and applied to the state, not yet durable: what acknowledging or undoing it needs. */
export interface RanBatch {
  done: { item: WorkItem; result: unknown }[]
  added: EventRecord[]
  lines: string[]
  changes: JournalEntry['changes']
  replaced: Replaced[]
  counters: Pick<StateDoc, 'lastEventId' | 'nextUserId' | 'commitSeq'>
  started: number
}

/**
 * Derives records from a write's events, staging them on `tx` so that they are part of the same
 * commit (an outbox of deliveries, say): called with each item's events, once their ids are known.
 * It must not throw, and stages records only (events it appends are ignored).
 */
export type EventDeriver = (tx: Tx, added: readonly EventRecord[]) => void

/**
 * Runs a batch's work items one at a time, in order, applying each one's changes to the state as
 * it goes (so later items, and the watchers, see earlier ones). Each item's author is admitted
 * (`EventAuthor.admit`) on that state before its work runs, and held to the store's `rules`. Null when there is nothing to commit:
 * every item failed, or none staged anything (those are answered here).
 */
export function runBatch(
  state: StateDoc,
  batch: WorkItem[],
  notify: RecordWatcher,
  rules: readonly WriteRule[] = [],
  derivers: readonly EventDeriver[] = [],
): RanBatch | null {
  const done: RanBatch['done'] = []
  const added: EventRecord[] = []
  const changes: JournalEntry['changes'] = []
  // The state document is changed only here, one item at a time.
  const counters = { lastEventId: state.lastEventId, nextUserId: state.nextUserId, commitSeq: state.commitSeq }
  const replaced: Replaced[] = []
  const now = new Date().toISOString()
  for (const item of batch) {
    const tx = new Tx(state, item.actor, now, rules)
    let result: unknown
    try {
      item.actor.admit?.(tx, Date.parse(now))
      result = item.work(tx)
    } catch (error) {
      item.reject(error)
      continue
    }
    const events = tx.applyTo(state, changes, notify, replaced)
    if (events.length > 0 && derivers.length > 0) {
      // Derived records are the system's, not the author's: no guard applies to them.
      const derived = new Tx(state, { name: item.actor.name, userId: item.actor.userId }, now)
      for (const derive of derivers) derive(derived, events)
      derived.applyTo(state, changes, notify, replaced)
    }
    added.push(...events)
    done.push({ item, result })
  }
  if (done.length === 0) return null
  // Writes that decided on the current state to change nothing (a sign-out of a session already
  // gone) make no commit: no journal line, no row for every instance to read.
  if (changes.length === 0 && added.length === 0 && state.nextUserId === counters.nextUserId) {
    for (const { item, result } of done) item.resolve(result)
    return null
  }
  state.commitSeq++
  return {
    done,
    added,
    lines: added.map(event => eventLine(event, state.commitSeq)),
    changes,
    replaced,
    counters,
    started: performance.now(),
  }
}

/**
 * Applies commits other instances made, through the journal's replay: the watchers (derived
 * indexes, the change feed) hear of each record, and `onCommit` (the commit listeners: event
 * search, tests) of each commit's events, as for this instance's own. Every record is checked
 * before any is applied, so a bad one leaves the state as it was.
 */
export function applyCommits(
  state: StateDoc,
  commits: readonly Commit[],
  checks: ReturnType<typeof recordChecks>,
  notify: RecordWatcher,
  onCommit: (commit: Commit, events: EventRecord[]) => void,
): void {
  if (commits.length === 0) return
  for (const { entry } of commits) {
    for (const [name, key, value] of entry.changes) {
      const problem = value === null ? null : recordProblem(checks, name, key, value)
      if (problem) throw new Error(`commit ${entry.seq} holds a bad record: ${problem}`)
    }
  }
  const bySeq = new Map(commits.map(commit => [commit.entry.seq, commit]))
  const followsOn = replayJournal(
    state,
    commits.map(commit => commit.entry),
    // Shared with the version it replaces, as this instance's own writes are (tx.ts).
    (record, collection, key) => deepFreeze(sharedWith(record, (state[collection] as Record<string, unknown>)[key])),
    notify,
    entry => {
      const commit = bySeq.get(entry.seq)!
      onCommit(
        commit,
        commit.lines.map(line => deepFreeze(eventOfLine(line))),
      )
    },
  )
  if (!followsOn)
    throw new Error(
      `the commits read start at ${commits[0].entry.seq}, not at ${state.commitSeq + 1}: commits are missing`,
    )
}

/**
 * How the writes of a commit that failed with `error` are answered: 503 saying why (`problem`), or,
 * when its COMMIT went unanswered (CommitInDoubt), that the outcome is unknown. `timedOut` when the
 * log did not answer at all (StoreUnanswered, which a backend throws): the writes queued meanwhile
 * have waited the bound already, and are refused with it.
 */
export function failureOf(error: unknown, describe: (error: unknown) => string) {
  const cause = error instanceof CommitInDoubt ? error.cause : error
  const problem = describe(cause)
  const refused = new StoreFailedError(`The write could not be saved: ${problem}`)
  const answer =
    error instanceof CommitInDoubt
      ? new WriteOutcomeUnknown(
          `The database stopped answering while the write was being saved; it may have been saved or not: read it back before trying again (${problem})`,
        )
      : refused
  return { problem, refused, answer, timedOut: cause instanceof StoreUnanswered }
}

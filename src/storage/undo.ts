/**
 * Undoing a failed commit (see store.ts): the records a batch replaced are put back, newest first,
 * telling the watchers of derived indexes, and the counters restored, so that the state in memory
 * is again exactly what is on disk.
 */
import type { StateDoc } from './records'
import type { RecordWatcher, Replaced } from './tx'

/** Puts back what a failed batch replaced, newest first, telling the watchers. */
export function undoBatch(
  state: StateDoc,
  replaced: Replaced[],
  counters: Pick<StateDoc, 'lastEventId' | 'nextUserId' | 'commitSeq'>,
  notify: RecordWatcher,
): void {
  for (let i = replaced.length - 1; i >= 0; i--) {
    const [name, key, before] = replaced[i]
    const records = state[name] as Record<string, unknown>
    const after = records[key]
    if (before === undefined) delete records[key]
    else records[key] = before
    notify(name, key, after, before)
  }
  Object.assign(state, counters)
}

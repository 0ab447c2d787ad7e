/**
 * Opening a store (store.ts) on its log (log.ts): the checkpoint loaded and every record checked
 * against its schema, the journal's later commits replayed (and checked), and only then, once
 * nothing is in doubt, the log's own checks and the cuts of what a crash left half written
 * (`StoreLog.recover`). Anything else a crash cannot leave stops the start with a StoreLoadError
 * and nothing changed.
 */
import { StoreLoadError } from './files'
import type { StoreLog } from './log'
import { checkState, recordChecks, recordProblem, type RecordChecks } from './record-check'
import { emptyState, loadedCollection, type CollectionDefinition, type StateDoc } from './records'
import { replayJournal } from './state-journal'
import { deepFreeze } from './tx'

export async function loadStore(
  log: StoreLog,
  collections: readonly CollectionDefinition[],
): Promise<{ state: StateDoc; checks: RecordChecks }> {
  const checks = recordChecks(collections)
  const { checkpoint, commits } = await log.load()
  const state = checkpoint ?? emptyState(collections)
  checkState(state, log.checkpointName, checks)
  state.commitSeq ??= 0
  // Records are frozen; the collections holding them are not, so a commit can swap records in.
  for (const definition of collections) {
    const records = (state[definition.name] = loadedCollection(definition, state[definition.name]) as never) as Record<
      string,
      unknown
    >
    for (const record of Object.values(records)) deepFreeze(record)
  }
  let replayed: boolean
  try {
    replayed = replayJournal(state, commits, (record, name, key, seq) => {
      const problem = recordProblem(checks, name, key, record)
      if (problem) throw new Error(`commit ${seq} holds a bad record: ${problem}`)
      return deepFreeze(record)
    })
  } catch (error) {
    throw new StoreLoadError(log.journalName, (error as Error).message)
  }
  if (!replayed)
    throw new StoreLoadError(
      log.journalName,
      `does not follow on from commit ${state.commitSeq} of the checkpoint; commits are missing`,
    )
  await log.recover(state)
  return { state, checks }
}

/**
 * Opening a store (store.ts): the checkpoint loaded and every record checked against its schema,
 * the journal's later commits replayed (and checked), and only then, once nothing is in doubt,
 * what a crash left half written cut off. Anything else a crash cannot leave stops the start
 * with a StoreLoadError and nothing changed.
 */
import { Low } from 'lowdb'
import { DataDirError, describeIoError, StoreLoadError } from './files'
import { checkState, recordChecks, recordProblem } from './record-check'
import { emptyState, loadedCollection, type CollectionDefinition, type StateDoc } from './records'
import { replayJournal, type JournalContents } from './state-journal'
import { deepFreeze } from './tx'
import type { StoreFiles } from './store-files'

export async function loadStore(
  files: StoreFiles,
  collections: readonly CollectionDefinition[],
): Promise<{ stateDb: Low<StateDoc>; checks: ReturnType<typeof recordChecks>; journal: JournalContents }> {
  const options = { collections }
  const checkpointName = files.checkpointName ?? 'state'
  const checks = recordChecks(options.collections)
  const stateDb = new Low<StateDoc>(files.checkpoint, emptyState(options.collections))
  const checkpoint = await files.checkpoint.read()
  if (checkpoint !== null) stateDb.data = checkpoint
  const state = stateDb.data
  checkState(state, checkpointName, checks)
  // A checkpoint without commitSeq predates the journal: it may have none.
  const journalExpected = checkpoint !== null && state.commitSeq !== undefined
  const journal = await files.journal.read()
  if (checkpoint === null && (journal.size > 0 || !(await files.events.isEmpty()))) {
    // A new data directory gets a checkpoint at once, so that a missing checkpoint next to a
    // journal or events always means a damaged directory rather than a first start.
    throw new StoreLoadError(
      checkpointName,
      'is missing, but the journal or the event log holds data; restore it or move the directory away',
    )
  }
  state.commitSeq ??= 0
  // Records are frozen; the collections holding them are not, so a commit can swap records in.
  for (const definition of options.collections) {
    const records = (state[definition.name] = loadedCollection(definition, state[definition.name]) as never) as Record<
      string,
      unknown
    >
    for (const record of Object.values(records)) deepFreeze(record)
  }
  let replayed: boolean
  try {
    replayed = replayJournal(state, journal.entries, (record, name, key, seq) => {
      const problem = recordProblem(checks, name, key, record)
      if (problem) throw new Error(`commit ${seq} holds a bad record: ${problem}`)
      return deepFreeze(record)
    })
  } catch (error) {
    throw new StoreLoadError(files.journal.name, (error as Error).message)
  }
  if (!replayed)
    throw new StoreLoadError(
      files.journal.name,
      `does not follow on from commit ${state.commitSeq} of the checkpoint; commits are missing`,
    )
  // Every store opened since the journal exists has one (opening creates it, a checkpoint empties it).
  const journalMissing = (why: string) =>
    new StoreLoadError(
      files.journal.name,
      `is missing, but ${why}, so commits written to it would be lost; restore it or move the directory away`,
    )
  const missing = !journal.exists && journalExpected
  if (missing && state.commitSeq > 0) throw journalMissing(`the checkpoint includes commit ${state.commitSeq}`)
  const events = await files.events.findEnd(state.lastEventId).catch(error => {
    throw missing
      ? journalMissing(`the event log does not end where the checkpoint does (${(error as Error).message})`)
      : error
  })
  if (missing && events.end < events.size) throw journalMissing('the event log holds events past the checkpoint')
  if (files.probe) {
    try {
      await files.probe()
    } catch (error) {
      throw new DataDirError(files.dataDir ?? checkpointName, describeIoError(error))
    }
  }
  if (checkpoint === null) await stateDb.write()
  if (journal.complete < journal.size) await files.journal.cutTo(journal.complete)
  if (events.end < events.size) await files.events.cutTo(events.end)
  return { stateDb, checks, journal }
}

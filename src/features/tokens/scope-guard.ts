/**
 * The project scope of a token, decided inside the transaction: every record change and event a
 * write stages is checked as it is staged, against the state it is applied to (storage/tx.ts
 * `StageGuard`). The check in features/tokens/auth.ts at a request's arrival answers first, in the
 * order of errors the contract gives; this one is what holds when the state changes between the
 * two (a flag created or moved into another project while the write waited in the store's queue),
 * and for every write alike, whatever its route.
 *
 * A refused change answers exactly what a flag or project that does not exist answers, so a
 * caller cannot learn by racing that a record of another project exists.
 */
import type { StageGuard, StagedEvent } from '../../storage/tx'
import { flagNotFound, projectNotFound } from '../not-found'

/** The project a record belongs to: a project is its own, other records name theirs in `project`. */
function projectOfRecord(collection: string, key: string, record: unknown): string | undefined {
  if (record === undefined || record === null) return undefined
  if (collection === 'projects') return key
  const project = (record as { project?: unknown }).project
  return typeof project === 'string' ? project : undefined
}

/** The guard of a token limited to `projects`; undefined for a token over all of them. */
export function projectScopeGuard(projects: readonly string[]): StageGuard | undefined {
  if (projects.includes('*')) return undefined
  const sees = (project: string | undefined) => project === undefined || projects.includes(project)
  return {
    record(collection, key, before, after) {
      for (const record of [before, after]) {
        const project = projectOfRecord(collection, key, record)
        if (sees(project)) continue
        throw collection === 'flags' ? flagNotFound(key) : projectNotFound(project!)
      }
    },
    event(event: StagedEvent) {
      const project = event.project ?? undefined
      if (sees(project)) return
      throw typeof event.featureName === 'string' ? flagNotFound(event.featureName) : projectNotFound(project!)
    },
  }
}

/**
 * The 404s for a flag or project that does not exist. A project the caller may not see answers
 * exactly the same (features/tokens/auth.ts), so the answer never tells whether it exists.
 */
import { NotFoundError } from '../errors'
import type { StateReader } from '../storage/store'

export function flagNotFound(name: string, projectId?: string): NotFoundError {
  return new NotFoundError(
    projectId === undefined
      ? `Could not find flag "${name}"`
      : `Could not find flag "${name}" in project "${projectId}"`,
  )
}

export function projectNotFound(projectId: string): NotFoundError {
  return new NotFoundError(`Project "${projectId}" does not exist`)
}

/**
 * The 404 for a flag asked for in a project: when the project itself does not exist, that is what
 * it says (a project outside the caller's scope answers the same, from features/tokens/auth.ts).
 */
export function flagNotFoundIn(reader: Pick<StateReader, 'get'>, name: string, projectId: string): NotFoundError {
  return reader.get('projects', projectId) ? flagNotFound(name, projectId) : projectNotFound(projectId)
}

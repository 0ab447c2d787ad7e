/**
 * The 404s for a flag or project that does not exist. A project the caller may not see answers
 * exactly the same (features/tokens/auth.ts), so the answer never tells whether it exists.
 */
import { NotFoundError } from '../errors'

export function flagNotFound(name: string, projectId?: string): NotFoundError {
  return new NotFoundError(projectId === undefined ? `Could not find flag "${name}"` : `Could not find flag "${name}" in project "${projectId}"`)
}

export function projectNotFound(projectId: string): NotFoundError {
  return new NotFoundError(`Project "${projectId}" does not exist`)
}

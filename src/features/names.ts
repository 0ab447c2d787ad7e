/** The name rules shared by flags, projects and environments (contract §5, §7). */
import { ValidationError } from '../errors'

export const NAME_MAX_LENGTH = 100

/** Returns a problem with `name`, or null when it is acceptable. */
export function nameProblem(name: string, what: string): string | null {
  if (name.length === 0) return `A ${what} name must not be empty`
  if (name.length > NAME_MAX_LENGTH) return `A ${what} name must be at most ${NAME_MAX_LENGTH} characters long`
  if (name === '.' || name === '..') return `A ${what} name must not be "." or ".."`
  // isWellFormed first: encodeURIComponent throws on a lone surrogate.
  if (!name.isWellFormed() || encodeURIComponent(name) !== name) {
    return `A ${what} name must be URL-friendly: letters, digits and - _ . ! ~ * ' ( ) only, got ${JSON.stringify(name)}`
  }
  return null
}

export function assertValidName(name: string, what: string, path = '/name'): void {
  const problem = nameProblem(name, what)
  if (problem) throw ValidationError.at(path, problem)
}

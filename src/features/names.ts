/** The name rules shared by flags, projects and environments (contract §5, §7), and the wildcard refused for projects and environments. */
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

/**
 * 400 for a project id or environment name made only of `*`: in API tokens `*` stands for every
 * project and every environment (`projects: ["*"]`, secrets `*:*.…`), so a project `*` could never be
 * told apart from "all projects" (every all-projects token would use it, and it could never be
 * deleted), nor an environment `*` get an SDK token of its own; `**` and longer only look like it.
 * Checked where such names are created, not when data is loaded: a data directory made before
 * keeps working.
 */
export function assertNotWildcard(name: string, what: 'project id' | 'environment name', path: string): void {
  if (/^\*+$/.test(name)) {
    throw ValidationError.at(path, `The ${what} must not be made only of "*" (got ${JSON.stringify(name)}): in API tokens "*" stands for all projects and all environments`)
  }
}

/** The name rules shared by flags, projects and environments (contract §5, §7), and the wildcard refused for projects and environments. */
import { ValidationError } from '../errors'

export const NAME_MAX_LENGTH = 100

/** `word` with its indefinite article, capitalised when `capital`: "an environment", "A flag". */
export function withArticle(word: string, capital = false): string {
  const article = /^[aeiou]/i.test(word) ? 'an' : 'a'
  return `${capital ? article[0].toUpperCase() + article.slice(1) : article} ${word}`
}

/** Returns a problem with `name`, or null when it is acceptable. */
export function nameProblem(name: string, what: string): string | null {
  if (name.length === 0) return `${withArticle(what, true)} name must not be empty`
  if (name.length > NAME_MAX_LENGTH)
    return `${withArticle(what, true)} name must be at most ${NAME_MAX_LENGTH} characters long`
  const dots = dotSegmentProblem(name, `${withArticle(what, true)} name`)
  if (dots) return dots
  // isWellFormed first: encodeURIComponent throws on a lone surrogate.
  if (!name.isWellFormed() || encodeURIComponent(name) !== name) {
    return `${withArticle(what, true)} name must be URL-friendly: letters, digits and - _ . ! ~ * ' ( ) only, got ${JSON.stringify(name)}`
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
    throw ValidationError.at(
      path,
      `The ${what} must not be made only of "*" (got ${JSON.stringify(name)}): in API tokens "*" stands for all projects and all environments`,
    )
  }
}

/**
 * `.` and `..` cannot name anything in a URL path: clients (browsers, fetch, curl) and Bun itself
 * resolve such a segment, even percent-encoded (%2E%2E), before the router sees the path, so
 * `/api/admin/context/plan/legal-values/..` arrives as `/api/admin/context/plan/`. Every value that
 * becomes a path segment of a route is refused when it is one of them (docs/api.md, Names in paths).
 * Returns the problem, or null.
 */
export function dotSegmentProblem(value: string, what: string): string | null {
  if (value !== '.' && value !== '..') return null
  return `${what} must not be "." or "..": a URL path cannot name it (such a segment is removed from the path before the request arrives)`
}

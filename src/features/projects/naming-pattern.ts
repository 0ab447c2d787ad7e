/**
 * Project naming patterns (contract §5): checked when saved, matched anchored at both ends, and
 * never able to hang the server. Patterns are RE2 syntax, run by re2js: matching takes time linear
 * in the name (no backtracking), so it runs on the HTTP thread with no time bound. What RE2 cannot
 * do in linear time (look-around, back-references, possessive quantifiers, atomic groups) is
 * refused when a pattern is saved.
 */
import { RE2JS, RE2JSException, RE2JSSyntaxException } from 're2js'
import { ValidationError } from '../../errors'
import type { FeatureNaming, ProjectRecord } from './projects.records'
import type { Store } from '../../storage/store'

export const PATTERN_MAX_LENGTH = 200
/**
 * Matching is linear in the name but also in the size of the compiled pattern: a 200-character
 * pattern can nest repeats up to 4,000 instructions (`(.?){1000}a{100}`), which costs tens of
 * milliseconds per 100-character name. Up to 500 a match stays within a few milliseconds at worst;
 * a 200-character literal is about 200, everyday patterns under 50.
 */
export const PATTERN_MAX_PROGRAM = 500

export type CompiledPattern = { ok: true; regex: RE2JS } | { ok: false; problem: string }

/** Syntax that RE2 refuses, in words a person who wrote a JavaScript or PCRE pattern recognises. */
function unsupported(error: RE2JSException, engine: string): string {
  const code = error instanceof RE2JSSyntaxException ? error.error : ''
  const input = (error instanceof RE2JSSyntaxException ? error.input : null) ?? ''
  const uses = (what: string) =>
    `it uses ${what} \`${input}\`, which ${engine} (RE2 syntax, linear-time matching) does not support`
  if (input.startsWith('(?=') || input.startsWith('(?!')) return uses('a look-ahead')
  if (input.startsWith('(?<=') || input.startsWith('(?<!')) return uses('a look-behind')
  if (input.startsWith('(?>')) return uses('an atomic group')
  if (/^\\([1-9]|k)/.test(input)) return uses('a back-reference')
  if (code.includes('nested repetition') && input.endsWith('+')) return uses('a possessive quantifier')
  if (code.includes('repeat count'))
    return `${code} \`${input}\`: a repeat count is at most 1000, nested repeats multiplied together included`
  return `${code || error.message}${input ? ` \`${input}\`` : ''}`
}

/**
 * Compiles a pattern for anchored matching, or says in words why it cannot be used. `engine` names
 * what refuses it in the message; `maxProgram` is the compiled-size bound (Infinity when this
 * process never matches with the pattern, as for REGEX constraints, which the SDKs evaluate).
 */
export function compilePattern(
  pattern: string,
  engine = 'the naming-pattern engine',
  maxProgram = PATTERN_MAX_PROGRAM,
): CompiledPattern {
  let regex: RE2JS
  try {
    regex = RE2JS.compile(pattern)
  } catch (error) {
    if (error instanceof RE2JSException) return { ok: false, problem: unsupported(error, engine) }
    throw error
  }
  const size = regex.programSize()
  if (size > maxProgram) {
    return {
      ok: false,
      problem: `it compiles to ${size} instructions, more than the ${maxProgram} allowed; use smaller repeat counts`,
    }
  }
  return { ok: true, regex }
}

/** Checks a naming pattern before it is saved; returns it normalised. */
export function checkFeatureNaming(naming: FeatureNaming): FeatureNaming {
  const { pattern, example, description } = naming
  if (pattern.length === 0)
    throw ValidationError.at('/featureNaming/pattern', 'featureNaming.pattern must not be empty')
  if (pattern.length > PATTERN_MAX_LENGTH) {
    throw ValidationError.at(
      '/featureNaming/pattern',
      `featureNaming.pattern must be at most ${PATTERN_MAX_LENGTH} characters`,
    )
  }
  if (/\s/.test(pattern))
    throw ValidationError.at('/featureNaming/pattern', 'featureNaming.pattern must not contain whitespace')
  const compiled = compilePattern(pattern)
  if (!compiled.ok)
    throw ValidationError.at('/featureNaming/pattern', `featureNaming.pattern cannot be used: ${compiled.problem}`)
  if (example !== undefined && example !== '' && !compiled.regex.testExact(example)) {
    throw ValidationError.at(
      '/featureNaming/example',
      `featureNaming.example "${example}" does not match the pattern ^${pattern}$`,
    )
  }
  return {
    pattern,
    ...(example !== undefined && example !== '' ? { example } : {}),
    ...(description !== undefined && description !== '' ? { description } : {}),
  }
}

/**
 * Each project's naming pattern, compiled once: when the store is loaded and whenever a project
 * is saved. A pattern saved by an earlier version that RE2 cannot compile (a look-ahead, say) does
 * not stop the store from loading: it is kept with the reason, and names checked against it are
 * refused with that reason until the project's pattern is saved again.
 */
export class NamingPatterns {
  private readonly compiled = new Map<string, { pattern: string; compiled: CompiledPattern }>()

  constructor(store: Pick<Store, 'watch'>) {
    // Called for every stored project now, then for each saved one.
    store.watch('projects', (key, _before, after) => this.remember(key, after))
  }

  private remember(projectId: string, project: ProjectRecord | undefined) {
    const pattern = project?.featureNaming?.pattern
    if (pattern === undefined) this.compiled.delete(projectId)
    else if (this.compiled.get(projectId)?.pattern !== pattern)
      this.compiled.set(projectId, { pattern, compiled: compilePattern(pattern) })
  }

  /** The compiled form of the project's pattern `pattern`. */
  of(projectId: string, pattern: string): CompiledPattern {
    let entry = this.compiled.get(projectId)
    // Only when the store and this cache disagree, which the watch above is there to prevent.
    if (entry?.pattern !== pattern)
      this.compiled.set(projectId, (entry = { pattern, compiled: compilePattern(pattern) }))
    return entry.compiled
  }

  /** 400 when `name` does not fit `naming`, the naming pattern of project `projectId` (none: any name fits). */
  check(name: string, projectId: string, naming: FeatureNaming | null | undefined): void {
    if (!naming) return
    const compiled = this.of(projectId, naming.pattern)
    if (!compiled.ok) {
      // A pattern saved before patterns were RE2: the rule cannot be applied, so names are not let through unchecked.
      throw ValidationError.at(
        '/name',
        `The naming pattern ^${naming.pattern}$ of project "${projectId}" can no longer be used (${compiled.problem}); ` +
          `save the project's featureNaming again with a supported pattern (PUT /api/admin/projects/${projectId})`,
      )
    }
    if (!compiled.regex.testExact(name)) {
      const parts = [`"${name}" does not match the naming pattern ^${naming.pattern}$ of project "${projectId}"`]
      if (naming.example) parts.push(`for example "${naming.example}"`)
      if (naming.description) parts.push(naming.description)
      throw ValidationError.at('/name', parts.join('; '))
    }
  }

  /** Projects whose stored pattern cannot be used, with the reason (logged at start-up). */
  unusable(): { projectId: string; pattern: string; problem: string }[] {
    const found: { projectId: string; pattern: string; problem: string }[] = []
    for (const [projectId, { pattern, compiled }] of this.compiled)
      if (!compiled.ok) found.push({ projectId, pattern, problem: compiled.problem })
    return found
  }
}

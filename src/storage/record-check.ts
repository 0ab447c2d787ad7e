/**
 * Checks what is read from disk (the checkpoint and the journal's replayed commits) against the
 * record schemas of the collections the store was opened with, so that a damaged record stops the
 * start with a message naming the file and the record instead of answering 500 when it is read later.
 */
import { TypeCompiler, type TypeCheck, type ValueError } from '@sinclair/typebox/compiler'
import { Type, type TSchema } from '@sinclair/typebox'
import { StoreLoadError } from './files'
import type { CollectionDefinition, StateDoc } from './records'

/** The state document's counters. A checkpoint written before the journal existed has no commitSeq. */
const StateHeaderSchema = Type.Object({
  formatVersion: Type.Literal(1),
  lastEventId: Type.Integer({ minimum: 0 }),
  commitSeq: Type.Optional(Type.Integer({ minimum: 0 })),
  nextUserId: Type.Integer(),
})
const headerCheck = TypeCompiler.Compile(StateHeaderSchema)

// Compiled once per schema: checking 10,000 flags costs a few milliseconds rather than a walk of the schema per record.
const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>()

/** The checks of each collection's records, by collection name, and which collections may be absent. */
export type RecordChecks = ReadonlyMap<string, TypeCheck<TSchema>> & { readonly addedLater: ReadonlySet<string> }

export function recordChecks(collections: readonly CollectionDefinition[]): RecordChecks {
  const checks = Object.assign(new Map<string, TypeCheck<TSchema>>(), { addedLater: new Set<string>() })
  for (const { name, schema, addedLater } of collections) {
    let check = compiled.get(schema)
    if (!check) compiled.set(schema, (check = TypeCompiler.Compile(schema)))
    checks.set(name, check)
    if (addedLater) checks.addedLater.add(name)
  }
  return checks
}

/**
 * Why `value` is not a valid record of `collection` (naming the record and the path inside it,
 * e.g. `flags["x"]/environments/development/enabled: Expected boolean`), or null when it is.
 */
export function recordProblem(checks: RecordChecks, collection: string, key: string, value: unknown): string | null {
  const check = checks.get(collection)
  const where = `${collection}[${JSON.stringify(key)}]`
  if (!check) return `${where}: "${collection}" is not a collection`
  if (check.Check(value)) return null
  const first = closest(check.Errors(value).First())
  return `${where}${first?.path ?? ''}: ${first?.message ?? 'does not match the record schema'}`
}

/** Of a value that matches no member of a union (a record in either of two formats), the problem of the nearest member: the one with the fewest. */
function closest(error: ValueError | undefined): ValueError | undefined {
  if (!error?.errors.length) return error
  const members = error.errors.map(iterator => [...iterator]).sort((a, b) => a.length - b.length)
  return closest(members[0][0]) ?? error
}

/** Checks the checkpoint's document: its format version and counters (by schema, as its records), and every record. */
export function checkState(state: unknown, name: string, checks: RecordChecks): asserts state is StateDoc {
  const doc = state as Record<string, unknown> | null
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new StoreLoadError(name, 'is not a JSON object')
  const problem = headerCheck.Errors(doc).First()
  if (problem) {
    const field = problem.path.split('/')[1] || 'formatVersion'
    if (field === 'formatVersion')
      throw new StoreLoadError(name, `has formatVersion ${JSON.stringify(doc.formatVersion)}, expected 1`)
    throw new StoreLoadError(name, `has no valid ${field}`)
  }
  for (const key of checks.keys()) {
    const collection = doc[key]
    if (collection === undefined && checks.addedLater.has(key)) continue
    if (typeof collection !== 'object' || collection === null || Array.isArray(collection)) {
      throw new StoreLoadError(name, `"${key}" is not an object`)
    }
    for (const [id, record] of Object.entries(collection)) {
      const problem = recordProblem(checks, key, id, record)
      if (problem) throw new StoreLoadError(name, `holds a bad record: ${problem}`)
    }
  }
}

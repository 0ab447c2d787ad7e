/**
 * Random JSON-Patch documents sent to one flag, checked against a model written from RFC 6902 and
 * the contract (§5 PATCH) alone, sharing no code with the service:
 *
 * - the status is one of 200, 400, 403, 404, 409 (never a 500), and the one the model expects;
 * - after any non-200 the flag (as GET answers it) and the event log are exactly unchanged;
 * - after a 200 the answer is what GET answers, the metadata is what the model computed, archivedAt
 *   follows archived, and the events are exactly feature-metadata-updated (data/preData) plus
 *   feature-stale-on/-off and feature-archived/-revived where those flipped, or none without a change.
 *
 * Mismatches are collected and reported together, grouped by kind, with one example each.
 */
import { describe, expect, test } from 'bun:test'
import { type Api, errorOf, FLAG_TYPES, freshApiPerTest } from '../../helpers'
import { seededRandom, type Random } from '../../random'

const PATCHABLE = ['name', 'description', 'type', 'project', 'stale', 'impressionData', 'archived', 'createdAt']
const BOOLEANS = ['stale', 'impressionData', 'archived']
const READ_ONLY = ['name', 'project', 'createdAt']
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype'])
const OPS = ['add', 'remove', 'replace', 'copy', 'move', 'test']
const ALLOWED_STATUSES = [200, 400, 403, 404, 409]

const FLAG = 'prop-flag'
const OTHER_PROJECT = 'prop-other'
const SEEDS = [11, 2024, 31337, 777]
const REQUESTS_PER_SEED = 100

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type Doc = Record<string, Json>
interface Operation {
  op: string
  path?: string
  from?: string
  value?: Json
}

let api: Api
freshApiPerTest(fresh => (api = fresh))

// ---------------------------------------------------------------------------------------------
// The model

function deepEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]))
  const ka = Object.keys(a as object)
  const kb = Object.keys(b as object)
  return (
    ka.length === kb.length && ka.every(key => Object.hasOwn(b, key) && deepEqual((a as Doc)[key], (b as Doc)[key]))
  )
}

function touchesVariants(pointer: unknown) {
  return typeof pointer === 'string' && (pointer === '/variants' || pointer.startsWith('/variants/'))
}

/** The property a pointer names, or null when the pointer is not one of the flat patchable paths. */
function propertyOf(pointer: unknown): string | null {
  if (typeof pointer !== 'string' || !pointer.startsWith('/')) return null
  const segments = pointer
    .slice(1)
    .split('/')
    .map(segment => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (segments.some(segment => FORBIDDEN.has(segment))) return null
  if (segments.length !== 1 || !PATCHABLE.includes(segments[0])) return null
  return segments[0]
}

type Expectation = { statuses: number[]; doc?: Doc; why: string }

/** What the contract says the PATCH must answer, given the flag's metadata before it. */
function model(target: 'own' | 'unknown' | 'other', current: Doc, operations: Operation[]): Expectation {
  if (target === 'unknown') return { statuses: [404], why: 'unknown flag' }
  if (operations.some(operation => touchesVariants(operation.path) || touchesVariants(operation.from)))
    return { statuses: [403], why: '/variants' }
  if (target === 'other') return { statuses: [404], why: 'flag of another project' }
  for (const operation of operations) {
    if (!OPS.includes(operation.op)) return { statuses: [400], why: `unknown op ${operation.op}` }
    // RFC 6902 ignores other members; the contract's strict bodies refuse them.
    const members = [
      'op',
      'path',
      ...(['add', 'replace', 'test'].includes(operation.op) ? ['value'] : []),
      ...(['copy', 'move'].includes(operation.op) ? ['from'] : []),
    ]
    const extra = Object.keys(operation).find(member => !members.includes(member))
    if (extra !== undefined) return { statuses: [400], why: `${operation.op} with member ${extra}` }
    if (propertyOf(operation.path) === null)
      return { statuses: [400], why: `bad path ${JSON.stringify(operation.path)}` }
    if ((operation.op === 'copy' || operation.op === 'move') && propertyOf(operation.from) === null) {
      return { statuses: [400], why: `bad from ${JSON.stringify(operation.from)}` }
    }
    if (['add', 'replace', 'test'].includes(operation.op) && !('value' in operation))
      return { statuses: [400], why: `${operation.op} without value` }
  }
  const doc: Doc = structuredClone(current)
  const has = (key: string) => Object.hasOwn(doc, key)
  for (const [index, operation] of operations.entries()) {
    const key = propertyOf(operation.path)!
    const from = propertyOf(operation.from)
    switch (operation.op) {
      case 'add':
        doc[key] = structuredClone(operation.value!)
        break
      case 'remove':
        if (!has(key)) return { statuses: [400], why: `op ${index}: remove of absent ${key}` }
        delete doc[key]
        break
      case 'replace':
        if (!has(key)) return { statuses: [400], why: `op ${index}: replace of absent ${key}` }
        doc[key] = structuredClone(operation.value!)
        break
      case 'copy':
        if (!has(from!)) return { statuses: [400], why: `op ${index}: copy from absent ${from}` }
        doc[key] = structuredClone(doc[from!])
        break
      case 'move': {
        if (!has(from!)) return { statuses: [400], why: `op ${index}: move from absent ${from}` }
        const value = doc[from!]
        delete doc[from!]
        doc[key] = value
        break
      }
      case 'test':
        // A test of an absent property: unresolvable (400) or simply failed (409); both are fair.
        if (!has(key)) return { statuses: [400, 409], why: `op ${index}: test of absent ${key}` }
        if (!deepEqual(doc[key], operation.value)) return { statuses: [409], why: `op ${index}: test failed` }
        break
    }
  }
  if (!has('description')) doc.description = null
  if (doc.description !== null && typeof doc.description !== 'string')
    return { statuses: [400], why: 'description not a string' }
  if (typeof doc.type !== 'string' || !FLAG_TYPES.includes(doc.type))
    return { statuses: [400], why: 'type not a flag type' }
  for (const key of BOOLEANS) if (typeof doc[key] !== 'boolean') return { statuses: [400], why: `${key} not a boolean` }
  for (const key of READ_ONLY) if (doc[key] !== current[key]) return { statuses: [400], why: `${key} changed` }
  return { statuses: [200], doc: Object.fromEntries(PATCHABLE.map(key => [key, doc[key]])), why: 'valid' }
}

// ---------------------------------------------------------------------------------------------
// The generator

const VALID_PATHS = [
  '/description',
  '/description',
  '/type',
  '/type',
  '/stale',
  '/stale',
  '/impressionData',
  '/archived',
  '/name',
  '/project',
  '/createdAt',
]
const VARIANT_PATHS = ['/variants', '/variants/0', '/variants/0/name', '/variants/-']
const FORBIDDEN_PATHS = [
  '/__proto__',
  '/constructor',
  '/prototype',
  '/__proto__/polluted',
  '/constructor/prototype/polluted',
  '/description/__proto__',
  '/__proto__/stale',
]
const INVALID_PATHS = [
  'description',
  '',
  '/',
  '/nope',
  '/description/0',
  '/Description',
  '/stale/',
  '/a~1b',
  '/~0',
  '/environments',
  '/enabled',
  '/archivedAt',
  '//',
  '/type/length',
  'stale',
]

function randomPath(random: Random): string {
  const roll = random.next()
  if (roll < 0.78) return random.pick(VALID_PATHS)
  if (roll < 0.83) return random.pick(VARIANT_PATHS)
  if (roll < 0.89) return random.pick(FORBIDDEN_PATHS)
  return random.pick(INVALID_PATHS)
}

function randomJson(random: Random, current: Doc, depth = 0): Json {
  switch (random.int(0, 9)) {
    case 0:
      return null
    case 1:
      return random.chance(0.5)
    case 2:
      return random.pick([0, 1, -1, 3.5, 1000])
    case 3:
      return random.pick(FLAG_TYPES)
    case 4:
      return random.pick([
        '',
        'hello',
        'yes',
        'true',
        'Release',
        '__proto__',
        'prop-other',
        'x'.repeat(40),
        'ünïcödé',
        '2000-01-01T00:00:00.000Z',
      ])
    case 5:
      return current[random.pick(PATCHABLE)] ?? null
    case 6:
      return depth > 1 ? [] : Array.from({ length: random.int(0, 2) }, () => randomJson(random, current, depth + 1))
    case 7:
      return depth > 1
        ? {}
        : random.pick([
            {},
            { polluted: true },
            { a: randomJson(random, current, depth + 1) },
            { __proto__: { polluted: 1 } } as unknown as Json,
          ])
    case 8:
      return random.pick([FLAG, 'default', `${FLAG}-renamed`])
    default:
      return `text-${random.int(0, 999)}`
  }
}

/** A value that usually suits the path, so that a fair share of patches is valid. */
function valueFor(random: Random, path: string, current: Doc): Json {
  const key = propertyOf(path)
  if (key === null || random.chance(0.3)) return randomJson(random, current)
  if (BOOLEANS.includes(key)) return random.chance(0.5)
  if (key === 'type') return random.pick(FLAG_TYPES)
  if (key === 'description') return random.chance(0.2) ? null : `description ${random.int(0, 99)}`
  return random.chance(0.8) ? current[key] : randomJson(random, current)
}

/** `earlier`: paths of the patch's earlier operations, often reused so that operations interact. */
/**
 * `focused`: only valid ops on the few properties whose removal can still give a valid flag, so that
 * sequences such as remove-then-replace (RFC 6902 sequencing) come up often.
 */
function randomOperation(random: Random, current: Doc, earlier: string[], focused: boolean): Operation {
  const roll = random.next()
  const op = focused
    ? random.pick(OPS)
    : roll < 0.03
      ? random.pick(['bogus', 'Replace', '_get'])
      : roll < 0.33
        ? 'replace'
        : roll < 0.48
          ? 'add'
          : roll < 0.58
            ? 'remove'
            : roll < 0.68
              ? 'copy'
              : roll < 0.78
                ? 'move'
                : 'test'
  const freshPath = () =>
    focused ? random.pick(['/description', '/description', '/description', '/stale', '/type']) : randomPath(random)
  const somePath = () => (earlier.length > 0 && random.chance(0.35) ? random.pick(earlier) : freshPath())
  const path = somePath()
  const operation: Operation = { op, path }
  if (op === 'copy' || op === 'move' ? focused || random.chance(0.92) : !focused && random.chance(0.05))
    operation.from = somePath()
  if (
    ['add', 'replace', 'test', 'bogus', 'Replace', '_get'].includes(op)
      ? focused || random.chance(0.95)
      : !focused && random.chance(0.1)
  ) {
    const key = propertyOf(path)
    operation.value =
      op === 'test' && key !== null && random.chance(0.6) ? (current[key] ?? null) : valueFor(random, path, current)
  }
  if (!focused && random.chance(0.03))
    (operation as unknown as Record<string, unknown>)[random.pick(['foo', 'values', 'Value', 'form'])] = 1
  return operation
}

function randomPatch(random: Random, current: Doc): Operation[] {
  const focused = random.chance(0.25)
  const count = focused ? random.int(2, 4) : random.pick([0, 1, 1, 1, 2, 2, 2, 3, 3, 4])
  const operations: Operation[] = []
  const earlier: string[] = []
  for (let i = 0; i < count; i++) {
    const operation = randomOperation(random, current, earlier, focused)
    operations.push(operation)
    for (const pointer of [operation.path, operation.from]) if (typeof pointer === 'string') earlier.push(pointer)
  }
  return operations
}

// ---------------------------------------------------------------------------------------------
// The run

function metadataOf(flag: Record<string, unknown>): Doc {
  return Object.fromEntries(PATCHABLE.map(key => [key, flag[key] as Json]))
}

interface Mismatch {
  kind: string
  example: unknown
}

async function run(seed: number): Promise<{ mismatches: Mismatch[]; statuses: Record<number, number> }> {
  const random = seededRandom(seed)
  expect((await api.createProject(OTHER_PROJECT)).status).toBe(201)
  expect((await api.createFlag('default', FLAG, { description: 'start' })).status).toBe(201)
  expect((await api.toggle('default', FLAG, 'development', true)).status).toBe(200)
  const mismatches: Mismatch[] = []
  const statuses: Record<number, number> = {}
  const mismatch = (kind: string, example: unknown) => mismatches.push({ kind, example })

  for (let step = 0; step < REQUESTS_PER_SEED; step++) {
    const beforeResponse = await api.getFlag('default', FLAG)
    expect(beforeResponse.status).toBe(200)
    const before: Record<string, Json> = beforeResponse.body
    const current = metadataOf(before)
    const since = api.lastEventId()
    const roll = random.next()
    const target = roll < 0.04 ? 'unknown' : roll < 0.08 ? 'other' : 'own'
    const operations = randomPatch(random, current)
    const path =
      target === 'unknown'
        ? `/api/admin/projects/default/features/prop-missing`
        : `/api/admin/projects/${target === 'other' ? OTHER_PROJECT : 'default'}/features/${FLAG}`
    const response = await api.patch<Record<string, Json>>(path, operations)
    statuses[response.status] = (statuses[response.status] ?? 0) + 1
    const want = model(target, current, operations)
    const example = {
      seed,
      step,
      target,
      operations,
      current,
      expected: want,
      status: response.status,
      body: response.body,
    }

    if (!ALLOWED_STATUSES.includes(response.status))
      mismatch(`status ${response.status} is not one of ${ALLOWED_STATUSES.join('/')}`, example)
    else if (!want.statuses.includes(response.status))
      mismatch(
        `expected ${want.statuses.join('|')} (${want.why.replace(/^op \d+: /, '').replace(/"[^"]*"/, 'PATH')}), got ${response.status}`,
        example,
      )
    if (Object.hasOwn(Object.prototype, 'polluted') || ({} as Record<string, unknown>).polluted !== undefined) {
      mismatch('Object.prototype polluted', example)
      delete (Object.prototype as Record<string, unknown>).polluted
    }

    const afterResponse = await api.getFlag('default', FLAG)
    expect(afterResponse.status).toBe(200)
    const after: Record<string, Json> = afterResponse.body
    const events = api.eventsSince(since)

    if (response.status !== 200) {
      if (
        errorOf(response)?.name === undefined ||
        typeof errorOf(response).message !== 'string' ||
        errorOf(response).message.length === 0
      )
        mismatch('error without name or message', example)
      if (!deepEqual(after, before)) mismatch('a refused patch changed the flag', { ...example, after })
      if (events.length !== 0) mismatch('a refused patch wrote events', { ...example, events })
      continue
    }

    if (!deepEqual(response.body, after)) mismatch('the 200 answer differs from GET', { ...example, after })
    if (want.doc && !deepEqual(metadataOf(after), want.doc))
      mismatch('metadata after 200 differs from the model', { ...example, after: metadataOf(after) })
    // Whatever the model says, an accepted patch leaves valid types and read-only properties alone.
    for (const key of READ_ONLY) if (after[key] !== before[key]) mismatch(`read-only ${key} changed`, example)
    if (typeof after.type !== 'string' || !FLAG_TYPES.includes(after.type)) mismatch('type is not a flag type', example)
    for (const key of BOOLEANS) if (typeof after[key] !== 'boolean') mismatch(`${key} is not a boolean`, example)
    if (after.description !== null && typeof after.description !== 'string')
      mismatch('description is not a string or null', example)
    if (after.archived !== (after.archivedAt !== null))
      mismatch('archivedAt does not follow archived', { ...example, after })
    if (after.archived === before.archived && after.archivedAt !== before.archivedAt)
      mismatch('archivedAt changed without archived changing', example)

    const changed = !deepEqual(metadataOf(after), current)
    const expectedTypes = changed
      ? [
          'feature-metadata-updated',
          ...(after.stale !== before.stale ? [after.stale ? 'feature-stale-on' : 'feature-stale-off'] : []),
          ...(after.archived !== before.archived ? [after.archived ? 'feature-archived' : 'feature-revived'] : []),
        ].sort()
      : []
    const types = events.map(event => event.type).sort()
    if (!deepEqual(types, expectedTypes))
      mismatch(`events ${JSON.stringify(types)} instead of ${JSON.stringify(expectedTypes)}`, { ...example, events })
    const metadataEvent = events.find(event => event.type === 'feature-metadata-updated')
    if (metadataEvent) {
      if (
        !deepEqual(metadataEvent.data as Json, metadataOf(after)) ||
        !deepEqual(metadataEvent.preData as Json, current)
      ) {
        mismatch('feature-metadata-updated data/preData are not the states after/before', {
          ...example,
          event: metadataEvent,
        })
      }
    }
    for (const event of events) {
      if (event.project !== 'default' || event.featureName !== FLAG)
        mismatch("event without the flag's project and name", { ...example, event })
    }
  }
  return { mismatches, statuses }
}

/** One line per kind of mismatch, with how often it happened and its first example. */
function summary(mismatches: Mismatch[]) {
  const byKind: Record<string, { count: number; example: unknown }> = {}
  for (const { kind, example } of mismatches) {
    byKind[kind] ??= { count: 0, example }
    byKind[kind].count++
  }
  return byKind
}

describe('PATCH property: random JSON-Patch documents', () => {
  for (const seed of SEEDS) {
    test(`PATCH property (seed ${seed}): never a 500, the status the contract gives, nothing changed on refusal, the model's flag and events on success`, async () => {
      const { mismatches, statuses } = await run(seed)
      // The run must have exercised both sides: enough accepted and enough refused patches.
      expect(statuses[200] ?? 0).toBeGreaterThan(10)
      expect((statuses[400] ?? 0) + (statuses[403] ?? 0) + (statuses[404] ?? 0) + (statuses[409] ?? 0)).toBeGreaterThan(
        10,
      )
      expect(summary(mismatches)).toEqual({})
    }, 20_000)
  }

  test('PATCH property: Object.prototype is never polluted by any of the runs', () => {
    expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})

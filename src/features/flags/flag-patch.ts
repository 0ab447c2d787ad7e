/**
 * JSON Patch (RFC 6902) over a flag's metadata, with the contract's order of checks (§5), and over
 * the variant list of a flag in an environment. fast-json-patch mutates the document it is given
 * and applies operations one at a time, so it works on a fresh copy and the result is checked as a
 * whole before anything is stored: the patch applies completely or not at all.
 */
import { applyOperation, type Operation } from 'fast-json-patch'
import { ConflictError, NoAccessError, ValidationError } from '../../errors'
import type { FlagMetadata } from './flags.records'

export const PATCH_OPS = ['add', 'remove', 'replace', 'copy', 'move', 'test'] as const
export const PATCHABLE = [
  'name',
  'description',
  'type',
  'project',
  'stale',
  'impressionData',
  'archived',
  'createdAt',
] as const
/** The members each operation may have (RFC 6902, section 4). */
const MEMBERS: Record<(typeof PATCH_OPS)[number], readonly string[]> = {
  add: ['op', 'path', 'value'],
  replace: ['op', 'path', 'value'],
  test: ['op', 'path', 'value'],
  remove: ['op', 'path'],
  move: ['op', 'from', 'path'],
  copy: ['op', 'from', 'path'],
}
const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype'])
const FORBIDDEN_LIST = [...FORBIDDEN_SEGMENTS].join(', ')

/** One operation as received; `checkOperation` makes sure of its shape. */
export type PatchOperation = Record<string, unknown>

function touchesVariants(pointer: unknown) {
  return typeof pointer === 'string' && (pointer === '/variants' || pointer.startsWith('/variants/'))
}

/** Refuses patches that touch the deprecated feature-level variants (contract §5: 403). */
export function assertNoVariantOps(operations: readonly PatchOperation[]) {
  if (operations.some(operation => touchesVariants(operation.path) || touchesVariants(operation.from))) {
    throw new NoAccessError(
      'Variants cannot be patched on the flag; change them through /api/admin/projects/:projectId/features/:featureName/environments/:environment/variants',
      'UPDATE_FEATURE_VARIANTS',
    )
  }
}

function unescapeSegment(segment: string) {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~')
}

/** Says whether a pointer's segments name something the patched document may have; throws when not. */
type PointerRule = (segments: string[], pointer: string, index: number, field: 'path' | 'from') => void

function checkPointer(pointer: string, index: number, field: 'path' | 'from', rule: PointerRule) {
  const where = `/${index}/${field}`
  if (!pointer.startsWith('/')) {
    throw new ValidationError(`Operation ${index}: ${field} "${pointer}" must start with "/"`, [
      { message: 'must start with "/"', path: where },
    ])
  }
  const segments = pointer.slice(1).split('/').map(unescapeSegment)
  if (segments.some(segment => FORBIDDEN_SEGMENTS.has(segment))) {
    throw new ValidationError(`Operation ${index}: ${field} "${pointer}" is not allowed`, [
      { message: `must not name ${FORBIDDEN_LIST}`, path: where },
    ])
  }
  rule(segments, pointer, index, field)
}

/** The flag metadata: one of its patchable properties, nothing below them. */
const metadataPointer: PointerRule = (segments, pointer, index, field) => {
  const where = `/${index}/${field}`
  if (segments.length !== 1 || !(PATCHABLE as readonly string[]).includes(segments[0])) {
    throw new ValidationError(
      `Operation ${index}: ${field} "${pointer}" is not a property of a flag that can be patched (${PATCHABLE.map(p => '/' + p).join(', ')})`,
      [{ message: `must be one of ${PATCHABLE.map(p => '/' + p).join(', ')}`, path: where }],
    )
  }
}

/** A variant list: an index (or `-`, the end, where an add may go) and anything within that variant. */
const variantsPointer: PointerRule = (segments, pointer, index, field) => {
  if (!/^(0|[1-9]\d{0,3}|-)$/.test(segments[0])) {
    throw new ValidationError(
      `Operation ${index}: ${field} "${pointer}" must start with a variant's index, such as /0 or /0/weight, or /- to add at the end`,
      [{ message: "must start with a variant's index (such as /0) or /-", path: `/${index}/${field}` }],
    )
  }
}

function checkOperation(operation: PatchOperation, index: number, rule: PointerRule) {
  if (typeof operation.op !== 'string' || !(PATCH_OPS as readonly string[]).includes(operation.op)) {
    throw new ValidationError(`Operation ${index}: op must be one of ${PATCH_OPS.join(', ')}`, [
      { message: `must be one of ${PATCH_OPS.join(', ')}`, path: `/${index}/op` },
    ])
  }
  // RFC 6902 says other members are ignored; we refuse them, as every body of ours refuses unknown
  // properties, so that a misspelt "value" or a "from" on an add is an error, not a silent no-op.
  const allowed = MEMBERS[operation.op as (typeof PATCH_OPS)[number]]
  for (const member of Object.keys(operation)) {
    if (!allowed.includes(member)) {
      const pointer = `/${index}/${member.replace(/~/g, '~0').replace(/\//g, '~1')}`
      throw new ValidationError(
        `Operation ${index}: ${operation.op} takes only ${allowed.join(', ')}, not ${JSON.stringify(member)}`,
        [{ message: `is not a member of ${operation.op} (it takes only ${allowed.join(', ')})`, path: pointer }],
      )
    }
  }
  if (typeof operation.path !== 'string') {
    throw new ValidationError(`Operation ${index}: path must be a string`, [
      { message: 'is required, as a string', path: `/${index}/path` },
    ])
  }
  checkPointer(operation.path, index, 'path', rule)
  if (operation.from !== undefined && typeof operation.from !== 'string') {
    throw new ValidationError(`Operation ${index}: from must be a string`, [
      { message: 'must be a string', path: `/${index}/from` },
    ])
  }
  if (operation.op === 'copy' || operation.op === 'move') {
    if (typeof operation.from !== 'string') {
      throw new ValidationError(`Operation ${index}: ${operation.op} needs "from"`, [
        { message: `is required for ${operation.op}`, path: `/${index}/from` },
      ])
    }
    checkPointer(operation.from, index, 'from', rule)
  }
  if ((operation.op === 'add' || operation.op === 'replace' || operation.op === 'test') && !('value' in operation)) {
    throw new ValidationError(`Operation ${index}: ${operation.op} needs "value"`, [
      { message: `is required for ${operation.op}`, path: `/${index}/value` },
    ])
  }
}

/** Applies the operations to a copy of `metadata` and returns the patched document, unchecked. */
export function applyFlagPatch(metadata: FlagMetadata, operations: readonly PatchOperation[]): Record<string, unknown> {
  return applyPatch(metadata, operations, metadataPointer, 'the flag has changed since you read it') as Record<
    string,
    unknown
  >
}

/** Applies the operations to a copy of a variant list and returns the patched list, unchecked. */
export function applyVariantsPatch(variants: readonly object[], operations: readonly PatchOperation[]): unknown {
  return applyPatch(variants, operations, variantsPointer, 'the variants have changed since you read them')
}

function applyPatch(
  original: object,
  operations: readonly PatchOperation[],
  rule: PointerRule,
  changed: string,
): unknown {
  operations.forEach((operation, index) => checkOperation(operation, index, rule))
  const document = structuredClone(original)
  const copies = structuredClone(operations) as unknown as Operation[]
  operations.forEach((operation, index) => {
    try {
      applyOperation(document, copies[index], true, true, true, index)
    } catch (error) {
      const name = (error as { name?: string }).name
      if (name === 'TEST_OPERATION_FAILED') {
        throw new ConflictError(`Operation ${index}: test of ${operation.path} failed; ${changed}`)
      }
      const reason = (error as Error).message.split('\n')[0]
      throw new ValidationError(`Operation ${index} (${operation.op} ${operation.path}) cannot be applied: ${reason}`, [
        { message: `cannot be applied: ${reason}`, path: `/${index}` },
      ])
    }
  })
  return document
}

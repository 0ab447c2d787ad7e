/**
 * What each action of a change request does: its payload's schema (the direct route's body schema),
 * its write (the direct route's own write inside a transaction, so a change is checked and applied
 * exactly as the route would), and the version of what it changes, for conflicts.
 */
import { createHash } from 'node:crypto'
import { Value } from '@sinclair/typebox/value'
import { t, type TSchema } from 'elysia'
import { ValidationError, type ErrorDetail } from '../../errors'
import { validationDetails } from '../../http/validation-messages'
import type { StateReader, Tx } from '../../storage/store'
import { archiveFlag, liveFlagInProject, setEnvironmentEnabled } from '../flags/flag-rules'
import type { FlagRecord } from '../flags/flags.records'
import { DependencyInput } from '../flags/flags.model'
import type { RelationsService } from '../flags/relations.service'
import type { StrategiesService } from '../flags/strategies.service'
import { SortOrderInput, StrategyInput, VariantInput } from '../flags/strategy.model'
import { buildVariants } from '../flags/variant-rules'
import { UpsertSegment } from '../segments/segments.model'
import { updateSegmentIn } from '../segments/segments.service'
import type { ChangeAction } from './change-requests.records'

/** The flag services whose writes the actions reuse. */
export interface ChangeWriters {
  strategies: Pick<StrategiesService, 'addIn' | 'updateIn' | 'removeIn' | 'setSortOrderIn' | 'setVariantsIn'>
  relations: Pick<RelationsService, 'addDependencyIn' | 'removeDependencyIn'>
}

const StrategyId = t.Object({ id: t.String({ maxLength: 100, description: 'Strategy id' }) })
const SegmentId = t.Object({ id: t.Integer({ minimum: 1, description: 'Segment id' }) })

/** Each action's payload, as its direct route's body schema (with the id its path would name). */
export const PAYLOADS: Record<ChangeAction, TSchema> = {
  updateEnabled: t.Object({ enabled: t.Boolean() }),
  addStrategy: StrategyInput,
  updateStrategy: t.Composite([StrategyId, StrategyInput]),
  deleteStrategy: StrategyId,
  reorderStrategy: SortOrderInput,
  patchVariant: t.Object({ variants: t.Array(VariantInput) }),
  archiveFeature: t.Object({}),
  addDependency: DependencyInput,
  deleteDependency: t.Object({ feature: t.String({ description: 'Name of the parent flag' }) }),
  updateSegment: t.Composite([SegmentId, UpsertSegment]),
}

/** A change to check, apply or version: the request's project and environment and the change itself. */
export interface ChangeTarget {
  project: string
  environment: string
  feature: string | null
  action: ChangeAction
  payload: unknown
}

/** 400 naming `at` + the payload's place for each broken rule of the payload's schema. */
export function checkPayload(action: ChangeAction, payload: unknown, at: string): void {
  const schema = PAYLOADS[action]
  if (Value.Check(schema, payload)) return
  const details = validationDetails(Value.Errors(schema, payload)).map(d => ({ ...d, path: at + (d.path ?? '') }))
  throw new ValidationError(
    `The ${action} change's payload is not valid: ${details[0].path} ${details[0].message}`,
    details,
  )
}

/** The same error with its details' paths moved under `at` (a change's payload in the request). */
export function under(error: unknown, at: string): unknown {
  if (!(error instanceof ValidationError)) return error
  const details: ErrorDetail[] = (error.details ?? []).map(d => ({ ...d, path: at + (d.path ?? '') }))
  return new ValidationError(error.message, details)
}

type Payload = Record<string, unknown>

/** Applies one change inside `tx` through the direct route's write. */
export function applyChange(tx: Tx, writers: ChangeWriters, change: ChangeTarget): void {
  const { project, environment } = change
  const payload = change.payload as Payload
  const flag = () => liveFlagInProject(tx, project, change.feature ?? '')
  const { id, ...rest } = payload
  switch (change.action) {
    case 'updateEnabled':
      setEnvironmentEnabled(tx, flag(), environment, payload.enabled as boolean)
      return
    case 'addStrategy':
      writers.strategies.addIn(tx, flag(), environment, payload as never)
      return
    case 'updateStrategy':
      writers.strategies.updateIn(tx, flag(), environment, id as string, rest as never)
      return
    case 'deleteStrategy':
      writers.strategies.removeIn(tx, flag(), environment, id as string)
      return
    case 'reorderStrategy':
      writers.strategies.setSortOrderIn(tx, flag(), environment, payload as never)
      return
    case 'patchVariant':
      writers.strategies.setVariantsIn(tx, flag(), environment, buildVariants(payload.variants as never, '/variants'))
      return
    case 'archiveFeature':
      archiveFlag(tx, flag())
      return
    case 'addDependency':
      writers.relations.addDependencyIn(tx, project, change.feature ?? '', payload as never)
      return
    case 'deleteDependency':
      writers.relations.removeDependencyIn(tx, project, change.feature ?? '', payload.feature as string)
      return
    case 'updateSegment':
      updateSegmentIn(tx, String(id), rest as never)
      return
  }
}

const digest = (value: unknown) =>
  createHash('sha256')
    .update(JSON.stringify(value ?? null))
    .digest('hex')
    .slice(0, 16)

/** What a change changes, as it is in `reader`: the flag's environment, the strategy, the variants, the dependencies, the segment. */
export function versionOf(reader: StateReader, change: ChangeTarget): string {
  if (change.action === 'updateSegment')
    return digest(reader.get('segments', String((change.payload as Payload).id)) ?? null)
  const flag: FlagRecord | undefined = reader.get('flags', change.feature ?? '')
  if (!flag || flag.project !== change.project) return digest(null)
  const entry = flag.environments[change.environment]
  const slim = entry && { enabled: entry.enabled, strategies: entry.strategies, variants: entry.variants }
  switch (change.action) {
    case 'updateStrategy':
    case 'deleteStrategy':
      return digest(entry?.strategies.find(s => s.id === (change.payload as Payload).id) ?? null)
    case 'patchVariant':
      return digest(entry?.variants ?? null)
    case 'addDependency':
    case 'deleteDependency':
      return digest([flag.archived, flag.dependencies])
    case 'archiveFeature':
      return digest([flag.archived, flag.dependencies, slim])
    default:
      return digest([flag.archived, slim])
  }
}

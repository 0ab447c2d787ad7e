/**
 * Context fields (Unleash's /api/admin/context): the fields of the Unleash context that
 * constraints and stickiness name. A field with legal values limits what strategy constraints on
 * it may compare with (checkLegalValues); as in Unleash, a constraint may name a field that is not
 * defined, and deleting a field leaves the constraints on it as they are.
 */
import type { Static } from '@sinclair/typebox'
import { events } from '../../domain/events'
import { NameExistsError, NotFoundError, ValidationError } from '../../errors'
import type { StateReader, Store, Tx } from '../../storage/store'
import { checkLimit } from '../limits'
import { dotSegmentProblem, nameProblem } from '../names'
import { actorOf, callerSeesProject, type Caller } from '../tokens/permissions'
import type {
  ContextField,
  ContextFieldStrategies,
  CreateContextField,
  LegalValue,
  UpdateContextField,
} from './context.model'
import type { ContextFieldRecord, LegalValueRecord } from './context.records'

export type ContextFieldView = Static<typeof ContextField>
export type CreateContextFieldInput = Static<typeof CreateContextField>
export type UpdateContextFieldInput = Static<typeof UpdateContextField>
export type LegalValueInput = Static<typeof LegalValue>
export type ContextFieldStrategiesView = Static<typeof ContextFieldStrategies>

/**
 * Throws a 400 unless every one of `values` is a legal value of the field `contextName`, when that
 * field exists and has legal values (Unleash's rule for strategy constraints). `pathOf(i)` names the
 * value's place in the request.
 */
export function checkLegalValues(
  reader: Pick<StateReader, 'get'>,
  contextName: string,
  values: readonly string[],
  pathOf: (index: number) => string,
): void {
  const legal = reader.get('contextFields', contextName)?.legalValues ?? []
  if (legal.length === 0) return
  const allowed = new Set(legal.map(legalValue => legalValue.value))
  values.forEach((value, index) => {
    if (allowed.has(value)) return
    const shown =
      legal.length <= 20
        ? `: ${legal.map(legalValue => JSON.stringify(legalValue.value)).join(', ')}`
        : ` (${legal.length}; see GET /api/admin/context/${contextName})`
    throw ValidationError.at(
      pathOf(index),
      `${JSON.stringify(value)} is not a legal value of context field "${contextName}"; its legal values are${shown}`,
    )
  })
}

function viewOf(record: ContextFieldRecord): ContextFieldView {
  return {
    name: record.name,
    description: record.description,
    stickiness: record.stickiness,
    sortOrder: record.sortOrder,
    createdAt: record.createdAt,
    legalValues: record.legalValues.map(legalValue => ({ ...legalValue })),
  }
}

/**
 * The checked legal values of a request. `stored` are the values the field has: one of them that
 * breaks a newer rule (a "." or ".." kept from an older data directory) may stay, so that the field
 * can still be updated.
 */
function legalValuesOf(
  input: readonly LegalValueInput[] | null,
  stored: readonly LegalValueRecord[] = [],
): LegalValueRecord[] {
  const seen = new Set<string>()
  const kept = new Set(stored.map(legalValue => legalValue.value))
  return (input ?? []).map((legalValue, index) => {
    if (seen.has(legalValue.value))
      throw ValidationError.at(
        `/legalValues/${index}/value`,
        `Legal values must be unique; ${JSON.stringify(legalValue.value)} appears twice`,
      )
    const dots = kept.has(legalValue.value) ? null : dotSegmentProblem(legalValue.value, 'A legal value')
    if (dots) throw ValidationError.at(`/legalValues/${index}/value`, dots)
    seen.add(legalValue.value)
    return legalValue.description === undefined
      ? { value: legalValue.value }
      : { value: legalValue.value, description: legalValue.description }
  })
}

function checkName(name: string): void {
  const problem = nameProblem(name, 'context field')
  if (problem) throw ValidationError.at('/name', problem)
}

function found(reader: Pick<StateReader, 'get'>, name: string): ContextFieldRecord {
  const record = reader.get('contextFields', name)
  if (!record) throw new NotFoundError(`No context field named "${name}"`)
  return record
}

/**
 * The write of createContextField inside `tx`, with its context-field-created event: the route and
 * the import (which creates the context fields it brings that are missing here) both make context
 * fields through it. Errors name fields relative to the context field (`/name`, `/legalValues/1/value`).
 */
export function createContextFieldIn(tx: Tx, input: CreateContextFieldInput): ContextFieldView {
  checkName(input.name)
  const legalValues = legalValuesOf(input.legalValues ?? null)
  if (tx.get('contextFields', input.name))
    throw new NameExistsError(`A context field named "${input.name}" already exists`)
  checkLimit('contextFields', tx.values('contextFields').length + 1, '/name')
  const record: ContextFieldRecord = {
    name: input.name,
    description: input.description ?? '',
    stickiness: input.stickiness ?? false,
    sortOrder: input.sortOrder ?? 0,
    legalValues,
    createdAt: tx.now,
  }
  tx.put('contextFields', record.name, record)
  tx.appendEvent(events.contextFieldCreated(viewOf(record)))
  return viewOf(record)
}

export class ContextService {
  constructor(private readonly store: Pick<Store, 'state' | 'reader' | 'transact'>) {}

  /**
   * By name, as Unleash lists them, with how many live flags (and their projects) constrain on
   * each; only flags of projects the caller sees are counted.
   */
  list(caller: Caller): ContextFieldView[] {
    const usage = new Map<string, { flags: Set<string>; projects: Set<string> }>()
    for (const flag of Object.values(this.store.state.flags)) {
      if (flag.archived || !callerSeesProject(caller, flag.project)) continue
      for (const environment of Object.values(flag.environments)) {
        for (const strategy of environment.strategies) {
          for (const constraint of strategy.constraints) {
            let used = usage.get(constraint.contextName)
            if (!used) usage.set(constraint.contextName, (used = { flags: new Set(), projects: new Set() }))
            used.flags.add(flag.name)
            used.projects.add(flag.project)
          }
        }
      }
    }
    return Object.values(this.store.state.contextFields)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map(record => {
        const used = usage.get(record.name)
        return used
          ? { ...viewOf(record), usedInFeatures: used.flags.size, usedInProjects: used.projects.size }
          : viewOf(record)
      })
  }

  /**
   * getStrategiesByContextField: every strategy with a constraint on `name`, of the flags of projects
   * the caller sees. As in Unleash, a field that does not exist (or was deleted while constraints
   * still name it) is not a 404, and the strategies of archived flags are listed too: they are
   * still stored, and come back with the flag.
   */
  strategiesUsing(name: string, caller: Caller): ContextFieldStrategiesView {
    const strategies: ContextFieldStrategiesView['strategies'] = []
    const flags = Object.values(this.store.state.flags).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const flag of flags) {
      if (!callerSeesProject(caller, flag.project)) continue
      for (const environment of Object.keys(flag.environments).sort()) {
        for (const strategy of [...flag.environments[environment].strategies].sort(
          (a, b) => a.sortOrder - b.sortOrder,
        )) {
          if (!strategy.constraints.some(constraint => constraint.contextName === name)) continue
          strategies.push({
            id: strategy.id,
            projectId: flag.project,
            featureName: flag.name,
            strategyName: strategy.name,
            environment,
          })
        }
      }
    }
    return { strategies }
  }

  get(name: string): ContextFieldView {
    return viewOf(found(this.store.reader, name))
  }

  /** `POST /api/admin/context/validate`: name rules (400), taken (409). */
  validateName(name: string): void {
    checkName(name)
    if (this.store.reader.get('contextFields', name))
      throw new NameExistsError(`A context field named "${name}" already exists`)
  }

  async create(input: CreateContextFieldInput, caller: Caller): Promise<ContextFieldView> {
    return this.store.transact(actorOf(caller), tx => createContextFieldIn(tx, input))
  }

  async update(name: string, input: UpdateContextFieldInput, caller: Caller): Promise<ContextFieldView> {
    if (input.name !== undefined && input.name !== name)
      throw ValidationError.at(
        '/name',
        `The body names "${input.name}" but the path "${name}"; a context field cannot be renamed`,
      )
    return this.store.transact(actorOf(caller), tx => {
      const before = found(tx, name)
      const legalValues =
        input.legalValues === undefined ? undefined : legalValuesOf(input.legalValues, before.legalValues)
      const record: ContextFieldRecord = {
        ...before,
        description: input.description === undefined ? before.description : (input.description ?? ''),
        stickiness: input.stickiness ?? before.stickiness,
        sortOrder: input.sortOrder ?? before.sortOrder,
        legalValues: legalValues ?? before.legalValues,
      }
      tx.put('contextFields', name, record)
      tx.appendEvent(events.contextFieldUpdated(viewOf(record), viewOf(before)))
      return viewOf(record)
    })
  }

  /** Adds a legal value, or replaces the description of one the field has (Unleash's updateContextFieldLegalValue). */
  async putLegalValue(name: string, input: LegalValueInput, caller: Caller): Promise<ContextFieldView> {
    return this.store.transact(actorOf(caller), tx => {
      const before = found(tx, name)
      const kept = before.legalValues.some(legalValue => legalValue.value === input.value)
      const dots = kept ? null : dotSegmentProblem(input.value, 'A legal value')
      if (dots) throw ValidationError.at('/value', dots)
      const added =
        input.description === undefined
          ? { value: input.value }
          : { value: input.value, description: input.description }
      const index = before.legalValues.findIndex(legalValue => legalValue.value === added.value)
      const legalValues =
        index === -1
          ? [...before.legalValues, added]
          : before.legalValues.map((legalValue, i) => (i === index ? added : legalValue))
      checkLimit('legalValuesPerContextField', legalValues.length, '/value')
      const record = { ...before, legalValues }
      tx.put('contextFields', name, record)
      tx.appendEvent(events.contextFieldUpdated(viewOf(record), viewOf(before)))
      return viewOf(record)
    })
  }

  /** As in Unleash, constraints already using the value keep it. */
  async deleteLegalValue(name: string, value: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const before = found(tx, name)
      if (!before.legalValues.some(legalValue => legalValue.value === value))
        throw new NotFoundError(`Context field "${name}" has no legal value ${JSON.stringify(value)}`)
      const record = { ...before, legalValues: before.legalValues.filter(legalValue => legalValue.value !== value) }
      tx.put('contextFields', name, record)
      tx.appendEvent(events.contextFieldUpdated(viewOf(record), viewOf(before)))
    })
  }

  async delete(name: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const before = found(tx, name)
      tx.delete('contextFields', name)
      tx.appendEvent(events.contextFieldDeleted(viewOf(before)))
    })
  }
}

/**
 * Strategy definitions (sdk-api-contract §4): the built-in types, fixed, and the types users define,
 * which strategies on flags may then use; the SDKs evaluate them, this service stores and serves them.
 */
import { events } from '../../domain/events'
import { NameExistsError, NotFoundError, ValidationError } from '../../errors'
import type { Store, Tx } from '../../storage/store'
import { assertValidName } from '../names'
import { actorOf, type Caller } from '../tokens/permissions'
import type { Static } from '@sinclair/typebox'
import { BUILT_IN_STRATEGIES, builtInStrategy } from './built-in-strategies'
import type { CreateStrategyType, StrategyType, UpdateStrategyType } from './strategy-types.model'
import type { StrategyParameterRecord, StrategyTypeRecord } from './strategy-types.records'

export type StrategyTypeView = Static<typeof StrategyType>
export type CreateStrategyTypeInput = Static<typeof CreateStrategyType>
export type UpdateStrategyTypeInput = Static<typeof UpdateStrategyType>

/**
 * Whether a strategy on a flag may be of type `name`; throws a 400 at `path` if not. A deprecated
 * type may not be given to a strategy, except one that already had it (`previous`), so that
 * strategies kept on a deprecated type can still be edited, as Unleash lets them stay.
 */
export function checkStrategyTypeUsable(
  tx: Pick<Tx, 'get'>,
  name: string,
  previous: string | undefined,
  path: string,
): void {
  if (builtInStrategy(name)) return
  const defined = tx.get('strategyTypes', name)
  if (!defined) {
    const known = [...BUILT_IN_STRATEGIES.map(s => s.name), 'or a type defined with POST /api/admin/strategies'].join(
      ', ',
    )
    throw ValidationError.at(path, `Unknown strategy "${name}"; use one of ${known}`)
  }
  if (defined.deprecated && previous !== name) {
    throw ValidationError.at(
      path,
      `Strategy type "${name}" is deprecated; reactivate it (POST /api/admin/strategies/${name}/reactivate) to add it to flags`,
    )
  }
}

function parametersOf(input: CreateStrategyTypeInput['parameters']): StrategyParameterRecord[] {
  const seen = new Set<string>()
  return input.map((parameter, index) => {
    if (parameter.name.trim() === '') throw ValidationError.at(`/parameters/${index}/name`, 'A parameter needs a name')
    if (seen.has(parameter.name))
      throw ValidationError.at(
        `/parameters/${index}/name`,
        `Parameter names must be unique; "${parameter.name}" appears twice`,
      )
    seen.add(parameter.name)
    return {
      name: parameter.name,
      type: parameter.type,
      description: parameter.description ?? '',
      required: parameter.required ?? false,
    }
  })
}

function viewOf(record: StrategyTypeRecord): StrategyTypeView {
  return {
    name: record.name,
    displayName: record.title,
    title: record.title,
    description: record.description,
    editable: true,
    deprecated: record.deprecated,
    parameters: record.parameters,
  }
}

/** The stored definition of a user-defined type; 404 if none, 400 for a built-in one. */
function editable(tx: Pick<Tx, 'get'>, name: string, what: string): StrategyTypeRecord {
  if (builtInStrategy(name)) throw new ValidationError(`"${name}" is a built-in strategy type and cannot be ${what}`)
  const record = tx.get('strategyTypes', name)
  if (!record) throw new NotFoundError(`No strategy type named "${name}"`)
  return record
}

export class StrategyTypesService {
  constructor(private readonly store: Pick<Store, 'state' | 'transact'>) {}

  list(): StrategyTypeView[] {
    const builtIns = BUILT_IN_STRATEGIES.map(s => ({ ...s, title: null, editable: false, deprecated: false }))
    const defined = Object.values(this.store.state.strategyTypes)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map(viewOf)
    return [...builtIns, ...defined]
  }

  get(name: string): StrategyTypeView {
    const found = this.list().find(strategy => strategy.name === name)
    if (!found) throw new NotFoundError(`No strategy type named "${name}"`)
    return found
  }

  async create(input: CreateStrategyTypeInput, caller: Caller): Promise<StrategyTypeView> {
    assertValidName(input.name, 'strategy type')
    const parameters = parametersOf(input.parameters)
    return this.store.transact(actorOf(caller), tx => {
      if (builtInStrategy(input.name) || tx.get('strategyTypes', input.name))
        throw new NameExistsError(`A strategy type named "${input.name}" already exists`)
      const record: StrategyTypeRecord = {
        name: input.name,
        title: input.title ?? null,
        description: input.description ?? '',
        parameters,
        deprecated: false,
        createdAt: tx.now,
      }
      tx.put('strategyTypes', record.name, record)
      tx.appendEvent(events.strategyTypeCreated(viewOf(record)))
      return viewOf(record)
    })
  }

  async update(name: string, input: UpdateStrategyTypeInput, caller: Caller): Promise<StrategyTypeView> {
    if (input.name !== undefined && input.name !== name)
      throw ValidationError.at(
        '/name',
        `The body names "${input.name}" but the path "${name}"; a strategy type cannot be renamed`,
      )
    const parameters = parametersOf(input.parameters)
    return this.store.transact(actorOf(caller), tx => {
      const before = editable(tx, name, 'changed')
      const record: StrategyTypeRecord = {
        ...before,
        title: input.title === undefined ? before.title : input.title,
        description: input.description ?? before.description,
        parameters,
      }
      tx.put('strategyTypes', name, record)
      tx.appendEvent(events.strategyTypeUpdated(viewOf(record), viewOf(before)))
      return viewOf(record)
    })
  }

  /**
   * Deletes a user-defined type. Unleash deletes one whatever uses it, leaving strategies of a type
   * the SDKs no longer know; here a type still used by a strategy of any flag (archived ones too) is
   * refused with the flags named, so the caller removes those strategies or deprecates the type.
   */
  async delete(name: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const before = editable(tx, name, 'deleted')
      const users = tx
        .values('flags')
        .filter(flag =>
          Object.values(flag.environments).some(environment =>
            environment.strategies.some(strategy => strategy.name === name),
          ),
        )
        .map(flag => flag.name)
        .sort()
      if (users.length > 0) {
        const named =
          users
            .slice(0, 5)
            .map(flag => `"${flag}"`)
            .join(', ') + (users.length > 5 ? ` and ${users.length - 5} more` : '')
        throw new ValidationError(
          `Strategy type "${name}" is used by strategies of ${users.length === 1 ? 'the flag' : `${users.length} flags:`} ${named}; remove those strategies first, or deprecate the type instead`,
        )
      }
      tx.delete('strategyTypes', name)
      tx.appendEvent(events.strategyTypeDeleted(viewOf(before)))
    })
  }

  /** Deprecates or reactivates a user-defined type; doing it again answers the same and records nothing. */
  async setDeprecated(name: string, deprecated: boolean, caller: Caller): Promise<StrategyTypeView> {
    return this.store.transact(actorOf(caller), tx => {
      const before = editable(tx, name, deprecated ? 'deprecated' : 'reactivated')
      if (before.deprecated === deprecated) return viewOf(before)
      const record = { ...before, deprecated }
      tx.put('strategyTypes', name, record)
      tx.appendEvent(deprecated ? events.strategyTypeDeprecated(name) : events.strategyTypeReactivated(name))
      return viewOf(record)
    })
  }
}

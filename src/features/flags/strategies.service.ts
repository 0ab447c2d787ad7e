/** Activation strategies and variants of a flag in one environment. */
import { events } from '../../domain/events'
import { NotFoundError, ValidationError } from '../../errors'
import type { FlagRecord, StrategyRecord, VariantRecord } from './flags.records'
import type { StateReader, Store, Tx } from '../../storage/store'
import { checkLimit } from '../limits'
import { actorOf, type Caller } from '../tokens/permissions'
import { flagInProject, liveFlagInProject, requireEnvironment } from './flag-rules'
import { strategyView, variantView } from './flag-view'
import {
  buildConstraint,
  checkParameters,
  checkPayload,
  distributeWeights,
  isSingleValueOperator,
} from './strategy-rules'
import { checkLegalValues } from '../context/context.service'
import { buildVariants, storeVariants } from './variant-rules'
import { checkStrategyTypeUsable } from '../strategy-types/strategy-types.service'
import type { Static } from '@sinclair/typebox'
import type { StrategyInput as StrategyInputSchema, VariantInput as VariantInputSchema } from './strategy.model'

export type StrategyInput = Static<typeof StrategyInputSchema>
export type VariantInput = Static<typeof VariantInputSchema>

export type StrategyView = ReturnType<typeof strategyView>
export type VariantView = ReturnType<typeof variantView>

/**
 * Checks the segment ids a strategy of a flag in `project` refers to, inside the write (400 naming
 * `/segments/<i>`). The segments feature provides it (services.ts), since flags do not import it.
 */
export type SegmentCheck = (tx: StateReader, ids: readonly number[], project: string) => void

/** `previous`: the type the strategy had before an update (a deprecated type may be kept, not newly given). */
function buildStrategy(
  tx: Tx,
  input: StrategyInput,
  flagName: string,
  id: string,
  sortOrder: number,
  previous?: string,
): StrategyRecord {
  checkStrategyTypeUsable(tx, input.name, previous, '/name')
  // The schemas hold requests to these too; checked here as well so that no way in skips them.
  checkLimit('constraintsPerStrategy', input.constraints?.length ?? 0, '/constraints')
  input.constraints?.forEach((constraint, index) =>
    checkLimit('valuesPerConstraint', constraint.values?.length ?? 0, `/constraints/${index}/values`),
  )
  checkLimit('variantsPerStrategy', input.variants?.length ?? 0, '/variants')
  const constraints = (input.constraints ?? []).map((constraint, index) => {
    const built = buildConstraint(constraint, `/constraints/${index}`)
    // Unleash checks strategy constraints (not segments') against the field's legal values: the one value of a single-value operator, else each of values.
    if (isSingleValueOperator(built.operator))
      checkLegalValues(tx, built.contextName, [built.value ?? ''], () => `/constraints/${index}/value`)
    else
      checkLegalValues(tx, built.contextName, built.values, valueIndex => `/constraints/${index}/values/${valueIndex}`)
    return built
  })
  const variants = distributeWeights(
    (input.variants ?? []).map((variant, index) => {
      checkPayload(variant.payload, `/variants/${index}/payload`)
      if (variant.stickiness.trim() === '')
        throw ValidationError.at(
          `/variants/${index}/stickiness`,
          'A strategy variant needs a stickiness, e.g. "default" or "userId"',
        )
      return { ...variant }
    }),
    '/variants',
  )
  const parameters = Object.fromEntries(
    Object.entries(input.parameters ?? {}).map(([key, value]) => [key, String(value)]),
  )
  return {
    id,
    name: input.name,
    title: input.title ?? null,
    disabled: input.disabled ?? false,
    sortOrder,
    segments: [...(input.segments ?? [])],
    constraints,
    variants,
    parameters: checkParameters(input.name, parameters, flagName, '/parameters'),
  }
}

function findStrategy(flag: FlagRecord, environment: string, strategyId: string): StrategyRecord {
  const strategy = requireEnvironment(flag, environment).strategies.find(s => s.id === strategyId)
  if (!strategy)
    throw new NotFoundError(`No strategy "${strategyId}" on flag "${flag.name}" in environment "${environment}"`)
  return strategy
}

function withStrategies(tx: Tx, flag: FlagRecord, environment: string, strategies: StrategyRecord[]): FlagRecord {
  const entry = requireEnvironment(flag, environment)
  const updated = { ...flag, environments: { ...flag.environments, [environment]: { ...entry, strategies } } }
  tx.put('flags', flag.name, updated)
  return updated
}

export class StrategiesService {
  constructor(
    private readonly store: Pick<Store, 'reader' | 'transact'>,
    private readonly checkSegments: SegmentCheck,
  ) {}

  private read(projectId: string, name: string) {
    return flagInProject(this.store.reader, projectId, name)
  }

  list(projectId: string, name: string, environment: string): StrategyView[] {
    const flag = this.read(projectId, name)
    return [...requireEnvironment(flag, environment).strategies]
      .sort((a, b) => a.sortOrder - b.sortOrder)
      .map(s => strategyView(s, name))
  }

  get(projectId: string, name: string, environment: string, strategyId: string): StrategyView {
    return strategyView(findStrategy(this.read(projectId, name), environment, strategyId), name)
  }

  async add(
    projectId: string,
    name: string,
    environment: string,
    input: StrategyInput,
    caller: Caller,
  ): Promise<StrategyView> {
    return this.store.transact(actorOf(caller), tx => {
      const { strategy } = this.addIn(tx, liveFlagInProject(tx, projectId, name), environment, input)
      return strategyView(strategy, name)
    })
  }

  /** The write of `add` inside `tx`, which the import reuses. Returns the flag as changed. */
  addIn(
    tx: Tx,
    flag: FlagRecord,
    environment: string,
    input: StrategyInput,
  ): { flag: FlagRecord; strategy: StrategyRecord } {
    const existing = requireEnvironment(flag, environment).strategies
    checkLimit('strategiesPerFlagEnvironment', existing.length + 1, '/name')
    const sortOrder = input.sortOrder ?? Math.max(-1, ...existing.map(s => s.sortOrder)) + 1
    const strategy = buildStrategy(tx, input, flag.name, crypto.randomUUID(), sortOrder)
    this.checkSegments(tx, strategy.segments, flag.project)
    const updated = withStrategies(tx, flag, environment, [...existing, strategy])
    tx.appendEvent(events.strategyAdded(updated, environment, strategyView(strategy, flag.name)))
    return { flag: updated, strategy }
  }

  async update(
    projectId: string,
    name: string,
    environment: string,
    strategyId: string,
    input: StrategyInput,
    caller: Caller,
  ): Promise<StrategyView> {
    return this.store.transact(actorOf(caller), tx => {
      const strategy = this.updateIn(tx, liveFlagInProject(tx, projectId, name), environment, strategyId, input)
      return strategyView(strategy, name)
    })
  }

  /** The write of `update` inside `tx`, which change requests reuse. */
  updateIn(tx: Tx, flag: FlagRecord, environment: string, strategyId: string, input: StrategyInput): StrategyRecord {
    const name = flag.name
    const before = findStrategy(flag, environment, strategyId)
    const strategy = buildStrategy(tx, input, name, strategyId, input.sortOrder ?? before.sortOrder, before.name)
    this.checkSegments(tx, strategy.segments, flag.project)
    const strategies = requireEnvironment(flag, environment).strategies.map(s => (s.id === strategyId ? strategy : s))
    const updated = withStrategies(tx, flag, environment, strategies)
    tx.appendEvent(
      events.strategyUpdated(updated, environment, strategyView(strategy, name), strategyView(before, name)),
    )
    return strategy
  }

  /**
   * Moves strategies within the environment's list (Unleash's setStrategySortOrder): every given id
   * gets its sortOrder, all in one commit with one strategy-updated event per strategy that moved,
   * so a reorder is never half-applied. An unknown id is a 404 and nothing changes.
   */
  async setSortOrder(
    projectId: string,
    name: string,
    environment: string,
    orders: { id: string; sortOrder: number }[],
    caller: Caller,
  ): Promise<void> {
    await this.store.transact(actorOf(caller), tx =>
      this.setSortOrderIn(tx, liveFlagInProject(tx, projectId, name), environment, orders),
    )
  }

  /** The write of `setSortOrder` inside `tx`, which change requests reuse. */
  setSortOrderIn(tx: Tx, flag: FlagRecord, environment: string, orders: { id: string; sortOrder: number }[]): void {
    const name = flag.name
    {
      const wanted = new Map<string, number>()
      for (const [index, order] of orders.entries()) {
        findStrategy(flag, environment, order.id)
        if (wanted.has(order.id)) throw ValidationError.at(`/${index}/id`, `strategy "${order.id}" is listed twice`)
        wanted.set(order.id, order.sortOrder)
      }
      const before = requireEnvironment(flag, environment).strategies
      const strategies = before.map(s =>
        wanted.has(s.id) && wanted.get(s.id) !== s.sortOrder ? { ...s, sortOrder: wanted.get(s.id)! } : s,
      )
      if (strategies.every((s, i) => s === before[i])) return
      const updated = withStrategies(tx, flag, environment, strategies)
      strategies.forEach((s, i) => {
        if (s !== before[i])
          tx.appendEvent(
            events.strategyUpdated(updated, environment, strategyView(s, name), strategyView(before[i], name)),
          )
      })
    }
  }

  async remove(
    projectId: string,
    name: string,
    environment: string,
    strategyId: string,
    caller: Caller,
  ): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      this.removeIn(tx, liveFlagInProject(tx, projectId, name), environment, strategyId)
    })
  }

  /** The write of `remove` inside `tx`, which the import reuses. Returns the flag as changed. */
  removeIn(tx: Tx, flag: FlagRecord, environment: string, strategyId: string): FlagRecord {
    const before = findStrategy(flag, environment, strategyId)
    const strategies = requireEnvironment(flag, environment).strategies.filter(s => s.id !== strategyId)
    const updated = withStrategies(tx, flag, environment, strategies)
    tx.appendEvent(events.strategyRemoved(updated, environment, strategyView(before, flag.name)))
    return updated
  }

  variants(projectId: string, name: string, environment: string): VariantView[] {
    return requireEnvironment(this.read(projectId, name), environment).variants.map(variantView)
  }

  async setVariants(
    projectId: string,
    name: string,
    environment: string,
    input: VariantInput[],
    caller: Caller,
  ): Promise<VariantView[]> {
    return this.store.transact(actorOf(caller), tx => {
      const flag = liveFlagInProject(tx, projectId, name)
      const variants = buildVariants(input, '')
      this.setVariantsIn(tx, flag, environment, variants)
      return variants.map(variantView)
    })
  }

  /** The write of `setVariants` inside `tx` with variants made by `buildVariants`; the import reuses it. */
  setVariantsIn(tx: Tx, flag: FlagRecord, environment: string, variants: VariantRecord[]): FlagRecord {
    return storeVariants(tx, flag, environment, variants)
  }
}

/**
 * The playground: every live flag of the projects asked for (those the caller may read), evaluated
 * in an environment for a context, with why (playground.evaluate.ts). A read: it records nothing.
 * One answer holds at most MAX_EVALUATIONS flag evaluations (flags × environments × contexts).
 */
import { NotFoundError, ValidationError } from '../../errors'
import type { Store } from '../../storage/store'
import type { FlagRecord } from '../flags/flags.records'
import type { EvalContext } from '../frontend/constraints'
import { callerSeesProject, type Caller } from '../tokens/permissions'
import { PlaygroundEvaluator } from './playground.evaluate'
import {
  MAX_EVALUATIONS,
  type AdvancedPlaygroundAnswer,
  type AdvancedPlaygroundInput,
  type ContextInput,
  type PlaygroundAnswer,
  type PlaygroundInput,
} from './playground.model'

/** The context fields the SDK keeps at the top level; any other is a custom field. */
const ROOT_FIELDS = new Set(['userId', 'sessionId', 'remoteAddress', 'appName', 'environment', 'currentTime'])

/** A context's text fields: the top-level ones (SDK fields and custom ones) and `properties`. */
interface ContextFields {
  root: Record<string, string>
  properties: Record<string, string>
}

/** The context's text fields, and the top-level fields left out because they are not text. */
function readContext(input: ContextInput): ContextFields & { invalid: string[] } {
  const root: Record<string, string> = Object.create(null)
  const invalid: string[] = []
  for (const [name, value] of Object.entries(input)) {
    if (name === 'properties') continue
    if (typeof value === 'string') root[name] = value
    else invalid.push(name)
  }
  const properties: Record<string, string> = Object.assign(Object.create(null), input.properties ?? {})
  return { root, properties, invalid }
}

function checkTime(fields: ContextFields, path: string): void {
  const time = fields.root.currentTime
  if (time !== undefined && Number.isNaN(Date.parse(time)))
    throw ValidationError.at(path, `currentTime must be a date-time such as 2026-01-01T12:00:00Z, not "${time}"`)
}

/**
 * The context as the engine reads it. A custom field at the top level is read before the one of the
 * same name in `properties`, as the SDK's resolveContextValue does; it goes into the properties
 * (never onto the context object, whose other members are the engine's own).
 */
function evalContext({ root, properties }: ContextFields): EvalContext {
  const context: EvalContext = { properties: Object.assign(Object.create(null), properties) }
  for (const [name, value] of Object.entries(root)) {
    if (ROOT_FIELDS.has(name)) context[name as 'userId'] = value
    else context.properties[name] = value
  }
  return context
}

/** The context as answered beside each evaluation: its top-level fields, then `properties` when it has any. */
function contextView({ root, properties }: ContextFields): ContextInput {
  return { ...root, ...(Object.keys(properties).length > 0 ? { properties: { ...properties } } : {}) }
}

/**
 * Unleash's advanced playground reads a value with commas as several: one context per combination.
 * Counted first, so that a request naming millions of combinations is refused without making them.
 */
function combinations(fields: ContextFields): { count: number; make: () => ContextFields[] } {
  const split = (values: Record<string, string>) =>
    Object.entries(values).map(([name, value]) => [name, value.split(',')] as const)
  const root = split(fields.root)
  const properties = split(fields.properties)
  const count = [...root, ...properties].reduce((product, [, values]) => product * values.length, 1)
  const make = () => {
    let made: ContextFields[] = [{ root: Object.create(null), properties: Object.create(null) }]
    const expand = (part: 'root' | 'properties', entries: (readonly [string, string[]])[]) => {
      for (const [name, values] of entries)
        made = made.flatMap(context =>
          values.map(value => ({
            ...context,
            [part]: Object.assign(Object.create(null), context[part], { [name]: value }),
          })),
        )
    }
    expand('root', root)
    expand('properties', properties)
    return made
  }
  return { count, make }
}

function checkSize(flags: number, environments: number, contexts: number): void {
  const total = flags * environments * contexts
  // Contexts are bounded alone too: with no flags, a million combinations would still be made.
  if (total <= MAX_EVALUATIONS && contexts <= MAX_EVALUATIONS) return
  const parts = [`${flags.toLocaleString('en-US')} flags`]
  if (environments > 1) parts.push(`${environments} environments`)
  if (contexts > 1) parts.push(`${contexts.toLocaleString('en-US')} contexts`)
  throw new ValidationError(
    `The playground evaluates at most ${MAX_EVALUATIONS.toLocaleString('en-US')} flags in one answer; this asks for ` +
      `${total.toLocaleString('en-US')} (${parts.join(' × ')}): choose fewer projects` +
      (environments > 1 ? ', environments' : '') +
      (contexts > 1 ? ' or context values' : ''),
  )
}

export class PlaygroundService {
  constructor(private readonly store: Pick<Store, 'state'>) {}

  /** The live flags of `projects` the caller may read, by name. */
  private flagsOf(projects: PlaygroundInput['projects'], caller: Caller): FlagRecord[] {
    const wanted = projects === undefined || projects === '*' ? null : new Set(projects)
    return Object.values(this.store.state.flags)
      .filter(
        flag =>
          !flag.archived && (wanted === null || wanted.has(flag.project)) && callerSeesProject(caller, flag.project),
      )
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  private checkEnvironment(environment: string): void {
    if (!Object.hasOwn(this.store.state.environments, environment))
      throw new NotFoundError(`Environment "${environment}" does not exist`)
  }

  private evaluator(flags: readonly FlagRecord[], environment: string): PlaygroundEvaluator {
    return new PlaygroundEvaluator(
      new Map(flags.map(flag => [flag.name, flag])),
      this.store.state.segments,
      environment,
    )
  }

  /** Every flag of the projects in one environment, for one context. */
  evaluate(input: PlaygroundInput, caller: Caller): PlaygroundAnswer {
    const fields = readContext(input.context)
    if (fields.invalid.length > 0)
      throw ValidationError.at(`/context/${fields.invalid[0]}`, `Context field ${fields.invalid[0]} must be text`)
    checkTime(fields, '/context/currentTime')
    this.checkEnvironment(input.environment)
    const flags = this.flagsOf(input.projects, caller)
    checkSize(flags.length, 1, 1)
    const names = flags.map(flag => flag.name)
    return { input, features: this.evaluator(flags, input.environment).evaluate(names, evalContext(fields)) }
  }

  /**
   * Every flag of the projects in each environment, for each combination of the context's values
   * (a value with commas stands for several). Top-level fields whose value is not text are left out
   * and named in the warnings, as Unleash does.
   */
  evaluateAdvanced(input: AdvancedPlaygroundInput, caller: Caller): AdvancedPlaygroundAnswer {
    const { invalid, ...fields } = readContext(input.context)
    const environments = [...new Set(input.environments)]
    for (const environment of environments) this.checkEnvironment(environment)
    const flags = this.flagsOf(input.projects, caller)
    const combined = combinations(fields)
    checkSize(flags.length, environments.length, combined.count)
    const contexts = combined.make()
    contexts.forEach(context => checkTime(context, '/context/currentTime'))
    const names = flags.map(flag => flag.name)
    const features = flags.map(flag => ({
      name: flag.name,
      projectId: flag.project,
      // Null-prototype: environment names are keys.
      environments: Object.create(null) as AdvancedPlaygroundAnswer['features'][number]['environments'],
    }))
    for (const environment of environments) {
      for (const feature of features) feature.environments[environment] = []
      const evaluator = this.evaluator(flags, environment)
      for (const context of contexts) {
        const view = contextView(context)
        evaluator.evaluate(names, evalContext(context)).forEach((evaluation, index) => {
          features[index].environments[environment].push({ ...evaluation, environment, context: view })
        })
      }
    }
    return { input, features, warnings: { invalidContextProperties: invalid } }
  }
}

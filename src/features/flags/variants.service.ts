/**
 * The variant routes beyond GET and PUT of one environment (those are in strategies.service.ts):
 * JSON Patch of one environment's list, GET, PUT and PATCH over all of a flag's environments, and
 * one list pushed to several. Each is one write; every list is built by variant-rules.ts and stored
 * with one feature-environment-variants-updated event per environment, as a PUT of each would.
 */
import { ValidationError } from '../../errors'
import type { StateReader, Store } from '../../storage/store'
import { compareEnvironments } from '../environments/environments.service'
import { actorOf, type Caller } from '../tokens/permissions'
import { applyVariantsPatch, type PatchOperation } from './flag-patch'
import { flagInProject, liveFlagInProject, requireEnvironment } from './flag-rules'
import { variantView } from './flag-view'
import type { FlagRecord } from './flags.records'
import { buildVariants, checkPatchedVariants, storeVariants, type VariantInput } from './variant-rules'

export type VariantView = ReturnType<typeof variantView>

/** The flag's environments by sortOrder then name, as lists show them. */
function environmentsOf(reader: StateReader, flag: FlagRecord): { name: string; type: string }[] {
  return Object.keys(flag.environments)
    .map(name => {
      const known = reader.get('environments', name)
      return { name, type: known?.type ?? 'unknown', sortOrder: known?.sortOrder ?? Number.MAX_SAFE_INTEGER }
    })
    .sort(compareEnvironments)
}

/**
 * The environment whose variants stand for the flag's, where Unleash's deprecated flag-level
 * variant routes read them: the first production-type environment, else the first one.
 */
function sourceEnvironment(reader: StateReader, flag: FlagRecord): string | undefined {
  const environments = environmentsOf(reader, flag)
  return (environments.find(environment => environment.type === 'production') ?? environments[0])?.name
}

export class VariantsService {
  constructor(private readonly store: Pick<Store, 'reader' | 'transact'>) {}

  /** patchEnvironmentsFeatureVariants: errors in the order of the flag PATCH (404, 400, 409). */
  async patchEnvironment(
    projectId: string,
    name: string,
    environment: string,
    operations: PatchOperation[],
    caller: Caller,
  ): Promise<VariantView[]> {
    return this.store.transact(actorOf(caller), tx => {
      const flag = liveFlagInProject(tx, projectId, name)
      const current = requireEnvironment(flag, environment).variants.map(variantView)
      const variants = buildVariants(checkPatchedVariants(applyVariantsPatch(current, operations)), '')
      storeVariants(tx, flag, environment, variants)
      return variants.map(variantView)
    })
  }

  /** getFeatureVariants: the variants of the source environment; [] for a flag with no environment. */
  list(projectId: string, name: string): VariantView[] {
    const flag = flagInProject(this.store.reader, projectId, name)
    const source = sourceEnvironment(this.store.reader, flag)
    return source === undefined ? [] : flag.environments[source].variants.map(variantView)
  }

  /** overwriteFeatureVariants: the same list in every environment of the flag. */
  async overwriteAll(projectId: string, name: string, input: VariantInput[], caller: Caller): Promise<VariantView[]> {
    return this.store.transact(actorOf(caller), tx => {
      let flag = liveFlagInProject(tx, projectId, name)
      const variants = buildVariants(input, '')
      for (const environment of environmentsOf(tx, flag)) flag = storeVariants(tx, flag, environment.name, variants)
      return variants.map(variantView)
    })
  }

  /**
   * patchFeatureVariants: the patch is applied to the source environment's list, and the result
   * stored in every environment, in one write (Unleash warns that its version is not atomic).
   */
  async patchAll(
    projectId: string,
    name: string,
    operations: PatchOperation[],
    caller: Caller,
  ): Promise<VariantView[]> {
    return this.store.transact(actorOf(caller), tx => {
      let flag = liveFlagInProject(tx, projectId, name)
      const source = sourceEnvironment(tx, flag)
      const current = source === undefined ? [] : flag.environments[source].variants.map(variantView)
      const variants = buildVariants(checkPatchedVariants(applyVariantsPatch(current, operations)), '')
      for (const environment of environmentsOf(tx, flag)) flag = storeVariants(tx, flag, environment.name, variants)
      return variants.map(variantView)
    })
  }

  /** overwriteFeatureVariantsOnEnvironments: one list for the named environments, each of which the flag must have (404). */
  async pushToEnvironments(
    projectId: string,
    name: string,
    input: { variants?: VariantInput[]; environments?: string[] },
    caller: Caller,
  ): Promise<VariantView[]> {
    const environments = [...new Set(input.environments ?? [])]
    return this.store.transact(actorOf(caller), tx => {
      let flag = liveFlagInProject(tx, projectId, name)
      if (environments.length === 0)
        throw ValidationError.at('/environments', 'Name at least one environment in environments')
      for (const environment of environments) requireEnvironment(flag, environment)
      const variants = buildVariants(input.variants ?? [], '/variants')
      for (const environment of environments) flag = storeVariants(tx, flag, environment, variants)
      return variants.map(variantView)
    })
  }
}

/**
 * The checks of an import, as Unleash's validation reports them (importTogglesValidateSchema):
 * errors that make it fail, warnings about what it will do, and permissions the token lacks. Both
 * routes run them inside the import's transaction, so what validate reports is what import does.
 * Messages and their order are Unleash 8's; the checks marked "ours" are ones Unleash leaves to a
 * failure halfway through.
 */
import type { Static } from '@sinclair/typebox'
import { NotFoundError } from '../../errors'
import type { StateReader } from '../../storage/store'
import { builtInStrategy } from '../strategy-types/built-in-strategies'
import { LIMITS } from '../limits'
import { nameProblem } from '../names'
import { callerSeesProject, roleHasPermission, type Caller, type Permission } from '../tokens/permissions'
import type { ImportToggles, ImportTogglesValidate } from './export-import.model'
import {
  clashingContextFields,
  contextFieldsToCreate,
  tagTypesToCreate,
  type ContextFieldItem,
  type Indexed,
  type TagTypeItem,
} from './tag-types-and-context-fields'

export type ImportInput = Static<typeof ImportToggles>
export type ImportValidation = Static<typeof ImportTogglesValidate>
export type ValidationItem = ImportValidation['errors'][number]

export interface ImportReview extends ImportValidation {
  /** Flags of the import archived here: left out, as in Unleash. */
  archived: Set<string>
  /** Flags of the import that exist in the project and will be updated. */
  existing: Set<string>
  /** Tag types the import creates before it adds the tags. */
  newTagTypes: Indexed<TagTypeItem>[]
  /** Context fields the import creates before it adds the strategies. */
  newContextFields: Indexed<ContextFieldItem>[]
}

export interface ReviewRules {
  /** Why `name` does not fit the project's naming pattern, or null. */
  namingProblem(name: string, projectId: string): string | null
  /** How many flags (archived ones included) exist, for the flags limit. */
  flagCount: number
}

const item = (message: string, affectedItems: Iterable<string>): ValidationItem => ({
  message,
  affectedItems: [...affectedItems],
})

/** The flag an environment entry is about: Unleash writes its name in `name`, ours in `featureName` too. */
export function flagOfEntry(entry: { name?: string; featureName?: string }): string | undefined {
  return entry.featureName ?? entry.name
}

function duplicates(names: readonly string[]): string[] {
  const seen = new Set<string>()
  const twice = new Set<string>()
  for (const name of names) (seen.has(name) ? twice : seen).add(name)
  return [...twice]
}

/** 404 for an unknown project or environment, as Unleash's routes answer; these are not findings. */
export function requireTarget(reader: StateReader, input: ImportInput, caller: Caller): void {
  const project = reader.get('projects', input.project)
  if (!project || !callerSeesProject(caller, input.project))
    throw new NotFoundError(`Project "${input.project}" does not exist`)
  if (!reader.get('environments', input.environment))
    throw new NotFoundError(`Environment "${input.environment}" does not exist`)
}

export function reviewImport(
  reader: StateReader,
  input: ImportInput,
  caller: Caller,
  rules: ReviewRules,
): ImportReview {
  const { project, environment, data } = input
  const names = data.features.map(flag => flag.name)
  const listed = new Set(names)
  const errors: ValidationItem[] = []
  const warnings: ValidationItem[] = []

  const archived = new Set(names.filter(name => reader.get('flags', name)?.archived))
  const existing = new Set(names.filter(name => reader.get('flags', name)?.project === project && !archived.has(name)))
  const elsewhere = [...listed].filter(name => {
    const flag = reader.get('flags', name)
    return flag && !flag.archived && flag.project !== project
  })

  const strategyNames = [...new Set(data.featureStrategies.map(strategy => strategy.name))]
  const unknownStrategies = strategyNames.filter(name => !builtInStrategy(name) && !reader.get('strategyTypes', name))
  if (unknownStrategies.length > 0)
    errors.push(item('We detected the following custom strategy that needs to be created first:', unknownStrategies))
  const clashing = clashingContextFields(reader, data.contextFields ?? [])
  if (clashing.length > 0)
    errors.push(
      item(
        'We detected the following context fields that do not have matching legal values with the imported ones:',
        clashing,
      ),
    )
  if (elsewhere.length > 0) {
    // The name is taken whoever may see its flag (as POST /api/admin/features/validate says, 409); the project is named only to a caller who may see it.
    const where = elsewhere.map(name => {
      const other = reader.get('flags', name)!.project
      return callerSeesProject(caller, other) ? `${name} (in project ${other})` : name
    })
    errors.push(
      item(
        `You cannot import a features that already exist in other projects. You already have the following features defined outside of project ${project}:`,
        where,
      ),
    )
  }
  const twice = duplicates(names)
  if (twice.length > 0)
    errors.push(item('We detected the following features are duplicate in your import data:', twice))
  // Ours: a name no route would take.
  const badNames = [...listed].filter(name => nameProblem(name, 'flag') !== null)
  if (badNames.length > 0)
    errors.push(
      item(
        'The following flag names are not valid: 1 to 100 URL-friendly characters (letters, digits and - _ . ! ~ * \' ( ) only), not "." or "..":',
        badNames,
      ),
    )
  const unmatched = [...listed].filter(name => !badNames.includes(name) && rules.namingProblem(name, project) !== null)
  if (unmatched.length > 0)
    errors.push(
      item(
        rules
          .namingProblem(unmatched[0], project)!
          .replace(/^"[^"]*" does not match/, 'Features imported into this project must match') +
          '. The following features do not match the pattern:',
        unmatched.sort(),
      ),
    )
  const created = [...listed].filter(name => !reader.get('flags', name)).length
  if (rules.flagCount + created > LIMITS.flags.max) {
    errors.push(
      item(
        `We detected you want to create ${created} new features to a project that already has ${rules.flagCount} existing features, exceeding the maximum limit of ${LIMITS.flags.max}.`,
        [],
      ),
    )
  }
  const unknownSegments = (data.segments ?? [])
    .filter(wanted => !segmentNamed(reader, wanted.name, project))
    .map(segment => segment.name)
  if (unknownSegments.length > 0)
    errors.push(item('We detected the following segments that need to be created first:', unknownSegments))
  const parents = (data.dependencies ?? []).flatMap(entry => entry.dependencies.map(dependency => dependency.feature))
  // A parent must be of the same project: one of another project is missing here, whether or not the caller may see it.
  const missingParents = [...new Set(parents)].filter(
    parent => !listed.has(parent) && reader.get('flags', parent)?.project !== project,
  )
  if (missingParents.length > 0)
    errors.push(item('We detected the following dependencies that need to be created first:', missingParents))
  // Ours: entries about flags the import does not hold, and strategies naming segments it does not list.
  const strays = new Set(
    [
      ...data.featureStrategies.map(strategy => strategy.featureName),
      ...(data.featureEnvironments ?? []).map(entry => flagOfEntry(entry) ?? '(no name)'),
      ...(data.featureTags ?? []).map(tag => tag.featureName),
      ...(data.dependencies ?? []).map(entry => entry.feature),
    ].filter(name => !listed.has(name)),
  )
  if (strays.size > 0)
    errors.push(
      item(
        'The following flags have strategies, environments, tags or dependencies in the import but are not in its features:',
        strays,
      ),
    )
  const segmentIds = new Set((data.segments ?? []).map(segment => segment.id))
  const unlistedIds = new Set(
    data.featureStrategies.flatMap(strategy => (strategy.segments ?? []).filter(id => !segmentIds.has(id)).map(String)),
  )
  if (unlistedIds.size > 0)
    errors.push(
      item('The strategies use the following segment ids that the import does not list in segments:', unlistedIds),
    )
  if (!reader.get('projects', project)!.environments.includes(environment)) {
    errors.push(
      item(
        `Environment ${environment} is not enabled in project ${project}; connect it first (POST /api/admin/projects/${project}/environments):`,
        [environment],
      ),
    )
  }

  const custom = strategyNames.filter(name => !builtInStrategy(name) && reader.get('strategyTypes', name))
  if (custom.length > 0) {
    warnings.push(
      item(
        'The following strategy types will be used in import. Please make sure the strategy type parameters are configured as in source environment:',
        custom,
      ),
    )
  }
  if (archived.size > 0) {
    warnings.push(
      item(
        'The following features will not be imported as they are currently archived. To import them, please unarchive them first:',
        archived,
      ),
    )
  }
  if (existing.size > 0)
    warnings.push(item('The following features already exist in this project and will be overwritten:', existing))

  const newTagTypes = tagTypesToCreate(reader, data, new Set(names.filter(name => !archived.has(name))))
  const newContextFields = contextFieldsToCreate(reader, data)
  // The project is one the caller sees (requireTarget answered 404 otherwise): the role can lack a
  // permission, and a token limited to some projects lacks the service-wide ones, as on their routes.
  const needed = neededPermissions(reader, input, {
    creates: created > 0,
    tagTypes: newTagTypes.length > 0,
    contextFields: newContextFields.length > 0,
  })
  const missing = needed.filter(
    permission =>
      !roleHasPermission(caller.role, permission) || (SERVICE_WIDE.has(permission) && !caller.projects.includes('*')),
  )
  const permissions =
    missing.length > 0 ? [item('We detected you are missing the following permissions:', missing)] : []
  return { errors, warnings, permissions, archived, existing, newTagTypes, newContextFields }
}

/** A segment usable by the project's flags under that name: global or of the project. */
export function segmentNamed(reader: StateReader, name: string, project: string) {
  return reader
    .values('segments')
    .find(segment => segment.name === name && (segment.project === null || segment.project === project))
}

/** Permissions whose routes act on the whole service (tag types, context fields): a token for all projects only. */
const SERVICE_WIDE: ReadonlySet<Permission> = new Set(['CREATE_TAG_TYPE', 'CREATE_CONTEXT_FIELD'])

/** The permissions this import needs, as Unleash 8 works them out (ours are spelled as in our roles). */
function neededPermissions(
  reader: StateReader,
  input: ImportInput,
  makes: { creates: boolean; tagTypes: boolean; contextFields: boolean },
): Permission[] {
  const { environment, data } = input
  const needed: Permission[] = ['UPDATE_FEATURE']
  if (makes.tagTypes) needed.push('CREATE_TAG_TYPE')
  if (makes.contextFields) needed.push('CREATE_CONTEXT_FIELD')
  const hasStrategies = data.features.some(flag => {
    const environments = reader.get('flags', flag.name)?.environments
    return (
      environments !== undefined &&
      Object.hasOwn(environments, environment) &&
      environments[environment].strategies.length > 0
    )
  })
  if (hasStrategies) needed.push('DELETE_FEATURE_STRATEGY')
  if (data.featureStrategies.length > 0) needed.push('CREATE_FEATURE_STRATEGY')
  if ((data.featureEnvironments ?? []).some(entry => (entry.variants?.length ?? 0) > 0))
    needed.push('UPDATE_FEATURE_VARIANTS')
  if (makes.creates) needed.push('CREATE_FEATURE')
  return needed
}

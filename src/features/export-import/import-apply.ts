/**
 * The changes of an import, made inside one transaction with the same transaction functions the
 * single routes use, so that each records the events its route records and checks what its route
 * checks; any error undoes the whole import. The order is Unleash's: flags, variants, tag types,
 * tags, context fields, then in the environment: strategies replaced, on/off, dependencies.
 */
import { events } from '../../domain/events'
import { ValidationError } from '../../errors'
import type { TagRecord } from '../../storage/records'
import type { Tx } from '../../storage/store'
import type { FlagRecord } from '../flags/flags.records'
import type { FlagsService } from '../flags/flags.service'
import { setEnvironmentEnabled } from '../flags/flag-rules'
import { checkTag, type RelationsService } from '../flags/relations.service'
import { createContextFieldIn } from '../context/context.service'
import { createTagTypeIn } from '../tag-types/tag-types.service'
import type { StrategiesService } from '../flags/strategies.service'
import { buildVariants } from '../flags/variant-rules'
import type { Caller } from '../tokens/permissions'
import { flagOfEntry, segmentNamed, type ImportInput, type ImportReview } from './import-review'

/** The transaction functions of the flag services that an import is made of. */
export interface ImportWriters {
  flags: Pick<FlagsService, 'createIn' | 'updateIn'>
  strategies: Pick<StrategiesService, 'addIn' | 'removeIn' | 'setVariantsIn'>
  relations: Pick<RelationsService, 'addTagIn' | 'removeTagIn' | 'addDependencyIn'>
}

/**
 * Runs `write` for the item at `path` of the body: a 400 it throws names the item and gets its
 * paths under `path`, so that the client learns which entry of the import was refused.
 */
function within<T>(path: string, label: string, write: () => T): T {
  try {
    return write()
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error
    const details = (error.details ?? [{ message: error.message }]).map(detail => ({
      message: `${label}: ${detail.message}`,
      path: path + (detail.path ?? ''),
    }))
    throw new ValidationError(`${label}: ${error.message}`, details)
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** Makes the import in `tx` (the review found no errors); returns the names of the flags imported. */
export function applyImport(
  tx: Tx,
  input: ImportInput,
  review: ImportReview,
  writers: ImportWriters,
  caller: Caller,
): string[] {
  const { project, environment, data } = input
  const current = (name: string): FlagRecord => tx.get('flags', name)!
  const imported = data.features.filter(flag => !review.archived.has(flag.name)).map(flag => flag.name)
  const importing = new Set(imported)

  data.features.forEach((flag, index) => {
    if (!importing.has(flag.name)) return
    within(`/data/features/${index}`, `Flag "${flag.name}"`, () => {
      const changes = {
        description: flag.description,
        type: flag.type,
        impressionData: flag.impressionData,
        stale: flag.stale,
      }
      if (review.existing.has(flag.name)) {
        writers.flags.updateIn(tx, current(flag.name), changes)
        return
      }
      const { stale, ...fields } = changes
      const created = writers.flags.createIn(tx, project, { name: flag.name, ...fields }, caller)
      if (stale) writers.flags.updateIn(tx, created, { stale })
    })
  })

  const entries = (data.featureEnvironments ?? [])
    .map((entry, index) => ({ entry, index, name: flagOfEntry(entry)! }))
    .filter(({ name }) => importing.has(name))
  for (const { entry, index, name } of entries) {
    if (entry.variants === undefined) continue
    within(`/data/featureEnvironments/${index}/variants`, `Variants of flag "${name}"`, () => {
      const variants = buildVariants(entry.variants!, '')
      const flag = current(name)
      if (!same(variants, flag.environments[environment].variants))
        writers.strategies.setVariantsIn(tx, flag, environment, variants)
    })
  }

  // Before the tags, which must be of a type that exists.
  for (const { item: tagType, index } of review.newTagTypes) {
    within(`/data/tagTypes/${index}`, `Tag type "${tagType.name}"`, () =>
      createTagTypeIn(tx, {
        name: tagType.name,
        description: tagType.description ?? undefined,
        icon: tagType.icon,
        color: tagType.color,
      }),
    )
  }

  if (data.featureTags !== undefined) {
    const wanted = new Map<string, TagRecord[]>(imported.map(name => [name, []]))
    data.featureTags.forEach((tag, index) => {
      const tags = wanted.get(tag.featureName)
      if (!tags) return
      const checked = within(`/data/featureTags/${index}`, `Tag of flag "${tag.featureName}"`, () =>
        checkTag({ type: tag.tagType, value: tag.tagValue }, '', 'tagValue'),
      )
      if (!tags.some(t => t.type === checked.type && t.value === checked.value)) tags.push(checked)
    })
    for (const [name, tags] of wanted) {
      for (const tag of current(name).tags) {
        if (!tags.some(t => t.type === tag.type && t.value === tag.value))
          writers.relations.removeTagIn(tx, current(name), tag)
      }
      for (const tag of tags) {
        if (!current(name).tags.some(t => t.type === tag.type && t.value === tag.value)) {
          within('/data/featureTags', `Tags of flag "${name}"`, () =>
            writers.relations.addTagIn(tx, current(name), tag),
          )
        }
      }
    }
  }

  // Before the strategies, whose constraints are then checked against the legal values of the field
  // as it is here once imported (created from the import, or ours, which the review found to hold
  // every imported legal value), as Unleash checks them when it adds the strategies.
  for (const { item: field, index } of review.newContextFields) {
    within(`/data/contextFields/${index}`, `Context field "${field.name}"`, () =>
      createContextFieldIn(tx, {
        name: field.name,
        description: field.description,
        legalValues: field.legalValues,
        stickiness: field.stickiness,
        sortOrder: field.sortOrder,
      }),
    )
  }

  // Unleash replaces the flags' strategies in the environment: the old ones go, the imported ones come.
  for (const name of imported) {
    for (const strategy of current(name).environments[environment].strategies)
      writers.strategies.removeIn(tx, current(name), environment, strategy.id)
  }
  const segmentIds = new Map(
    (data.segments ?? []).map(segment => [segment.id, segmentNamed(tx, segment.name, project)!.id]),
  )
  data.featureStrategies.forEach((strategy, index) => {
    if (!importing.has(strategy.featureName)) return
    const { id: _id, featureName, segments, ...fields } = strategy
    within(`/data/featureStrategies/${index}`, `Strategy ${strategy.name} of flag "${featureName}"`, () => {
      writers.strategies.addIn(tx, current(featureName), environment, {
        ...fields,
        segments: segments?.map(id => segmentIds.get(id)!),
      })
    })
  })

  for (const { entry, index, name } of entries) {
    within(`/data/featureEnvironments/${index}/enabled`, `Flag "${name}"`, () =>
      setEnvironmentEnabled(tx, current(name), environment, entry.enabled),
    )
  }

  ;(data.dependencies ?? []).forEach((entry, index) => {
    if (!importing.has(entry.feature)) return
    entry.dependencies.forEach((dependency, n) => {
      if (tx.get('flags', dependency.feature)?.archived) return
      const stored = current(entry.feature).dependencies.find(d => d.feature === dependency.feature)
      const wanted = {
        feature: dependency.feature,
        enabled: dependency.enabled ?? true,
        variants: [...new Set(dependency.variants ?? [])],
      }
      if (stored && same(stored, wanted)) return
      within(`/data/dependencies/${index}/dependencies/${n}`, `Dependency of flag "${entry.feature}"`, () =>
        writers.relations.addDependencyIn(tx, project, entry.feature, dependency),
      )
    })
  })

  tx.appendEvent(events.featuresImported(project, environment, { features: imported }))
  return imported
}

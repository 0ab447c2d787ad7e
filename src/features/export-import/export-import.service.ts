/**
 * Export and import between instances, in Unleash's formats (features-batch). An export is a read
 * that records a `features-exported` event, as Unleash does. An import is one transaction: it is
 * reviewed (import-review.ts), then made (import-apply.ts) with the single routes' transaction
 * functions, and either all of it is committed with its events or, on any error, none of it.
 * Validation makes the same import in a transaction that is always rolled back, so that it
 * reports what the import would find, including a strategy or variant the single routes refuse.
 */
import type { Static } from '@sinclair/typebox'
import { createHash } from 'node:crypto'
import { events, type ExportedData } from '../../domain/events'
import { AppError, NoAccessError, NotFoundError, ValidationError } from '../../errors'
import type { StateReader, Store, Tx } from '../../storage/store'
import type { FlagRecord } from '../flags/flags.records'
import type { FlagsService } from '../flags/flags.service'
import { metadataOf, strategyView, variantView } from '../flags/flag-view'
import { actorOf, callerName, callerSeesProject, type Caller } from '../tokens/permissions'
import type { ExportQuery, ExportResult } from './export-import.model'
import { applyImport, type ImportWriters } from './import-apply'
import {
  requireTarget,
  reviewImport,
  type ImportInput,
  type ImportReview,
  type ImportValidation,
  type ReviewRules,
} from './import-review'
import { exportedContextFields, exportedTagTypes } from './tag-types-and-context-fields'

export type ExportQueryInput = Static<typeof ExportQuery>
export type ExportResultView = Static<typeof ExportResult>

/** Thrown to roll a validation's transaction back, carrying what it found. */
class RolledBack {
  constructor(readonly validation: ImportValidation) {}
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** The flags an export selects, as Unleash picks them: by tag, else by names, else by project, else all; live flags the caller may see. */
function selectFlags(
  reader: StateReader,
  query: ExportQueryInput,
  caller: Caller,
): { selectedBy: ExportedData['selectedBy']; flags: FlagRecord[] } {
  const visible = reader.values('flags').filter(flag => !flag.archived && callerSeesProject(caller, flag.project))
  let selected: FlagRecord[]
  let selectedBy: ExportedData['selectedBy']
  if (query.tag !== undefined) {
    const tag = query.tag
    selectedBy = 'tag'
    selected = visible.filter(flag => flag.tags.some(t => t.value === tag || `${t.type}:${t.value}` === tag))
  } else if (query.features !== undefined && query.features.length > 0) {
    const names = new Set(query.features)
    selectedBy = 'features'
    selected = visible.filter(flag => names.has(flag.name))
  } else if (query.project !== undefined) {
    selectedBy = 'project'
    selected = visible.filter(flag => flag.project === query.project)
  } else {
    selectedBy = 'all'
    selected = visible
  }
  return { selectedBy, flags: selected.sort(byName) }
}

function buildExport(reader: StateReader, flags: FlagRecord[], environment: string): ExportResultView {
  const inEnvironment = flags.filter(flag => Object.hasOwn(flag.environments, environment))
  const strategies = inEnvironment.flatMap(flag =>
    [...flag.environments[environment].strategies]
      .sort((a, b) => a.sortOrder - b.sortOrder)
      .map(strategy => strategyView(strategy, flag.name)),
  )
  const featureEnvironments = inEnvironment.map(flag => {
    const entry = flag.environments[environment]
    return {
      name: flag.name,
      featureName: flag.name,
      environment,
      enabled: entry.enabled,
      variants: entry.variants.map(variantView),
    }
  })
  const segmentIds = new Set(strategies.flatMap(strategy => strategy.segments))
  const segments = [...segmentIds]
    .sort((a, b) => a - b)
    .map(id => reader.get('segments', String(id)))
    .filter(segment => segment !== undefined)
    .map(segment => ({ id: segment.id, name: segment.name }))
  const contextNames = new Set([
    ...strategies.flatMap(strategy =>
      [...strategy.constraints.map(c => c.contextName), strategy.parameters.stickiness ?? ''].filter(Boolean),
    ),
    ...featureEnvironments.flatMap(entry =>
      entry.variants.flatMap(variant => [variant.stickiness, ...variant.overrides.map(o => o.contextName)]),
    ),
  ])
  const tags = flags.flatMap(flag => flag.tags)
  return {
    // The flag's metadata as its events carry it, less createdAt, which an export does not hold.
    features: flags.map(flag => {
      const { createdAt: _createdAt, ...feature } = metadataOf(flag)
      return feature
    }),
    featureStrategies: strategies,
    featureEnvironments,
    contextFields: exportedContextFields(reader, contextNames),
    featureTags: flags.flatMap(flag =>
      flag.tags.map(tag => ({ featureName: flag.name, tagType: tag.type, tagValue: tag.value })),
    ),
    segments,
    tagTypes: exportedTagTypes(reader, tags),
    dependencies: flags
      .filter(flag => flag.dependencies.length > 0)
      .map(flag => ({
        feature: flag.name,
        dependencies: flag.dependencies.map(d => ({
          feature: d.feature,
          enabled: d.enabled,
          variants: [...d.variants],
        })),
      })),
  }
}

/** `features-exported` events recorded per token and clock hour at most; the exports past it are counted into the next one. */
export const EXPORT_EVENTS_PER_HOUR = 60

/**
 * Decides which exports get an event. An export is a read any viewer may repeat at will, and
 * events are kept for good: past the hourly bound a token's exports are only counted, and its next
 * recorded export says how many went unrecorded, so the audit trail still has every export's count.
 */
class ExportAudit {
  private hour = -1
  /** Events recorded this hour, by token (userId). */
  private readonly recorded = new Map<number, number>()
  /** Exports left unrecorded since the token's last event. */
  private readonly unrecorded = new Map<number, number>()

  /** The number of unrecorded exports the event carries, or null when this export gets none. */
  admit(userId: number): number | null {
    const hour = Math.floor(Date.now() / 3_600_000)
    if (hour !== this.hour) {
      this.hour = hour
      this.recorded.clear()
    }
    const recorded = this.recorded.get(userId) ?? 0
    if (recorded >= EXPORT_EVENTS_PER_HOUR) {
      this.unrecorded.set(userId, (this.unrecorded.get(userId) ?? 0) + 1)
      return null
    }
    this.recorded.set(userId, recorded + 1)
    const skipped = this.unrecorded.get(userId) ?? 0
    this.unrecorded.delete(userId)
    return skipped
  }

  /** Gives back an admission whose export failed (and so was no export): its slot, and the count it was to carry. */
  giveBack(userId: number, skipped: number): void {
    this.recorded.set(userId, Math.max(0, (this.recorded.get(userId) ?? 1) - 1))
    if (skipped > 0) this.unrecorded.set(userId, (this.unrecorded.get(userId) ?? 0) + skipped)
  }
}

function exportedData(
  query: ExportQueryInput,
  caller: Caller,
  selectedBy: ExportedData['selectedBy'],
  flags: FlagRecord[],
  unrecorded: number,
): ExportedData {
  return {
    environment: query.environment,
    selectedBy,
    ...(selectedBy === 'tag' ? { tag: query.tag } : {}),
    ...(selectedBy === 'features' ? { requested: query.features!.length } : {}),
    scope: [...caller.projects],
    count: flags.length,
    flagsHash: createHash('sha256')
      .update(flags.map(flag => flag.name).join('\n'))
      .digest('hex'),
    ...(unrecorded > 0 ? { unrecorded } : {}),
  }
}

export class ExportImportService {
  private readonly audit = new ExportAudit()

  constructor(
    private readonly store: Pick<Store, 'transact' | 'reader'>,
    private readonly writers: ImportWriters & { flags: Pick<FlagsService, 'checkNamingPattern'> },
  ) {}

  private rules(tx: Tx): ReviewRules {
    return {
      namingProblem: (name, projectId) => {
        try {
          this.writers.flags.checkNamingPattern(name, projectId)
          return null
        } catch (error) {
          if (error instanceof ValidationError) return error.message
          throw error
        }
      },
      flagCount: tx.values('flags').length,
    }
  }

  async export(query: ExportQueryInput, caller: Caller): Promise<ExportResultView> {
    const exportFrom = (reader: StateReader) => {
      if (!reader.get('environments', query.environment))
        throw new NotFoundError(`Environment "${query.environment}" does not exist`)
      const selection = selectFlags(reader, query, caller)
      return { ...selection, result: buildExport(reader, selection.flags, query.environment) }
    }
    // An export of an unknown environment is no export: checked before it is counted (and again in the transaction).
    exportFrom(this.store.reader)
    const unrecorded = this.audit.admit(caller.userId)
    // Past the bound it is a plain read: no commit at all.
    if (unrecorded === null) return exportFrom(this.store.reader).result
    try {
      return await this.store.transact(actorOf(caller), tx => {
        const { selectedBy, flags, result } = exportFrom(tx)
        // The event's project is the one selected, so that readers of that project's events find it;
        // a project the caller may not see is none of its business (it exported nothing of it).
        const project = selectedBy === 'project' && callerSeesProject(caller, query.project!) ? query.project! : null
        tx.appendEvent(events.featuresExported(project, exportedData(query, caller, selectedBy, flags, unrecorded)))
        return result
      })
    } catch (error) {
      this.audit.giveBack(caller.userId, unrecorded)
      throw error
    }
  }

  async validate(input: ImportInput, caller: Caller): Promise<ImportValidation> {
    try {
      await this.store.transact(actorOf(caller), tx => {
        requireTarget(tx, input, caller)
        const review = reviewImport(tx, input, caller, this.rules(tx))
        const { errors, warnings, permissions } = review
        if (errors.length === 0) {
          try {
            applyImport(tx, input, review, this.writers, caller)
          } catch (error) {
            if (!(error instanceof AppError)) throw error
            errors.push({
              message: error.message,
              affectedItems: (error.details ?? []).map(detail => detail.path ?? detail.message),
            })
          }
        }
        throw new RolledBack({ errors, warnings, permissions })
      })
    } catch (error) {
      if (error instanceof RolledBack) return error.validation
      throw error
    }
    throw new Error('unreachable: a validation always rolls back')
  }

  /** All or nothing: any finding of the review, or any refusal while making it, answers 400 and changes nothing. */
  async import(input: ImportInput, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      requireTarget(tx, input, caller)
      const review: ImportReview = reviewImport(tx, input, caller, this.rules(tx))
      // Checked first, as Unleash's import does; past the route's UPDATE_FEATURE check, only the service-wide permissions can be missing.
      const missing = review.permissions.flatMap(finding => finding.affectedItems)
      if (missing.length > 0) {
        throw new NoAccessError(
          `${callerName(caller, true)} lacks permissions this import needs: ${missing.join(', ')}; tag types and context fields are service-wide, so creating them needs a token for all projects`,
          missing[0],
        )
      }
      if (review.errors.length > 0) {
        const details = review.errors.map(error => ({
          message: `${error.message} ${error.affectedItems.join(', ')}`.trim(),
        }))
        throw new ValidationError(
          `The import was refused and nothing was changed: ${details.map(detail => detail.message).join('; ')}`,
          details,
        )
      }
      applyImport(tx, input, review, this.writers, caller)
    })
  }
}

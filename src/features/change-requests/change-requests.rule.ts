/**
 * The rule every write is held to (storage's WriteRule): a change to an environment under change
 * requests, made directly, is refused with 409 when a person makes it (isPersonAuthor), and let
 * through for an API token (as Unleash's SKIP_CHANGE_REQUEST), its events then saying so, unless
 * `CHANGE_REQUESTS_FOR_ADMIN_TOKENS=enforce`. The writes that apply a request are let through,
 * their events naming it. Being a rule over records, it holds for every route alike: toggles,
 * strategies, variants, archiving, dependencies, segments, imports.
 */
import { ConflictError } from '../../errors'
import type { EventAuthor, StagedEvent, StateReader, Tx, WriteRule } from '../../storage/store'
import type { FlagEnvironmentRecord, FlagRecord } from '../flags/flags.records'
import { isPersonAuthor } from '../tokens/permissions'
import { settingKey } from './change-requests.records'

export type AdminTokenPolicy = 'skip' | 'enforce'

/** `CHANGE_REQUESTS_FOR_ADMIN_TOKENS`: skip (the default) or enforce; throws an Error naming it otherwise. */
export function adminTokenPolicy(raw: string | undefined): AdminTokenPolicy {
  const value = raw?.trim().toLowerCase()
  if (value === undefined || value === '' || value === 'skip') return 'skip'
  if (value === 'enforce') return 'enforce'
  throw new Error(`CHANGE_REQUESTS_FOR_ADMIN_TOKENS must be skip or enforce, got "${raw}"`)
}

/** The authors applying a request, by the request's id (see `applyingAs`). */
const applying = new WeakMap<EventAuthor, number>()

/** Marks `author` as applying request `id`: its writes pass the rule and its events name the request. */
export function applyingAs<A extends EventAuthor>(author: A, id: number): A {
  applying.set(author, id)
  return author
}

export function underChangeRequests(reader: StateReader, project: string, environment: string): boolean {
  return reader.get('changeRequestSettings', settingKey(project, environment))?.enabled === true
}

const reviewed = (entry: FlagEnvironmentRecord) => JSON.stringify([entry.enabled, entry.strategies, entry.variants])

/** The environments under change requests that a change of a flag from `before` to `after` touches. */
export function touchedEnvironments(reader: StateReader, before: FlagRecord, after: FlagRecord): string[] {
  const under = (environment: string) => underChangeRequests(reader, after.project, environment)
  const touched = new Set<string>()
  // The setting is looked up first: a write to a flag with no environment under change requests
  // (most of them) compares nothing. Records are frozen, so an entry the write left is the same object.
  for (const [environment, entry] of Object.entries(before.environments)) {
    if (!under(environment)) continue
    const next = after.environments[environment]
    if (next && next !== entry && reviewed(entry) !== reviewed(next)) touched.add(environment)
    // Archiving a flag that is on there.
    if (!before.archived && after.archived && entry.enabled) touched.add(environment)
  }
  if (
    before.dependencies !== after.dependencies &&
    JSON.stringify(before.dependencies) !== JSON.stringify(after.dependencies)
  )
    for (const environment of Object.keys(after.environments)) if (under(environment)) touched.add(environment)
  return [...touched]
}

/** The project × environments under change requests whose strategies use segment `id`. */
function segmentUsers(reader: StateReader, id: number): { project: string; environment: string }[] {
  const found: { project: string; environment: string }[] = []
  for (const flag of reader.values('flags')) {
    for (const [environment, entry] of Object.entries(flag.environments)) {
      if (underChangeRequests(reader, flag.project, environment) && entry.strategies.some(s => s.segments.includes(id)))
        found.push({ project: flag.project, environment })
    }
  }
  return found
}

function refusal(project: string, environment: string, what: string): ConflictError {
  return new ConflictError(
    `Environment "${environment}" of project "${project}" is under change requests: ${what} there needs a change request (POST /api/admin/projects/${project}/environments/${environment}/change-requests)`,
  )
}

export function changeRequestRule(policy: () => AdminTokenPolicy): WriteRule {
  /** The flags (by name) and segments a write by an API token changed without a request. */
  const skipped = new WeakMap<Tx, Set<string>>()
  const decide = (tx: Tx, subject: string, project: string, environment: string, what: string) => {
    if (applying.has(tx.actor)) return
    if (isPersonAuthor(tx.actor) || policy() === 'enforce') throw refusal(project, environment, what)
    let marked = skipped.get(tx)
    if (!marked) skipped.set(tx, (marked = new Set()))
    marked.add(subject)
  }
  return {
    record(tx, collection, key, before, after) {
      if (collection === 'flags' && before !== undefined && after !== undefined) {
        const flag = after as FlagRecord
        const touched = touchedEnvironments(tx, before as FlagRecord, flag)
        if (touched.length > 0) decide(tx, key, flag.project, touched[0], `changing flag "${key}"`)
      } else if (collection === 'segments' && before !== undefined) {
        const id = (before as { id: number }).id
        const users = segmentUsers(tx, id)
        if (users.length > 0) decide(tx, 'segment', users[0].project, users[0].environment, `changing segment ${id}`)
      }
    },
    event(tx, event): StagedEvent {
      if (event.type.startsWith('change-request-')) return event
      const id = applying.get(tx.actor)
      if (id !== undefined) return { ...event, data: { ...(event.data ?? {}), changeRequestId: id } }
      const marked = skipped.get(tx)
      const direct =
        !isPersonAuthor(tx.actor) &&
        typeof event.project === 'string' &&
        typeof event.environment === 'string' &&
        event.type.startsWith('feature-') &&
        underChangeRequests(tx, event.project, event.environment)
      const named =
        marked !== undefined &&
        ((typeof event.featureName === 'string' && marked.has(event.featureName)) ||
          (event.type.startsWith('segment-') && marked.has('segment')))
      return direct || named ? { ...event, data: { ...(event.data ?? {}), changeRequestSkipped: true } } : event
    },
  }
}

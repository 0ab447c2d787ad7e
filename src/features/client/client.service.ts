/**
 * The server-side SDK API's reads (sdk-api-contract §1). Thousands of SDKs poll the same few
 * scopes every few seconds, so each scope's answer is kept serialised with its ETag: a 200 sends
 * the kept bytes, a 304 compares one header. The store's record watchers drop a kept answer in the
 * same commit as a change to what it serves, and only then, so the next request after a write sees
 * it (never a stale 304) and a write elsewhere leaves the other scopes' ETags alone.
 */
import { createHash } from 'node:crypto'
import type { Store } from '../../storage/store'
import type { FlagRecord } from '../flags/flags.records'
import { ScopeCache } from '../flags/scope-cache'
import type { SegmentRecord } from '../segments/segments.records'
import { flagNotFound } from '../not-found'
import type { SdkScope } from '../tokens/auth'
import { clientFeatureView, type ClientFeatureView } from './client.view'

export interface ClientQuery {
  project?: string[]
  namePrefix?: string
  tag?: string[]
}

/**
 * What a token serves whatever its query: its environment, its projects, and whether its SDK reads
 * segments by id (Unleash-Client-Spec ≥ 4.2.0; otherwise their constraints are inlined). One
 * compiled answer is kept per such scope, so that the number of scopes kept is the tokens' to
 * decide, not their queries'.
 */
interface TokenScope {
  environment: string
  /** null: every project. Sorted. */
  projects: string[] | null
  segmentIds: boolean
  key: string
}

/** A request's effective filter: the token's scope, narrowed by the query where the token allows. */
export interface Scope extends TokenScope {
  /** The token's scope, which is what is kept. */
  token: TokenScope
  /** Sorted; null: every project. */
  projects: string[] | null
  namePrefix: string
  /** `type:value`; a flag with any of them is served. Empty: no tag filter. Sorted. */
  tags: string[]
  /** The query's part of `key`, '' when it narrows nothing. */
  filterKey: string
}

const SEGMENTS_SINCE = [4, 2, 0]

/** Whether an `Unleash-Client-Spec` header value names 4.2.0 or later, compared numerically; no header or no version → false. */
export function readsSegmentIds(clientSpec: string | null | undefined): boolean {
  const match = /^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(clientSpec ?? '')
  if (!match) return false
  const version = [match[1], match[2], match[3]].map(part => Number(part ?? 0))
  for (let index = 0; index < 3; index++)
    if (version[index] !== SEGMENTS_SINCE[index]) return version[index] > SEGMENTS_SINCE[index]
  return true
}

export interface ClientAnswer {
  etag: string
  bytes: Uint8Array<ArrayBuffer>
}

/**
 * The scopes of requests without a query, by the token's projects (the token record's own list, the
 * same array while the record is unchanged), its environment and whether it reads segment ids: an
 * SDK's polls then find their scope without making its keys again.
 */
const plainScopes = new WeakMap<readonly string[], Map<string, Scope>>()

export function scopeOf(token: SdkScope, query: ClientQuery, clientSpec: string | null = null): Scope {
  const segmentIds = readsSegmentIds(clientSpec)
  if (!query.project?.length && !query.namePrefix && !query.tag?.length) {
    let kept = plainScopes.get(token.projects)
    if (kept === undefined) plainScopes.set(token.projects, (kept = new Map()))
    const key = `${segmentIds ? 1 : 0}${token.environment}`
    let scope = kept.get(key)
    if (scope === undefined) kept.set(key, (scope = scopeFor(token, {}, segmentIds)))
    return scope
  }
  return scopeFor(token, query, segmentIds)
}

function scopeFor(token: SdkScope, query: ClientQuery, segmentIds: boolean): Scope {
  const tokenProjects = token.projects.includes('*') ? null : [...new Set(token.projects)].sort()
  const tokenScope: TokenScope = {
    environment: token.environment,
    projects: tokenProjects,
    segmentIds,
    key: JSON.stringify([token.environment, tokenProjects, segmentIds]),
  }
  const asked = [...new Set(query.project ?? [])].sort()
  let projects: string[] | null
  if (tokenProjects === null) projects = asked.length > 0 ? asked : null
  else {
    // A ?project= that conflicts with the token is ignored: the token wins.
    const allowed = asked.filter(project => tokenProjects.includes(project))
    projects = allowed.length > 0 ? allowed : tokenProjects
  }
  const namePrefix = query.namePrefix ?? ''
  const tags = [...new Set(query.tag ?? [])].sort()
  const narrowed = JSON.stringify(projects) !== JSON.stringify(tokenProjects) || namePrefix !== '' || tags.length > 0
  const filterKey = narrowed ? JSON.stringify([projects, namePrefix, tags]) : ''
  return {
    ...tokenScope,
    token: tokenScope,
    projects,
    namePrefix,
    tags,
    filterKey,
    key: JSON.stringify([token.environment, projects, namePrefix, tags, segmentIds]),
  }
}

export function inScope(
  scope: Omit<Scope, 'token' | 'key' | 'filterKey' | 'segmentIds' | 'environment'>,
  flag: FlagRecord,
): boolean {
  return (
    (scope.projects === null || scope.projects.includes(flag.project)) &&
    flag.name.startsWith(scope.namePrefix) &&
    (scope.tags.length === 0 || flag.tags.some(tag => scope.tags.includes(`${tag.type}:${tag.value}`)))
  )
}

/** The flags a scope serves (`serves` says which), each with its view as SDKs read it, in name order. */
function servedFlags(
  state: Pick<Store['state'], 'flags' | 'segments'>,
  scope: Pick<TokenScope, 'environment' | 'segmentIds'>,
  serves: (flag: FlagRecord) => boolean,
): { flag: FlagRecord; view: ClientFeatureView }[] {
  const served: { flag: FlagRecord; view: ClientFeatureView }[] = []
  for (const flag of Object.values(state.flags)) {
    if (!serves(flag)) continue
    const view = clientFeatureView(flag, scope.environment, scope.segmentIds ? undefined : state.segments)
    if (view) served.push({ flag, view })
  }
  return served.sort((a, b) => (a.flag.name < b.flag.name ? -1 : a.flag.name > b.flag.name ? 1 : 0))
}

/** The flags `scope` serves, by name, as SDKs read them: what a stream's hydration holds (the list answer is compiled from the same views). */
export function scopedFeatures(state: Pick<Store['state'], 'flags' | 'segments'>, scope: Scope): ClientFeatureView[] {
  return servedFlags(state, scope, flag => inScope(scope, flag)).map(({ view }) => view)
}

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16)

const encoder = new TextEncoder()

/** A flag a token scope serves, its view serialised once. */
interface CompiledFlag {
  flag: FlagRecord
  json: string
  /** Ids of the segments its strategies name (segmentIds scopes only). */
  segments: number[]
}

/** Filtered answers kept per token scope; past it the scope's least recently used is made again when asked. */
export const MAX_FILTERED_PER_SCOPE = 8

/** What is kept for a token scope: its flags, serialised, by name; its unfiltered answer; a few filtered ones. */
class CompiledTokenScope {
  private all: ClientAnswer | null = null
  /** The content of every flag of the scope, made once: a filter that keeps them all reuses it. */
  private allContent: Content | null = null
  private readonly filtered = new Map<string, ClientAnswer>()

  constructor(readonly flags: CompiledFlag[]) {}

  private contentOf(state: Pick<Store['state'], 'segments'>, flags: CompiledFlag[]): Content {
    if (flags.length < this.flags.length) return content(state, flags)
    return (this.allContent ??= content(state, this.flags))
  }

  /** The answer kept for `scope`, or one made now from the compiled flags; `made` says which. */
  answer(state: Pick<Store['state'], 'segments' | 'commitSeq'>, scope: Scope, made: () => void): ClientAnswer {
    if (scope.filterKey === '') {
      if (!this.all) {
        made()
        this.all = assemble(state, scope, this.contentOf(state, this.flags))
      }
      return this.all
    }
    let answer = this.filtered.get(scope.filterKey)
    if (answer) {
      this.filtered.delete(scope.filterKey)
    } else {
      made()
      answer = assemble(
        state,
        scope,
        this.contentOf(
          state,
          this.flags.filter(({ flag }) => inScope(scope, flag)),
        ),
      )
      if (this.filtered.size >= MAX_FILTERED_PER_SCOPE) this.filtered.delete(this.filtered.keys().next().value!)
    }
    this.filtered.set(scope.filterKey, answer)
    return answer
  }
}

function compile(state: Pick<Store['state'], 'flags' | 'segments'>, scope: TokenScope): CompiledTokenScope {
  const served = servedFlags(state, scope, flag => scope.projects === null || scope.projects.includes(flag.project))
  return new CompiledTokenScope(
    served.map(({ flag, view }) => ({
      flag,
      json: JSON.stringify(view),
      segments: scope.segmentIds ? [...new Set(view.strategies.flatMap(strategy => strategy.segments ?? []))] : [],
    })),
  )
}

/** The part of an answer made from its flags: serialised, with the segments they use, and their hash. */
interface Content {
  json: string
  hash: string
}

function content(state: Pick<Store['state'], 'segments'>, flags: CompiledFlag[]): Content {
  // Each segment the served strategies refer to, once, so that the flags need only its id.
  const referenced = new Set<number>()
  for (const { segments } of flags) for (const id of segments) referenced.add(id)
  const segments = [...referenced]
    .sort((a, b) => a - b)
    .flatMap(id => {
      const segment: SegmentRecord | undefined = Object.hasOwn(state.segments, String(id))
        ? state.segments[String(id)]
        : undefined
      return segment ? [{ id: segment.id, name: segment.name, constraints: segment.constraints }] : []
    })
  const featuresJson = `[${flags.map(flag => flag.json).join(',')}]`
  const segmentsJson = segments.length > 0 ? `,"segments":${JSON.stringify(segments)}` : ''
  const json = `${featuresJson}${segmentsJson}`
  return { json, hash: hash(json) }
}

/** The answer of `scope` with `content`, the flags it serves. */
function assemble(state: Pick<Store['state'], 'commitSeq'>, scope: Scope, content: Content): ClientAnswer {
  const query = {
    project: scope.projects ?? ['*'],
    environment: scope.environment,
    ...(scope.namePrefix ? { namePrefix: scope.namePrefix } : {}),
    ...(scope.tags.length > 0 ? { tag: scope.tags } : {}),
  }
  const queryHash = hash(JSON.stringify(query))
  // From the content itself: the same flags give the same ETag, also after a restart or once the
  // scope was dropped from the cache; different flags never share one.
  const etag = `"${queryHash}:${content.hash}:v1"`
  const meta = { revisionId: state.commitSeq, etag, queryHash }
  const json = `{"version":2,"features":${content.json},"query":${JSON.stringify(query)},"meta":${JSON.stringify(meta)}}`
  return { etag, bytes: encoder.encode(json) as Uint8Array<ArrayBuffer> }
}

/** The answer for `scope` made from `state`, without any kept answer (the service keeps these). */
export function buildAnswer(
  state: Pick<Store['state'], 'flags' | 'segments' | 'commitSeq'>,
  scope: Scope,
): ClientAnswer {
  return assemble(
    state,
    scope,
    content(
      state,
      compile(state, scope.token).flags.filter(({ flag }) => inScope(scope, flag)),
    ),
  )
}

/** How the client API's answers were found since the start: kept, made from a kept token scope (`filtered`), or with the scope compiled. */
export interface ClientCacheStats {
  kept: number
  filtered: number
  compiled: number
}

export class ClientFeaturesService {
  /** Per token scope, never per query: one caller's queries cannot push other tokens' scopes out. */
  private readonly scopes: ScopeCache<TokenScope, CompiledTokenScope>
  private made = { kept: 0, filtered: 0 }

  constructor(private readonly store: Pick<Store, 'state' | 'watch'>) {
    // Dropping an answer costs a rebuild but never an ETag for the scopes that did not change: the ETag is the content's hash.
    this.scopes = new ScopeCache(store, {
      holds: (scope, flag) => scope.projects === null || scope.projects.includes(flag.project),
      build: scope => compile(store.state, scope),
      served: clientFeatureView,
      // The answers kept for ?tag= queries depend on the tags.
      alsoChanged: (before, after) => JSON.stringify(before.tags) !== JSON.stringify(after.tags),
    })
  }

  /** The list for `scope`: compiled once per token scope and change of what it serves, a filter applied to that. */
  features(scope: Scope): ClientAnswer {
    const compiled = this.scopes.stats.builds
    let made = false
    const answer = this.scopes.get(scope.token.key, scope.token).answer(this.store.state, scope, () => (made = true))
    if (this.scopes.stats.builds === compiled) this.made[made ? 'filtered' : 'kept']++
    return answer
  }

  get stats(): ClientCacheStats {
    return { ...this.made, compiled: this.scopes.stats.builds }
  }

  /** One flag in the token's scope; 404 for unknown, archived or out-of-scope flags alike. */
  feature(token: SdkScope, name: string, clientSpec: string | null = null): ClientFeatureView {
    const flag = Object.hasOwn(this.store.state.flags, name) ? this.store.state.flags[name] : undefined
    const visible = flag && (token.projects.includes('*') || token.projects.includes(flag.project))
    const view = visible
      ? clientFeatureView(flag, token.environment, readsSegmentIds(clientSpec) ? undefined : this.store.state.segments)
      : null
    if (!view) throw flagNotFound(name)
    return view
  }
}

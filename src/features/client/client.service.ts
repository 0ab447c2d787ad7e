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
import type { SegmentRecord } from '../segments/segments.records'
import { flagNotFound } from '../not-found'
import type { SdkScope } from '../tokens/auth'
import { clientFeatureView, type ClientFeatureView } from './client.view'
import { ScopeCache } from './scope-cache'

export interface ClientQuery {
  project?: string[]
  namePrefix?: string
  tag?: string[]
}

/** The effective filter of a request: the token's scope, narrowed by the query where the token allows. */
export interface Scope {
  environment: string
  /** null: every project. Sorted. */
  projects: string[] | null
  namePrefix: string
  /** `type:value`; a flag with any of them is served. Empty: no tag filter. Sorted. */
  tags: string[]
  /** The client reads segments by id (Unleash-Client-Spec ≥ 4.2.0); otherwise their constraints are inlined. */
  segmentIds: boolean
  key: string
}

const SEGMENTS_SINCE = [4, 2, 0]

/** Whether an `Unleash-Client-Spec` header value names 4.2.0 or later, compared numerically; no header or no version → false. */
export function readsSegmentIds(clientSpec: string | null | undefined): boolean {
  const match = /^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(clientSpec ?? '')
  if (!match) return false
  const version = [match[1], match[2], match[3]].map((part) => Number(part ?? 0))
  for (let index = 0; index < 3; index++) if (version[index] !== SEGMENTS_SINCE[index]) return version[index] > SEGMENTS_SINCE[index]
  return true
}

export interface ClientAnswer {
  etag: string
  bytes: Uint8Array<ArrayBuffer>
}

export function scopeOf(token: SdkScope, query: ClientQuery, clientSpec: string | null = null): Scope {
  const asked = [...new Set(query.project ?? [])].sort()
  let projects: string[] | null
  if (token.projects.includes('*')) projects = asked.length > 0 ? asked : null
  else {
    // A ?project= that conflicts with the token is ignored: the token wins.
    const allowed = asked.filter((project) => token.projects.includes(project))
    projects = allowed.length > 0 ? allowed : [...token.projects].sort()
  }
  const namePrefix = query.namePrefix ?? ''
  const tags = [...new Set(query.tag ?? [])].sort()
  const segmentIds = readsSegmentIds(clientSpec)
  return { environment: token.environment, projects, namePrefix, tags, segmentIds, key: JSON.stringify([token.environment, projects, namePrefix, tags, segmentIds]) }
}

export function inScope(scope: Scope, flag: FlagRecord): boolean {
  return (
    (scope.projects === null || scope.projects.includes(flag.project)) &&
    flag.name.startsWith(scope.namePrefix) &&
    (scope.tags.length === 0 || flag.tags.some((tag) => scope.tags.includes(`${tag.type}:${tag.value}`)))
  )
}

/** The flags `scope` serves, by name, as SDKs read them: what the list answer and a stream's hydration hold. */
export function scopedFeatures(state: Pick<Store['state'], 'flags' | 'segments'>, scope: Scope): ClientFeatureView[] {
  const features: ClientFeatureView[] = []
  for (const flag of Object.values(state.flags)) {
    if (!inScope(scope, flag)) continue
    const view = clientFeatureView(flag, scope.environment, scope.segmentIds ? undefined : state.segments)
    if (view) features.push(view)
  }
  return features.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16)

const encoder = new TextEncoder()

/** The answer for `scope` made from `state`, without any kept answer (the service keeps these). */
export function buildAnswer(state: Pick<Store['state'], 'flags' | 'segments' | 'commitSeq'>, scope: Scope): ClientAnswer {
  const features = scopedFeatures(state, scope)
  // Each segment the served strategies refer to, once, so that the flags need only its id.
  const referenced = new Set<number>()
  if (scope.segmentIds) for (const feature of features) for (const strategy of feature.strategies) for (const id of strategy.segments ?? []) referenced.add(id)
  const segments = [...referenced]
    .sort((a, b) => a - b)
    .flatMap((id) => {
      const segment: SegmentRecord | undefined = Object.hasOwn(state.segments, String(id)) ? state.segments[String(id)] : undefined
      return segment ? [{ id: segment.id, name: segment.name, constraints: segment.constraints }] : []
    })
  const query = {
    project: scope.projects ?? ['*'],
    environment: scope.environment,
    ...(scope.namePrefix ? { namePrefix: scope.namePrefix } : {}),
    ...(scope.tags.length > 0 ? { tag: scope.tags } : {}),
  }
  const queryHash = hash(JSON.stringify(query))
  const featuresJson = JSON.stringify(features)
  const segmentsJson = segments.length > 0 ? `,"segments":${JSON.stringify(segments)}` : ''
  // From the content itself: the same flags give the same ETag, also after a restart or once the
  // scope was dropped from the cache; different flags never share one.
  const etag = `"${queryHash}:${hash(featuresJson + segmentsJson)}:v1"`
  const meta = { revisionId: state.commitSeq, etag, queryHash }
  const json = `{"version":2,"features":${featuresJson}${segmentsJson},"query":${JSON.stringify(query)},"meta":${JSON.stringify(meta)}}`
  return { etag, bytes: encoder.encode(json) as Uint8Array<ArrayBuffer> }
}

export class ClientFeaturesService {
  private readonly answers: ScopeCache<Scope, ClientAnswer>

  constructor(private readonly store: Pick<Store, 'state' | 'watch'>) {
    // Dropping an answer costs a rebuild but never an ETag for the scopes that did not change: the ETag is the content's hash.
    this.answers = new ScopeCache(store, { holds: inScope, build: (scope) => buildAnswer(store.state, scope) })
  }

  /** The list for `scope`, serialised once per change of what it serves. */
  features(scope: Scope): ClientAnswer {
    return this.answers.get(scope.key, scope)
  }

  /** One flag in the token's scope; 404 for unknown, archived or out-of-scope flags alike. */
  feature(token: SdkScope, name: string, clientSpec: string | null = null): ClientFeatureView {
    const flag = Object.hasOwn(this.store.state.flags, name) ? this.store.state.flags[name] : undefined
    const visible = flag && (token.projects.includes('*') || token.projects.includes(flag.project))
    const view = visible ? clientFeatureView(flag, token.environment, readsSegmentIds(clientSpec) ? undefined : this.store.state.segments) : null
    if (!view) throw flagNotFound(name)
    return view
  }
}

/** Whether an If-None-Match header names `etag` (a list, weak forms and `*` included). */
export function etagMatches(header: string | null, etag: string): boolean {
  if (header === null) return false
  for (const part of header.split(',')) {
    const candidate = part.trim()
    if (candidate === '*' || candidate === etag || (candidate.startsWith('W/') && candidate.slice(2) === etag)) return true
  }
  return false
}

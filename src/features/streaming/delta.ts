/**
 * The client API's delta format (client-specification 19 and 20): a hydration (every flag and
 * segment of a scope) and the events that turn one revision's answer into the next one's. Flags are
 * the views `/api/client/features` serves (client.view.ts) and in scope by the same rule
 * (client.service.ts `inScope`), so that applying the events to a hydration gives what the list
 * answers at that revision. Segments are sent by id (delta clients read them so); a scope has the
 * global segments and those of its projects, as the segments API shows a project token.
 */
import type { Store } from '../../storage/store'
import { inScope, scopedFeatures, type Scope } from '../client/client.service'
import { clientFeatureView, type ClientFeatureView } from '../client/client.view'
import type { FlagRecord } from '../flags/flags.records'
import type { SegmentRecord } from '../segments/segments.records'
import type { Revision } from './change-feed'

export interface SegmentView {
  id: number
  name: string
  constraints: SegmentRecord['constraints']
}

export type DeltaEvent =
  | { type: 'hydration'; eventId: number; features: ClientFeatureView[]; segments: SegmentView[] }
  | { type: 'feature-updated'; eventId: number; feature: ClientFeatureView }
  | { type: 'feature-removed'; eventId: number; featureName: string; project: string }
  | { type: 'segment-updated'; eventId: number; segment: SegmentView }
  | { type: 'segment-removed'; eventId: number; segmentId: number }

const segmentView = (segment: SegmentRecord): SegmentView => ({
  id: segment.id,
  name: segment.name,
  constraints: segment.constraints,
})

function segmentInScope(scope: Scope, segment: SegmentRecord | undefined): segment is SegmentRecord {
  return (
    segment !== undefined &&
    (segment.project === null || scope.projects === null || scope.projects.includes(segment.project))
  )
}

/** Every flag and segment `scope` serves in `state`, named `revision` (the feed's: see ChangeFeed.revision). */
export function hydration(
  state: Pick<Store['state'], 'flags' | 'segments'>,
  scope: Scope,
  revision: number,
): DeltaEvent {
  const segments = Object.values(state.segments)
    .filter(segment => segmentInScope(scope, segment))
    .sort((a, b) => a.id - b.id)
    .map(segmentView)
  return {
    type: 'hydration',
    eventId: revision,
    features: scopedFeatures(state, { ...scope, segmentIds: true }),
    segments,
  }
}

interface FlagViews {
  before: ClientFeatureView | null
  after: ClientFeatureView | null
  changed: boolean
}

/** A flag's views before and after the revision in one environment, made once per revision whatever the number of scopes. */
function flagViews(
  revision: Revision,
  environment: string,
  name: string,
  before: FlagRecord | undefined,
  after: FlagRecord | undefined,
): FlagViews {
  const key = `flag\0${environment}\0${name}`
  const memo = (revision.memo ??= new Map())
  let views = memo.get(key) as FlagViews | undefined
  if (!views) {
    const beforeView = clientFeatureView(before, environment)
    const afterView = clientFeatureView(after, environment)
    views = { before: beforeView, after: afterView, changed: JSON.stringify(beforeView) !== JSON.stringify(afterView) }
    memo.set(key, views)
  }
  return views
}

/**
 * The events that bring `scope`'s copy from the revision before `revision` to it, in an order a
 * client can apply one by one: segments a flag may now name first, segments no flag may name any
 * more last. Empty when nothing the scope serves changed (a tag outside its filter, a lastSeenAt).
 */
export function eventsFor(scope: Scope, revision: Revision): DeltaEvent[] {
  const key = `events\0${scope.key}`
  const memo = (revision.memo ??= new Map())
  const known = memo.get(key) as DeltaEvent[] | undefined
  if (known) return known
  const eventId = revision.revision
  const segmentsUpdated: DeltaEvent[] = []
  const segmentsRemoved: DeltaEvent[] = []
  for (const { key: id, before, after } of revision.segments) {
    const was = segmentInScope(scope, before)
    const is = segmentInScope(scope, after)
    if (is && (!was || JSON.stringify(segmentView(before)) !== JSON.stringify(segmentView(after)))) {
      segmentsUpdated.push({ type: 'segment-updated', eventId, segment: segmentView(after) })
    } else if (was && !is) segmentsRemoved.push({ type: 'segment-removed', eventId, segmentId: Number(id) })
  }
  const flags: DeltaEvent[] = []
  for (const { key: name, before, after } of revision.flags) {
    const views = flagViews(revision, scope.environment, name, before, after)
    const was = views.before !== null && inScope(scope, before!)
    const is = views.after !== null && inScope(scope, after!)
    if (is && (!was || views.changed)) flags.push({ type: 'feature-updated', eventId, feature: views.after! })
    else if (was && !is) flags.push({ type: 'feature-removed', eventId, featureName: name, project: before!.project })
  }
  const events = [...segmentsUpdated, ...flags, ...segmentsRemoved]
  memo.set(key, events)
  return events
}

/** The events of `revisions` for `scope`, oldest first. */
export function eventsSince(scope: Scope, revisions: readonly Revision[]): DeltaEvent[] {
  return revisions.flatMap(revision => eventsFor(scope, revision))
}

/**
 * Segments: named lists of constraints that strategies refer to by id. A segment is global
 * (`project` null) or belongs to one project, whose flags alone may use it. Segment writes are
 * service-wide (the routes name no project), so they need a token for all projects; a token limited
 * to some projects reads the global segments and those of its projects.
 */
import type { Static } from '@sinclair/typebox'
import { events } from '../../domain/events'
import { ConflictError, NameExistsError, NotFoundError, ValidationError } from '../../errors'
import type { StateReader, Store, Tx } from '../../storage/store'
import { buildConstraint } from '../flags/strategy-rules'
import { checkLimit } from '../limits'
import { actorOf, callerSeesProject, type Caller } from '../tokens/permissions'
import type { Segment, UpsertSegment } from './segments.model'
import { SEGMENT_SEQUENCE_KEY, type SegmentRecord } from './segments.records'

export type SegmentInput = Static<typeof UpsertSegment>
export type SegmentView = Static<typeof Segment>

function view(segment: SegmentRecord): SegmentView {
  return {
    id: segment.id,
    name: segment.name,
    description: segment.description,
    project: segment.project,
    constraints: segment.constraints.map(constraint => ({ ...constraint, values: [...constraint.values] })),
    createdAt: segment.createdAt,
    createdBy: segment.createdBy,
  }
}

function segmentNotFound(id: string | number): NotFoundError {
  return new NotFoundError(`Segment ${id} does not exist`)
}

/** The flags (archived ones included: they can be revived) whose strategies use segment `id`, by name. */
function flagsUsing(reader: StateReader, id: number): { name: string; project: string }[] {
  return reader
    .values('flags')
    .filter(flag =>
      Object.values(flag.environments).some(entry => entry.strategies.some(strategy => strategy.segments.includes(id))),
    )
    .map(flag => ({ name: flag.name, project: flag.project }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

function listed(flags: { name: string }[]): string {
  const names = flags.slice(0, 10).map(flag => `"${flag.name}"`)
  return flags.length > 10 ? `${names.join(', ')} and ${flags.length - 10} more` : names.join(', ')
}

/** Checks a request's fields beyond the schema and builds the record's constraints. */
function checkInput(
  tx: Tx,
  input: SegmentInput,
  id: number,
): Pick<SegmentRecord, 'name' | 'description' | 'project' | 'constraints'> {
  const name = input.name.trim()
  if (name.length === 0) throw ValidationError.at('/name', 'A segment name must not be blank')
  const clash = tx.values('segments').find(segment => segment.name === name && segment.id !== id)
  if (clash) throw new NameExistsError(`A segment named "${name}" already exists (id ${clash.id})`)
  const project = input.project ?? null
  if (project !== null && !tx.get('projects', project))
    throw ValidationError.at('/project', `Project "${project}" does not exist`)
  checkLimit('constraintsPerSegment', input.constraints.length, '/constraints')
  checkLimit(
    'valuesPerSegment',
    input.constraints.reduce((sum, constraint) => sum + (constraint.values?.length ?? 0), 0),
    '/constraints',
  )
  input.constraints.forEach((constraint, index) =>
    checkLimit('valuesPerConstraint', constraint.values?.length ?? 0, `/constraints/${index}/values`),
  )
  const constraints = input.constraints.map((constraint, index) => buildConstraint(constraint, `/constraints/${index}`))
  return { name, description: input.description ?? null, project, constraints }
}

/**
 * The strategies service's check of the segments a strategy refers to (see SegmentCheck there):
 * each must exist, appear once, and be global or of the flag's project.
 */
export function checkStrategySegments(reader: StateReader, ids: readonly number[], project: string): void {
  checkLimit('segmentsPerStrategy', ids.length, '/segments')
  ids.forEach((id, index) => {
    const path = `/segments/${index}`
    if (ids.indexOf(id) !== index) throw ValidationError.at(path, `Segment ${id} is listed twice`)
    const segment = reader.get('segments', String(id))
    // One answer for a segment that does not exist and one of another project, which the caller
    // may not be allowed to see: it names neither that project nor the segment.
    if (!segment || (segment.project !== null && segment.project !== project)) {
      throw ValidationError.at(path, `Segment ${id} does not exist, globally or in project "${project}"`)
    }
  })
}

/** The write of a segment's update inside `tx`: the PUT route's, which change requests reuse. */
export function updateSegmentIn(tx: Tx, id: string, input: SegmentInput): void {
  const before = tx.get('segments', String(Number(id)))
  if (!before) throw segmentNotFound(id)
  const fields = checkInput(tx, input, before.id)
  if (fields.project !== null && fields.project !== before.project) {
    const elsewhere = flagsUsing(tx, before.id).filter(flag => flag.project !== fields.project)
    if (elsewhere.length > 0) {
      throw new ConflictError(
        `Segment ${before.id} is used by flags outside project "${fields.project}": ${listed(elsewhere)}; remove it from their strategies first`,
      )
    }
  }
  const segment: SegmentRecord = { ...before, ...fields }
  tx.put('segments', String(before.id), segment)
  tx.appendEvent(events.segmentUpdated(segment.project, view(segment), view(before)))
}

export class SegmentsService {
  constructor(private readonly store: Pick<Store, 'reader' | 'transact'>) {}

  private visible(segment: SegmentRecord, caller: Caller): boolean {
    return segment.project === null || callerSeesProject(caller, segment.project)
  }

  list(caller: Caller): SegmentView[] {
    return this.store.reader
      .values('segments')
      .filter(segment => this.visible(segment, caller))
      .sort((a, b) => a.id - b.id)
      .map(view)
  }

  /** A segment of a project the caller may not see answers as one that does not exist. */
  get(id: string, caller: Caller): SegmentView {
    const segment = this.store.reader.get('segments', String(Number(id)))
    if (!segment || !this.visible(segment, caller)) throw segmentNotFound(id)
    return view(segment)
  }

  async create(input: SegmentInput, caller: Caller): Promise<SegmentView> {
    return this.store.transact(actorOf(caller), tx => {
      const id = tx.nextId('segmentSequence', SEGMENT_SEQUENCE_KEY)
      const fields = checkInput(tx, input, id)
      checkLimit('segments', tx.values('segments').length + 1, '/name')
      const segment: SegmentRecord = { id, ...fields, createdAt: tx.now, createdBy: caller.tokenName }
      tx.put('segments', String(id), segment)
      tx.appendEvent(events.segmentCreated(segment.project, view(segment)))
      return view(segment)
    })
  }

  async update(id: string, input: SegmentInput, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => updateSegmentIn(tx, id, input))
  }

  async remove(id: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const before = tx.get('segments', String(Number(id)))
      if (!before) throw segmentNotFound(id)
      const users = flagsUsing(tx, before.id)
      if (users.length > 0) {
        throw new ConflictError(
          `Segment ${before.id} ("${before.name}") is used by strategies of ${users.length === 1 ? 'flag' : 'flags'} ${listed(users)}; remove it from them first`,
        )
      }
      tx.delete('segments', String(before.id))
      tx.appendEvent(events.segmentDeleted(before.project, view(before)))
    })
  }
}

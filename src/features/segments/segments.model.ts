/** Request and response schemas of the segment routes, with Unleash's names (segmentSchema, upsertSegmentSchema). */
import { t } from 'elysia'
import { Timestamp, Integer, PATTERN_RULE } from '../../http/schemas'
import { Constraint, ConstraintOut } from '../flags/strategy.model'
import { DESCRIPTION_MAX_LENGTH } from '../flags/flag-input'
import { LIMITS } from '../limits'

const EXAMPLE_CONSTRAINT = {
  contextName: 'region',
  operator: 'IN',
  values: ['eu-west', 'eu-north'],
  caseInsensitive: false,
  inverted: false,
}

export const UpsertSegment = t.Object(
  {
    name: t.String({
      description:
        'Segment name, unique: 1 to 100 characters, not blank; not limited to URL-safe ones since it never appears in a path',
      minLength: 1,
      maxLength: 100,
      examples: ['europe'],
    }),
    description: t.Optional(
      t.Union([t.String({ maxLength: DESCRIPTION_MAX_LENGTH }), t.Null()], {
        description: `What the segment is for; at most ${DESCRIPTION_MAX_LENGTH} characters`,
      }),
    ),
    project: t.Optional(
      t.Union([t.String({ maxLength: 100 }), t.Null()], {
        description: 'Project whose flags alone may use it; absent or null for a global segment usable everywhere',
      }),
    ),
    constraints: t.Array(Constraint, {
      maxItems: LIMITS.constraintsPerSegment.max,
      description: `All must hold for a context to be in the segment; at most ${LIMITS.constraintsPerSegment.max} (constraintsPerSegment), with at most ${LIMITS.valuesPerSegment.max} values in all (valuesPerSegment)`,
    }),
  },
  {
    description: 'A segment to create, or to replace one with',
    examples: [{ name: 'europe', description: 'Users in Europe', project: null, constraints: [EXAMPLE_CONSTRAINT] }],
  },
)

export const Segment = t.Object(
  {
    id: Integer({ description: 'Segment id, allocated by the service and never reused' }),
    name: t.String({ description: 'Segment name' }),
    description: t.Union([t.String(), t.Null()], { description: 'What the segment is for' }),
    project: t.Union([t.String(), t.Null()], {
      description: 'Project whose flags alone may use it; null for a global segment',
    }),
    constraints: t.Array(ConstraintOut, { description: 'All must hold for a context to be in the segment' }),
    createdAt: Timestamp('Creation time'),
    createdBy: t.String({ description: 'Name of the token that created it' }),
  },
  {
    description: 'A segment: a named list of constraints that strategies refer to by id',
    examples: [
      {
        id: 1,
        name: 'europe',
        description: 'Users in Europe',
        project: null,
        constraints: [EXAMPLE_CONSTRAINT],
        createdAt: '2026-01-01T00:00:00.000Z',
        createdBy: 'admin',
      },
    ],
  },
)

export const SegmentList = t.Object(
  { segments: t.Array(Segment, { description: 'By id' }) },
  { description: 'Segments' },
)

export const segmentParams = t.Object({
  id: t.String({
    pattern: '^[0-9]{1,15}$',
    [PATTERN_RULE]: 'a segment id, a whole number of 1 to 15 digits',
    description: 'Segment id',
    examples: ['1'],
  }),
})

/** The named schemas of the segment routes, as routes refer to them and OpenAPI lists them. */
export const segmentModels = {
  segmentSchema: Segment,
  segmentsSchema: SegmentList,
  upsertSegmentSchema: UpsertSegment,
}

import { t } from 'elysia'
import { EVENT_TYPES } from '../../domain/events'
import { Timestamp, Integer } from '../../http/schemas'

const filter = (what: string, example: string) =>
  t.Optional(t.String({ description: `Filter by ${what}: IS:value or IS_ANY_OF:value1,value2`, examples: [example] }))
const day = (what: string) =>
  t.Optional(t.String({ description: `${what} (inclusive, UTC day): IS:yyyy-MM-dd`, examples: ['IS:2026-01-31'] }))

export const EventSearchQuery = t.Object(
  {
    query: t.Optional(
      t.String({ description: "Case-insensitive substring of the event's data, preData or tags (as JSON text)" }),
    ),
    feature: filter('flag name', 'IS:new-checkout'),
    project: filter('project id', 'IS:default'),
    type: filter('event type', 'IS_ANY_OF:feature-created,feature-archived'),
    createdBy: filter('creator name or numeric user id', 'IS:ci-pipeline'),
    environment: filter('environment', 'IS:production'),
    id: filter('event id', 'IS:1'),
    createdAtFrom: day('First day'),
    createdAtTo: day('Last day'),
    from: day('First day (Unleash 8 name of createdAtFrom)'),
    to: day('Last day (Unleash 8 name of createdAtTo)'),
    offset: t.Optional(t.String({ description: 'Number of matches to skip (default 0)', examples: ['0'] })),
    limit: t.Optional(t.String({ description: 'Page size, 1 to 1000 (default 50)', examples: ['50'] })),
  },
  { description: 'Event search parameters; all are optional and ANDed' },
)

const TagSchema = t.Object(
  { type: t.String({ description: 'Tag type' }), value: t.String({ description: 'Tag value' }) },
  { description: 'A tag of the flag when the event happened' },
)

export const EventSchema = t.Object(
  {
    id: Integer({ minimum: 1, description: 'Increasing event id' }),
    createdAt: Timestamp('When it happened (RFC 3339, UTC)'),
    // Listed for readers; the answer is made by the search worker and not checked against it.
    type: t.String({ description: 'Event type', enum: [...EVENT_TYPES] }),
    createdBy: t.String({ description: 'Name of the token that made the change' }),
    createdByUserId: t.Union([t.Number(), t.Null()], { description: 'User id of that token' }),
    environment: t.Union([t.String(), t.Null()], { description: 'Related environment' }),
    project: t.Union([t.String(), t.Null()], { description: 'Related project' }),
    featureName: t.Union([t.String(), t.Null()], { description: 'Related flag' }),
    data: t.Union([t.Record(t.String(), t.Unknown()), t.Null()], { description: 'State after the change' }),
    preData: t.Union([t.Record(t.String(), t.Unknown()), t.Null()], { description: 'State before the change' }),
    tags: t.Array(TagSchema, { description: "The flag's tags at that time" }),
  },
  { description: 'An event of the audit log: one change, who made it and when' },
)

export const EventPage = t.Object(
  {
    events: t.Array(EventSchema, { description: 'One page of matches, newest first' }),
    total: Integer({ description: 'Number of all matches' }),
  },
  { description: 'A page of events' },
)

export const EventList = t.Object(
  {
    version: Integer({ description: 'Schema version, 1' }),
    events: t.Array(EventSchema, { description: 'The events, newest first' }),
    totalEvents: Integer({ description: 'Number of all events that match' }),
  },
  { description: 'The most recent events (deprecated list)' },
)

export const FlagEventList = t.Object(
  {
    version: Integer({ description: 'Schema version, 1' }),
    toggleName: t.String({ description: 'The flag asked for' }),
    events: t.Array(EventSchema, { description: 'Its events, newest first' }),
    totalEvents: Integer({ description: 'Number of all its events' }),
  },
  { description: 'The most recent events of one flag (deprecated list)' },
)

/** The named schemas of the event routes, as they refer to them and OpenAPI lists them. */
export const eventModels = {
  eventSearchQuerySchema: EventSearchQuery,
  eventSearchResponseSchema: EventPage,
  eventsSchema: EventList,
  featureEventsSchema: FlagEventList,
}

/** Schemas of the client API's streaming and delta reads: the delta events of client-specification 19 and 20. */
import { t } from 'elysia'
import { Integer } from '../../http/schemas'
import { ClientFeature, ClientFeaturesQuery, Constraint } from '../client/client.model'

const EventId = Integer({
  description: 'The revision (store commit) of the change; grows with every commit, and survives a restart',
})
const Segment = t.Object(
  {
    id: Integer({ description: 'Segment id, as strategies name it' }),
    name: t.String({ description: 'Segment name' }),
    constraints: t.Array(Constraint, { description: 'All must hold' }),
  },
  { description: 'A segment' },
)

const DeltaEvent = t.Union(
  [
    t.Object(
      {
        type: t.Literal('hydration', { description: 'Everything the scope serves; replaces the copy' }),
        eventId: EventId,
        features: t.Array(ClientFeature, { description: 'Every flag in scope, by name' }),
        segments: t.Array(Segment, {
          description: 'Every segment the scope may use (global ones and those of its projects), by id',
        }),
      },
      { description: 'A hydration' },
    ),
    t.Object(
      {
        type: t.Literal('feature-updated', { description: 'A flag was made, changed, revived or came into scope' }),
        eventId: EventId,
        feature: ClientFeature,
      },
      { description: 'A flag to store' },
    ),
    t.Object(
      {
        type: t.Literal('feature-removed', { description: 'A flag was archived, deleted or left the scope' }),
        eventId: EventId,
        featureName: t.String({ description: 'The flag' }),
        project: t.String({ description: 'Its project before the change' }),
      },
      { description: 'A flag to drop' },
    ),
    t.Object(
      {
        type: t.Literal('segment-updated', { description: 'A segment was made or changed' }),
        eventId: EventId,
        segment: Segment,
      },
      { description: 'A segment to store' },
    ),
    t.Object(
      {
        type: t.Literal('segment-removed', { description: 'A segment was deleted or left the scope' }),
        eventId: EventId,
        segmentId: Integer({ description: 'The segment' }),
      },
      { description: 'A segment to drop' },
    ),
  ],
  { description: 'One delta event' },
)

export const ClientDelta = t.Object(
  {
    events: t.Array(DeltaEvent, {
      description: 'A hydration, or the changes since the revision the client named, oldest first',
    }),
  },
  {
    description:
      "Changes to the token scope's flags, with the revision as ETag; 304 without a body when nothing changed since If-None-Match",
  },
)

export const streamingModels = {
  clientDeltaSchema: ClientDelta,
  clientStreamQuerySchema: ClientFeaturesQuery,
}

import { t } from 'elysia'
import { authErrors } from '../../http/schemas'
import { controllerBase, jsonResponse } from '../../http/plugins'
import { parseEventQuery } from './event-query'
import type { EventsService } from './events.service'
import type { Authorization } from '../tokens/auth'
import { eventModels } from './events.model'

/** How many events the deprecated list answers, as Unleash's getEvents: the newest 100, or the newest 50 of one project. */
const LEGACY_LIMIT = 100
const LEGACY_PROJECT_LIMIT = 50

export function eventsController(events: EventsService, auth: Authorization) {
  return controllerBase(auth, eventModels).get('/api/admin/events', async ({ query, caller }) => {
    const project = query.project
    const page = await events.search(
      project === undefined ? { offset: 0, limit: LEGACY_LIMIT } : { project: [project], offset: 0, limit: LEGACY_PROJECT_LIMIT },
      caller,
    )
    const { events: found, total } = JSON.parse(new TextDecoder().decode(page.body)) as { events: unknown[]; total: number }
    return jsonResponse(JSON.stringify({ version: 1, events: found, totalEvents: total }))
  }, {
    auth: 'ADMIN',
    query: t.Object({ project: t.Optional(t.String({ minLength: 1, maxLength: 100, description: 'Only the events of this project' })) }),
    response: { 200: 'eventsSchema', ...authErrors(400) },
    detail: {
      operationId: 'getEvents',
      summary: 'Get the most recent events, or those of a project (deprecated)',
      tags: ['Events'],
      deprecated: true,
      description:
        `Deprecated, as in Unleash: use searchEvents. The newest ${LEGACY_LIMIT} events, or with project the newest ${LEGACY_PROJECT_LIMIT} of that project ` +
        '(an unknown project lists none), newest first; totalEvents counts all that match. Needs the ADMIN permission, as in Unleash.',
    },
  }).get('/api/admin/search/events', async ({ query, caller }) => {
    // The worker hands back the whole answer as bytes; they go out as they are (see search/search-engine.ts pageJson).
    const page = await events.search(parseEventQuery(query), caller)
    return jsonResponse(page.body)
  }, {
    auth: 'NONE',
    query: 'eventSearchQuerySchema',
    response: { 200: 'eventSearchResponseSchema', ...authErrors(400) },
    detail: {
      operationId: 'searchEvents',
      summary: 'Search for events',
      tags: ['Events'],
      description:
        'Filters are ANDed. feature, project, type, environment, id and createdBy take IS:value or IS_ANY_OF:a,b (createdBy matches the token name or ' +
        'its user id); createdAtFrom/createdAtTo (or from/to) take IS:yyyy-MM-dd, inclusive UTC days. query is a case-insensitive substring of the ' +
        'data, preData and tags as JSON. Newest first; total counts all matches. A filter is at most 2,000 characters and lists at most 100 values. ' +
        'A malformed value, a repeated parameter or limit outside 1–1000 is a 400 (Unleash would fall back silently).',
    },
  })
}

import { authErrors } from '../../http/schemas'
import { controllerBase, jsonResponse } from '../../http/plugins'
import { parseEventQuery } from './event-query'
import type { EventsService } from './events.service'
import type { Authorization } from '../tokens/auth'
import { eventModels } from './events.model'

export function eventsController(events: EventsService, auth: Authorization) {
  return controllerBase(auth, eventModels).get('/api/admin/search/events', async ({ query, caller }) => {
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

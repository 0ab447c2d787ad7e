import { t } from 'elysia'
import { authErrors } from '../../http/schemas'
import { controllerBase, lateResponse } from '../../http/plugins'
import { parseEventQuery } from './event-query'
import type { EventsService } from './events.service'
import type { Authorization, OutOfScopeAnswer } from '../tokens/auth'
import type { Caller } from '../tokens/permissions'
import type { EventQuery } from './event-query'
import { eventModels } from './events.model'

/**
 * How many events the deprecated lists answer, as Unleash's getEvents and getEventsForToggle: the
 * newest 100, or the newest 50 of one project or of one flag.
 */
const LEGACY_LIMIT = 100
const LEGACY_PROJECT_LIMIT = 50
const LEGACY_FLAG_LIMIT = 50

export function eventsController(events: EventsService, auth: Authorization) {
  /** A page of the search, in the deprecated lists' shape: `totalEvents` rather than `total`. */
  async function legacyList(query: EventQuery, caller: Caller): Promise<{ events: unknown[]; totalEvents: number }> {
    const page = await events.search(query, caller)
    const { events: found, total } = JSON.parse(new TextDecoder().decode(page.body)) as {
      events: unknown[]
      total: number
    }
    return { events: found, totalEvents: total }
  }

  /**
   * The events that name the flag and that the caller may see, whether the flag exists, was deleted
   * or never was (Unleash lists the events of a deleted flag, and none for an unknown one). A flag
   * of a project the token cannot see gets this same answer from the auth macro: the search leaves
   * out every event of a project the token cannot see, so its own events are not in it.
   */
  async function flagEvents(featureName: string, caller: Caller) {
    const list = await legacyList({ feature: [featureName], offset: 0, limit: LEGACY_FLAG_LIMIT }, caller)
    return lateResponse(JSON.stringify({ version: 1, toggleName: featureName, ...list }))
  }

  const flagEventsOutOfScope: OutOfScopeAnswer = (params, caller) => flagEvents(params.featureName!, caller)

  return controllerBase(auth, eventModels)
    .get(
      '/api/admin/events',
      async ({ query, caller }) => {
        const project = query.project
        const list = await legacyList(
          project === undefined
            ? { offset: 0, limit: LEGACY_LIMIT }
            : { project: [project], offset: 0, limit: LEGACY_PROJECT_LIMIT },
          caller,
        )
        return lateResponse(JSON.stringify({ version: 1, ...list }))
      },
      {
        auth: 'ADMIN',
        query: t.Object({
          project: t.Optional(
            t.String({ minLength: 1, maxLength: 100, description: 'Only the events of this project' }),
          ),
        }),
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
      },
    )
    .get('/api/admin/events/:featureName', ({ params, caller }) => flagEvents(params.featureName, caller), {
      auth: { permission: 'NONE', outOfScope: flagEventsOutOfScope },
      params: t.Object({ featureName: t.String({ minLength: 1, maxLength: 1000, description: 'Flag name' }) }),
      response: { 200: 'featureEventsSchema', ...authErrors(400) },
      detail: {
        operationId: 'getEventsForToggle',
        summary: 'Get the most recent events of a flag (deprecated)',
        tags: ['Events'],
        deprecated: true,
        description:
          `Deprecated, as in Unleash: use searchEvents with feature=IS:name. The newest ${LEGACY_FLAG_LIMIT} events that name the flag, newest first; ` +
          'totalEvents counts them all. The events of a deleted flag are listed; an unknown flag lists none (200, not 404), and so does a flag of a ' +
          'project the token cannot see. Any token may read it, as in Unleash.',
      },
    })
    .get(
      '/api/admin/search/events',
      async ({ query, caller, request }) => {
        // The worker hands back the whole answer as bytes; they go out as they are (see search/search-engine.ts pageJson).
        const page = await events.search(parseEventQuery(query), caller, request)
        return lateResponse(page.body)
      },
      {
        auth: 'NONE',
        query: 'eventSearchQuerySchema',
        response: { 200: 'eventSearchResponseSchema', ...authErrors(400, 503) },
        detail: {
          operationId: 'searchEvents',
          summary: 'Search for events',
          tags: ['Events'],
          description:
            'Filters are ANDed. feature, project, type, environment, id and createdBy take IS:value or IS_ANY_OF:a,b (createdBy matches the token name or ' +
            'its user id); createdAtFrom/createdAtTo (or from/to) take IS:yyyy-MM-dd, inclusive UTC days. query is a case-insensitive substring of the ' +
            'data, preData and tags as JSON. Newest first; total counts all matches. A filter is at most 2,000 characters and lists at most 100 values. ' +
            'A malformed value, a repeated parameter or limit outside 1–1000 is a 400 (Unleash would fall back silently). Only events about what ' +
            'the token may read otherwise are searched, counted and matched by text: a token limited to some projects sees their events only, ' +
            "a token that may not list API tokens sees no api-token events. One search's work is bounded: a search still running when the " +
            'server gives up on the request (10 s; 120 s while the search files are rebuilt) is stopped (503), and one that would read more than ' +
            '250,000 events back from the log to check them is a 400 on query.',
        },
      },
    )
}

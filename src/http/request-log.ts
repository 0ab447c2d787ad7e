/**
 * One log line and one metrics observation per request (time, method, route pattern, status,
 * duration, request id, token name; never a secret), and an `x-request-id` on every answer: the client's own when it sent a
 * sensible one, else a new one.
 */
import { Elysia } from 'elysia'
import type { Logger } from '../log'
import type { Metrics } from './metrics'

interface RequestNotes {
  id: string
  started: number
  tokenName?: string
  status?: number
}

const notes = new WeakMap<Request, RequestNotes>()

/** Request ids we echo: short, and nothing that could break a log line or a header. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Records which token made the request (called by the auth macro). */
export function noteTokenName(request: Request, tokenName: string) {
  const note = notes.get(request)
  if (note) note.tokenName = tokenName
}

/** Records the status of an error answer (called by the error handler, whose Response the log does not see). */
export function noteStatus(request: Request, status: number) {
  const note = notes.get(request)
  if (note) note.status = status
}

export function requestIdOf(request: Request): string | undefined {
  return notes.get(request)?.id
}

export function requestLogging(log: Logger, metrics: Metrics) {
  return new Elysia({ name: 'request-logging' })
    .onRequest(({ request, set }) => {
      const sent = request.headers.get('x-request-id')
      const id = sent !== null && CLIENT_REQUEST_ID.test(sent) ? sent : crypto.randomUUID()
      notes.set(request, { id, started: performance.now() })
      set.headers['x-request-id'] = id
    })
    .onAfterResponse({ as: 'global' }, ({ request, route, set, response }) => {
      const note = notes.get(request)
      if (!note) return
      const status = response instanceof Response ? response.status : (note.status ?? (typeof set.status === 'number' ? set.status : 200))
      const durationMs = performance.now() - note.started
      metrics.observeRequest(request.method, route ?? null, status, durationMs / 1000)
      if (!log.enabled('info')) return
      log.info('request', {
        method: request.method,
        route: route ?? null,
        status,
        durationMs: Math.round(durationMs * 100) / 100,
        requestId: note.id,
        tokenName: note.tokenName ?? null,
      })
    })
}

/**
 * One log line and one metrics observation per request (time, method, route pattern, status,
 * duration, request id, token name, client address; never a secret), and an `x-request-id` on
 * every answer: the client's own when it sent a sensible one, else a new one.
 */
import { Elysia } from 'elysia'
import type { Logger } from '../log'
import type { Metrics } from './metrics'

interface RequestNotes {
  id: string
  started: number
  clientAddress: string | null
  /** How to find the client's address, for a route that needs it while the request is open. */
  addressOf: ClientAddress
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

/** The client's address as the log names it (see clientAddress), for routes that use it (the frontend API's context); null when unknown. */
export function callerAddress(request: Request): string | null {
  const note = notes.get(request)
  if (!note) return null
  return note.clientAddress ?? note.addressOf(request)
}

export function requestIdOf(request: Request): string | undefined {
  return notes.get(request)?.id
}

/** What a proxy may put in X-Forwarded-For that we log: an IPv4 or IPv6 address, nothing longer. */
const FORWARDED_ADDRESS = /^[0-9A-Fa-f.:]{2,45}$/

/**
 * Where a request came from. The socket's peer address is known only to the server (server.ts passes
 * `server.requestIP`; requests made with `app.handle` have none). Behind a reverse proxy that peer
 * is the proxy, so with `TRUST_PROXY` the address is the last `X-Forwarded-For` entry: the one the
 * proxy in front of us added, which a client cannot forge the way it can the entries before it.
 */
export type ClientAddress = (request: Request) => string | null

export function clientAddress(
  socketAddress: ((request: Request) => string | undefined) | undefined,
  trustProxy: boolean,
): ClientAddress {
  return request => {
    if (trustProxy) {
      const forwarded = request.headers.get('x-forwarded-for')
      const last = forwarded?.slice(forwarded.lastIndexOf(',') + 1).trim()
      if (last !== undefined && FORWARDED_ADDRESS.test(last)) return last
    }
    return socketAddress?.(request) ?? null
  }
}

export function requestLogging(log: Logger, metrics: Metrics, addressOf: ClientAddress = () => null) {
  return new Elysia({ name: 'request-logging' })
    .onRequest(({ request, set }) => {
      const sent = request.headers.get('x-request-id')
      const id = sent !== null && CLIENT_REQUEST_ID.test(sent) ? sent : crypto.randomUUID()
      // Read now: once the answer is sent, the socket may be gone.
      notes.set(request, {
        id,
        started: performance.now(),
        clientAddress: log.enabled('info') ? addressOf(request) : null,
        addressOf,
      })
      set.headers['x-request-id'] = id
    })
    .onAfterResponse({ as: 'global' }, ({ request, route, set, response }) => {
      const note = notes.get(request)
      if (!note) return
      const status =
        response instanceof Response
          ? response.status
          : (note.status ?? (typeof set.status === 'number' ? set.status : 200))
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
        clientAddress: note.clientAddress,
      })
    })
}

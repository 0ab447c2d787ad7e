/**
 * What changed elsewhere, as it happens: one EventSource on the server's stream
 * (`GET /api/admin/live`: `changed` events `{type, project, featureName, environment}`, and
 * `metrics`), shared by every page that listens and open only while one does. The browser
 * reconnects by itself after a dropped connection, naming the last event id it had (Last-Event-ID):
 * the server first sends the changes made meanwhile, or `reload` when there were too many, and
 * listeners then get `resync` — anything may have changed. When the stream is refused (401, 403,
 * 404: a server without it) listeners get `resync`, and again every 10 s (polling), with a new try
 * of the stream every minute, which resumes from the last event id seen (`?lastEventId=`).
 */
import { useEffect, useRef } from 'preact/hooks'
import { BASE } from './api'

export type LiveMessage =
  | { kind: 'changed'; type: string; project: string | null; featureName: string | null; environment: string | null }
  | { kind: 'metrics'; data: unknown }
  | { kind: 'resync' }

export const POLL_MS = 10_000
const RETRY_POLLS = 6

const listeners = new Set<(message: LiveMessage) => void>()
let source: EventSource | null = null
let poller: ReturnType<typeof setInterval> | null = null
let dropped = false
/** The id of the last message that carried one (`changed`, `ready`, `reload`): where a new stream resumes. */
let lastEventId: string | null = null

const send = (message: LiveMessage) => {
  for (const listener of listeners) listener(message)
}

function connect() {
  const resume = lastEventId === null ? '' : `?lastEventId=${encodeURIComponent(lastEventId)}`
  const stream = new EventSource(`${BASE}/api/admin/live${resume}`, { withCredentials: true })
  source = stream
  stream.addEventListener('open', () => {
    stopPolling()
    // Dropped before it said where it stood: nothing to resume from.
    if (dropped && lastEventId === null) send({ kind: 'resync' })
    dropped = false
  })
  // Where the stream stands; after a reconnect, once the changes missed meanwhile have come.
  stream.addEventListener('ready', event => void (lastEventId = (event as MessageEvent).lastEventId))
  stream.addEventListener('reload', event => {
    lastEventId = (event as MessageEvent).lastEventId
    send({ kind: 'resync' })
  })
  stream.addEventListener('changed', event => {
    lastEventId = (event as MessageEvent).lastEventId
    try {
      const data = JSON.parse((event as MessageEvent<string>).data)
      send({
        kind: 'changed',
        type: String(data.type ?? ''),
        project: data.project ?? null,
        featureName: data.featureName ?? null,
        environment: data.environment ?? null,
      })
    } catch {
      send({ kind: 'resync' })
    }
  })
  stream.addEventListener('metrics', event => {
    let data: unknown = null
    try {
      data = JSON.parse((event as MessageEvent<string>).data)
    } catch {}
    send({ kind: 'metrics', data })
  })
  stream.addEventListener('error', () => {
    dropped = true
    // CONNECTING: the browser tries again by itself. CLOSED: refused; poll instead.
    if (stream.readyState === EventSource.CLOSED) {
      source = null
      startPolling()
    }
  })
}

function startPolling() {
  if (poller || listeners.size === 0) return
  let polls = 0
  poller = setInterval(() => {
    send({ kind: 'resync' })
    if (++polls % RETRY_POLLS === 0 && !source) connect()
  }, POLL_MS)
}

function stopPolling() {
  if (poller) clearInterval(poller)
  poller = null
}

function subscribe(listener: (message: LiveMessage) => void): () => void {
  listeners.add(listener)
  if (listeners.size === 1 && !source && !poller) connect()
  return () => {
    listeners.delete(listener)
    if (listeners.size > 0) return
    source?.close()
    source = null
    stopPolling()
    dropped = false
  }
}

/** Calls `listener` with every live message while the component is mounted. */
export function useLive(listener: (message: LiveMessage) => void) {
  const latest = useRef(listener)
  latest.current = listener
  useEffect(() => subscribe(message => latest.current(message)), [])
}

/** Whether a message may change what a page about `project` (and `featureName`) shows. */
export function touches(message: LiveMessage, where: { project?: string; featureName?: string }): boolean {
  if (message.kind === 'resync') return true
  if (message.kind !== 'changed') return false
  if (where.project && message.project && message.project !== where.project) return false
  if (where.featureName && message.featureName && message.featureName !== where.featureName) return false
  return true
}

/**
 * Calls `refresh` when something touching `where` changed, at most once per `ms`: a bulk change
 * of a hundred flags is a hundred messages, and one read again.
 */
export function useLiveRefresh(where: { project?: string; featureName?: string }, refresh: () => void, ms = 250) {
  const latest = useRef(refresh)
  latest.current = refresh
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null)
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), [])
  useLive(message => {
    if (!touches(message, where) || timer.current) return
    timer.current = setTimeout(() => {
      timer.current = null
      latest.current()
    }, ms)
  })
}

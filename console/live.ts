/**
 * What changed elsewhere, as it happens: one EventSource on the server's stream
 * (`GET /api/admin/live`: `changed` events `{type, project, featureName, environment}`, and
 * `metrics`), shared by every page that listens and open only while one does. The browser
 * reconnects by itself after a dropped connection; then, and when the stream is refused (401, 403,
 * 404: a server without it), listeners get `resync` — anything may have changed — and, while
 * refused, again every 10 s (polling), with a new try of the stream every minute.
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

const send = (message: LiveMessage) => {
  for (const listener of listeners) listener(message)
}

function connect() {
  const stream = new EventSource(`${BASE}/api/admin/live`, { withCredentials: true })
  source = stream
  stream.addEventListener('open', () => {
    stopPolling()
    if (dropped) send({ kind: 'resync' })
    dropped = false
  })
  stream.addEventListener('changed', event => {
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

/**
 * One HTTP request of a delivery, made safely: only http and https; the target's addresses checked
 * before connecting (link-local and cloud-metadata addresses always refused, loopback and private
 * ranges only when allowed); redirects followed only on the same origin, a few times; a deadline;
 * the answer read up to a bound and dropped.
 */
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'

export interface SendOptions {
  /** `ADDONS_ALLOW_PRIVATE_TARGETS`: loopback and private ranges may be targets (self-hosting). */
  allowPrivate: boolean
  timeoutMs: number
}

export interface Sent {
  statusCode: number | null
  error: string | null
  durationMs: number
  /** Seconds the receiver asked to wait (Retry-After), or null. */
  retryAfter: number | null
  /** Whether trying again may help: network errors, timeouts, 5xx and 429. */
  retryable: boolean
}

/** Bytes of an answer read before it is dropped. */
export const ANSWER_BYTES = 64 * 1024
const MAX_REDIRECTS = 3

function ipv4Parts(address: string): number[] | null {
  const parts = address.split('.').map(Number)
  return parts.length === 4 && parts.every(n => Number.isInteger(n) && n >= 0 && n <= 255) ? parts : null
}

/** Why `address` may not be a target, or null. */
export function refusedAddress(address: string, allowPrivate: boolean): string | null {
  const lower = address.toLowerCase().replace(/^\[|\]$/g, '')
  const mapped = lower.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/)
  const v4 = ipv4Parts(mapped ? mapped[1] : lower)
  if (v4) {
    const [a, b] = v4
    if (a === 169 && b === 254) return 'a link-local or cloud metadata address (169.254.0.0/16)'
    if (a === 0) return 'an unspecified address (0.0.0.0/8)'
    if (a >= 224) return 'a multicast or reserved address'
    const isPrivate =
      a === 127 ||
      a === 10 ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127)
    if (isPrivate && !allowPrivate) return 'a loopback or private address (ADDONS_ALLOW_PRIVATE_TARGETS is off)'
    return null
  }
  if (isIP(lower) !== 6) return null
  const expanded = lower.startsWith('::') ? `0${lower}` : lower
  if (lower === 'fd00:ec2::254') return 'the cloud metadata address fd00:ec2::254'
  if (/^fe[89ab]/.test(expanded)) return 'a link-local address (fe80::/10)'
  if (lower === '::') return 'the unspecified address ::'
  if (/^ff/.test(expanded)) return 'a multicast address'
  const isPrivate = lower === '::1' || /^f[cd]/.test(expanded)
  if (isPrivate && !allowPrivate) return 'a loopback or private address (ADDONS_ALLOW_PRIVATE_TARGETS is off)'
  return null
}

/** Throws with why the URL may not be a target, having resolved its host. */
export async function checkTarget(url: URL, allowPrivate: boolean): Promise<void> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`refused: ${url.protocol} is not http or https`)
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map(entry => entry.address)
  for (const address of addresses) {
    const why = refusedAddress(address, allowPrivate)
    if (why) throw new Error(`refused: ${url.hostname} is ${why}`)
  }
}

async function drain(response: Response): Promise<void> {
  const reader = response.body?.getReader()
  if (!reader) return
  let read = 0
  while (read < ANSWER_BYTES) {
    const { done, value } = await reader.read()
    if (done) return
    read += value.byteLength
  }
  await reader.cancel().catch(() => {})
}

function retryAfterOf(response: Response): number | null {
  const value = response.headers.get('retry-after')
  if (!value) return null
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds)
  const date = Date.parse(value)
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000)
}

/** POSTs `body` to `target`; never throws. */
export async function send(
  target: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<Sent> {
  const started = performance.now()
  const took = () => Math.round(performance.now() - started)
  const signal = AbortSignal.timeout(options.timeoutMs)
  let url: URL
  try {
    url = new URL(target)
  } catch {
    return { statusCode: null, error: 'not a URL', durationMs: 0, retryAfter: null, retryable: false }
  }
  try {
    for (let redirects = 0; ; redirects++) {
      try {
        await checkTarget(url, options.allowPrivate)
      } catch (error) {
        const message = (error as Error).message
        return {
          statusCode: null,
          error: message,
          durationMs: took(),
          retryAfter: null,
          retryable: !message.startsWith('refused'),
        }
      }
      const response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal })
      await drain(response)
      const status = response.status
      if (status >= 300 && status < 400 && response.headers.get('location')) {
        const next = new URL(response.headers.get('location')!, url)
        if (next.origin !== url.origin || redirects >= MAX_REDIRECTS || (status !== 307 && status !== 308))
          return {
            statusCode: status,
            error: `redirect to ${next.origin} not followed`,
            durationMs: took(),
            retryAfter: null,
            retryable: false,
          }
        url = next
        continue
      }
      const ok = status >= 200 && status < 300
      return {
        statusCode: status,
        error: ok ? null : `HTTP ${status}`,
        durationMs: took(),
        retryAfter: retryAfterOf(response),
        retryable: status >= 500 || status === 429,
      }
    }
  } catch (error) {
    const timedOut = signal.aborted
    const message = timedOut ? `no answer within ${options.timeoutMs} ms` : ((error as Error).message ?? String(error))
    return { statusCode: null, error: message.slice(0, 500), durationMs: took(), retryAfter: null, retryable: true }
  }
}

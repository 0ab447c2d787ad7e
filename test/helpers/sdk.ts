/** The official SDKs a test drives. */
import { PATIENCE_MS } from './processes'

/**
 * Stops an `unleash-client` SDK for good. Its destroy() removes its repository's listeners, but a
 * request already in flight goes on; when it then fails (the test's server has stopped), the
 * repository re-emits the error with no listener, which throws it into whatever test runs next
 * (seen as ECONNREFUSED failing an unrelated test). A listener kept after destroy() takes it.
 */
export function destroySdk(client: { destroy(): void } | undefined): void {
  if (!client) return
  client.destroy()
  const repository = (client as unknown as { repository?: { on?: (event: string, listener: () => void) => void } })
    .repository
  repository?.on?.('error', () => {})
}

/** Resolves when `emitter` (an SDK client) emits `event`, or fails after `ms`. */
export function eventOf(
  emitter: { once(event: string, listener: () => void): unknown },
  event: string,
  ms = PATIENCE_MS,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no '${event}' within ${ms} ms`)), ms)
    emitter.once(event, () => {
      clearTimeout(timer)
      resolve()
    })
  })
}

/**
 * A real receiver for integration tests: a Bun server on a free loopback port that records every
 * request and answers as the test says (fail the first N, a status, a delay), and checks signatures
 * the way docs/integrations.md tells receivers to, with Node's crypto.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

export interface Received {
  path: string
  headers: Record<string, string>
  body: string
}

export interface Receiver {
  url: string
  received: Received[]
  /** What the next request is answered with; by default 200. */
  answer: (request: Received, index: number) => Response | Promise<Response>
  stop(): void
}

export function startReceiver(port = 0): Receiver {
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: () => new Response('ok'),
    stop: () => server.stop(true),
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    async fetch(request) {
      const received = {
        path: new URL(request.url).pathname,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
      }
      const index = receiver.received.push(received) - 1
      return receiver.answer(received, index)
    },
  })
  receiver.url = `http://127.0.0.1:${server.port}/hook`
  return receiver
}

/** Whether `header` (X-Flagstore-Signature) signs `body` with `secret`, made within `toleranceSeconds` of now. */
export function verifySignature(
  secret: string,
  header: string | undefined,
  body: string,
  toleranceSeconds = 300,
): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '')
  if (!match) return false
  const [, t, v1] = match
  if (Math.abs(Date.now() / 1000 - Number(t)) > toleranceSeconds) return false
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest()
  return timingSafeEqual(expected, Buffer.from(v1, 'hex'))
}

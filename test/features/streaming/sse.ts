/**
 * A Server-Sent Events reader for tests, and an SDK's copy of a scope kept from delta events the
 * way unleash-client's repository applies them (hydration replaces, the others patch by name / id).
 */
export interface SseMessage {
  event: string
  id: string | null
  data: string
}

export class SseReader {
  readonly messages: SseMessage[] = []
  comments = 0
  ended = false
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>
  private readonly done: Promise<void>
  private waiters: (() => void)[] = []

  constructor(readonly response: Response) {
    this.reader = response.body!.getReader()
    this.done = this.loop()
  }

  private async loop(): Promise<void> {
    const decoder = new TextDecoder()
    let buffer = ''
    try {
      for (;;) {
        const { value, done } = await this.reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          this.parse(block)
        }
        this.wake()
      }
    } catch {
      // The reader was cancelled.
    }
    this.ended = true
    this.wake()
  }

  private parse(block: string): void {
    let event = 'message'
    let id: string | null = null
    const data: string[] = []
    let comment = true
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue
      comment = false
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
      if (field === 'event') event = value
      else if (field === 'id') id = value
      else if (field === 'data') data.push(value)
    }
    if (comment) this.comments++
    else this.messages.push({ event, id, data: data.join('\n') })
  }

  private wake(): void {
    const waiters = this.waiters
    this.waiters = []
    for (const wake of waiters) wake()
  }

  /** Resolves once `condition` holds (checked after each chunk), or rejects after `ms`. */
  until(condition: () => boolean, ms = 5000): Promise<void> {
    if (condition()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`condition not met within ${ms} ms; messages: ${JSON.stringify(this.messages.slice(-3))}`)),
        ms,
      )
      const check = () => {
        if (condition()) {
          clearTimeout(timer)
          resolve()
        } else this.waiters.push(check)
      }
      this.waiters.push(check)
    })
  }

  /** Gives the event loop a few turns so that what the server sends for a write already answered is read. */
  async settle(): Promise<void> {
    // Streams are written to just after the write is answered (setImmediate), then read.
    await new Promise(resolve => setImmediate(resolve))
    for (let turn = 0; turn < 3; turn++) await new Promise(resolve => setTimeout(resolve, 0))
  }

  async cancel(): Promise<void> {
    await this.reader.cancel().catch(() => {})
    await this.done
  }
}

export interface Copy {
  features: Map<string, any>
  segments: Map<number, any>
}

export const emptyCopy = (): Copy => ({ features: new Map(), segments: new Map() })

/** Applies `{ events }` (the data of a stream message or a delta answer) to `copy`; returns the event types seen. */
export function applyDelta(copy: Copy, body: { events: any[] }): string[] {
  const types: string[] = []
  for (const event of body.events) {
    types.push(event.type)
    switch (event.type) {
      case 'hydration':
        copy.features = new Map(event.features.map((feature: any) => [feature.name, feature]))
        copy.segments = new Map(event.segments.map((segment: any) => [segment.id, segment]))
        break
      case 'feature-updated':
        copy.features.set(event.feature.name, event.feature)
        break
      case 'feature-removed':
        copy.features.delete(event.featureName)
        break
      case 'segment-updated':
        copy.segments.set(event.segment.id, event.segment)
        break
      case 'segment-removed':
        copy.segments.delete(event.segmentId)
        break
      default:
        throw new Error(`unknown delta event ${JSON.stringify(event)}`)
    }
  }
  return types
}

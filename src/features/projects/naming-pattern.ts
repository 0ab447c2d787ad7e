/**
 * Project naming patterns (contract §5): checked when saved, matched anchored at both ends, and
 * never able to hang the server. Matching runs in a worker with a time bound; a pattern that
 * exceeds it on probe inputs is refused when saved.
 */
import { ValidationError } from '../../errors'
import type { FeatureNaming } from '../../storage/records'
import type { PatternMatchReply, PatternMatchRequest } from '../../workers/pattern-match.messages'

export const PATTERN_MAX_LENGTH = 200
const MATCH_TIMEOUT_MS = 100
const CACHE_LIMIT = 10_000

export class PatternTimeoutError extends Error {}

interface Pending {
  request: PatternMatchRequest
  resolve: (matches: boolean) => void
  reject: (error: Error) => void
  timer: ReturnType<typeof setTimeout>
}

export class PatternMatcher {
  private worker: Worker | null = null
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  /** Recent answers: names are checked again and again by validate while people type. */
  private readonly cache = new Map<string, boolean>()

  async matches(pattern: string, input: string): Promise<boolean> {
    const key = `${pattern}\u0000${input}`
    const cached = this.cache.get(key)
    if (cached !== undefined) return cached
    const matches = await new Promise<boolean>((resolve, reject) => {
      const request = { id: this.nextId++, pattern, input }
      this.send({ request, resolve, reject, timer: undefined as unknown as ReturnType<typeof setTimeout> })
    })
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear()
    this.cache.set(key, matches)
    return matches
  }

  close(): void {
    this.worker?.terminate()
    this.worker = null
    for (const pending of this.pending.values()) {
      clearTimeout(pending.timer)
      pending.reject(new Error('pattern matcher closed'))
    }
    this.pending.clear()
  }

  private send(pending: Pending) {
    const worker = this.ensureWorker()
    pending.timer = setTimeout(() => this.timedOut(pending.request.id), MATCH_TIMEOUT_MS)
    this.pending.set(pending.request.id, pending)
    worker.postMessage(pending.request)
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker
    const worker = new Worker(new URL('../../workers/pattern-match.worker.ts', import.meta.url))
    worker.onmessage = (message: MessageEvent<PatternMatchReply>) => {
      const pending = this.pending.get(message.data.id)
      if (!pending) return
      clearTimeout(pending.timer)
      this.pending.delete(message.data.id)
      pending.resolve(message.data.matches)
    }
    // A worker must not keep the process alive on its own.
    ;(worker as unknown as { unref(): void }).unref()
    this.worker = worker
    return worker
  }

  /** The worker is stuck on this match: replace it, fail this match, and resend the others. */
  private timedOut(id: number) {
    const stuck = this.pending.get(id)
    if (!stuck) return
    this.worker?.terminate()
    this.worker = null
    const others = [...this.pending.values()].filter((pending) => pending.request.id !== id)
    this.pending.clear()
    stuck.reject(new PatternTimeoutError(`matching took longer than ${MATCH_TIMEOUT_MS} ms`))
    for (const pending of others) {
      clearTimeout(pending.timer)
      this.send(pending)
    }
  }
}

function invalid(message: string, path: string): never {
  throw new ValidationError(message, [{ message, path }])
}

/** Inputs that make backtracking patterns blow up: long runs of one character and a bad ending. */
function probeInputs(example: string | undefined): string[] {
  const characters = new Set(['a', 'A', '0', '-', '_', '.', ...(example ?? '').slice(0, 20)])
  return [...characters].map((character) => character.repeat(99) + '!')
}

/** Checks a naming pattern before it is saved; returns it normalised. */
export async function checkFeatureNaming(naming: FeatureNaming, matcher: PatternMatcher): Promise<FeatureNaming> {
  const { pattern, example, description } = naming
  if (pattern.length === 0) invalid('featureNaming.pattern must not be empty', '/featureNaming/pattern')
  if (pattern.length > PATTERN_MAX_LENGTH) {
    invalid(`featureNaming.pattern must be at most ${PATTERN_MAX_LENGTH} characters`, '/featureNaming/pattern')
  }
  if (/\s/.test(pattern)) invalid('featureNaming.pattern must not contain whitespace', '/featureNaming/pattern')
  try {
    new RegExp(`^(?:${pattern})$`)
  } catch (error) {
    invalid(`featureNaming.pattern is not a valid regular expression: ${(error as Error).message}`, '/featureNaming/pattern')
  }
  try {
    for (const input of probeInputs(example)) await matcher.matches(pattern, input)
    if (example !== undefined && example !== '' && !(await matcher.matches(pattern, example))) {
      invalid(`featureNaming.example "${example}" does not match the pattern ^${pattern}$`, '/featureNaming/example')
    }
  } catch (error) {
    if (error instanceof PatternTimeoutError) {
      invalid('featureNaming.pattern backtracks catastrophically (it took too long to match a 100-character name); simplify it', '/featureNaming/pattern')
    }
    throw error
  }
  return {
    pattern,
    ...(example !== undefined && example !== '' ? { example } : {}),
    ...(description !== undefined && description !== '' ? { description } : {}),
  }
}

/**
 * Project naming patterns (contract §5): checked when saved, matched anchored at both ends, and
 * never able to hang the server: matching runs in a worker, one match at a time, with a time bound.
 */
import { ValidationError } from '../../errors'
import type { FeatureNaming } from '../../storage/records'
import type { PatternMatchReply, PatternMatchRequest } from '../../workers/pattern-match.messages'
import { startWorker } from '../../workers/spawn'

export const PATTERN_MAX_LENGTH = 200
/** Hard bound on one match, counted from when the worker is ready (starting one takes a while). */
const MATCH_TIMEOUT_MS = 500
/**
 * Honest patterns match a 100-character name in microseconds; catastrophic ones run until the
 * regex engine gives up on its own (JavaScriptCore stops after a few hundred milliseconds and
 * answers "no match") or the bound above ends them. A probe slower than PROBE_SLOW_MS, twice,
 * refuses the pattern when it is saved; a saved pattern whose match takes longer than
 * MATCH_SLOW_MS is remembered as slow and refuses names from then on without running again.
 */
const PROBE_SLOW_MS = 25
const MATCH_SLOW_MS = 100
const CACHE_LIMIT = 10_000

export class PatternTimeoutError extends Error {}

interface Job {
  request: PatternMatchRequest
  resolve: (reply: PatternMatchReply) => void
  reject: (error: Error) => void
}

export class PatternMatcher {
  private worker: Worker | null = null
  private ready = false
  private nextId = 1
  /** One match runs at a time, so that a slow one can mark its pattern before others queue behind it. */
  private readonly queue: Job[] = []
  private running: { job: Job; timer: ReturnType<typeof setTimeout> | undefined } | null = null
  private readonly slow = new Set<string>()
  /** Recent answers: names are checked again and again by validate while people type. */
  private readonly cache = new Map<string, boolean>()

  /** Whether `input` matches `pattern` anchored at both ends; rejects with PatternTimeoutError for a slow pattern. */
  async matches(pattern: string, input: string): Promise<boolean> {
    const key = `${pattern}\u0000${input}`
    const cached = this.cache.get(key)
    if (cached !== undefined) return cached
    const { matches } = await this.run(pattern, input)
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear()
    this.cache.set(key, matches)
    return matches
  }

  close(): void {
    this.worker?.terminate()
    this.worker = null
    if (this.running) clearTimeout(this.running.timer)
    for (const job of [...(this.running ? [this.running.job] : []), ...this.queue]) job.reject(new Error('pattern matcher closed'))
    this.running = null
    this.queue.length = 0
  }

  private run(pattern: string, input: string): Promise<PatternMatchReply> {
    if (this.slow.has(pattern)) return Promise.reject(new PatternTimeoutError('the pattern is too slow to match'))
    return new Promise<PatternMatchReply>((resolve, reject) => {
      this.queue.push({ request: { id: this.nextId++, pattern, input }, resolve, reject })
      this.next()
    })
  }

  private next() {
    if (this.running) return
    let job = this.queue.shift()
    while (job && this.slow.has(job.request.pattern)) {
      job.reject(new PatternTimeoutError('the pattern is too slow to match'))
      job = this.queue.shift()
    }
    if (!job) return
    this.running = { job, timer: undefined }
    const worker = this.ensureWorker()
    if (this.ready) this.startTimer()
    worker.postMessage(job.request)
  }

  private startTimer() {
    if (this.running && this.running.timer === undefined) {
      this.running.timer = setTimeout(() => this.timedOut(), MATCH_TIMEOUT_MS)
    }
  }

  private finish(reply: PatternMatchReply | PatternTimeoutError) {
    const running = this.running
    if (!running) return
    clearTimeout(running.timer)
    this.running = null
    if (reply instanceof PatternTimeoutError || reply.elapsedMs > MATCH_SLOW_MS) this.slow.add(running.job.request.pattern)
    if (reply instanceof PatternTimeoutError) running.job.reject(reply)
    else running.job.resolve(reply)
    this.next()
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker
    const worker = startWorker('pattern-match.worker')
    this.ready = false
    worker.onmessage = (message: MessageEvent<PatternMatchReply | 'ready'>) => {
      if (message.data === 'ready') {
        this.ready = true
        this.startTimer()
      } else if (this.running?.job.request.id === message.data.id) {
        this.finish(message.data)
      }
    }
    this.worker = worker
    return worker
  }

  /** The worker is stuck in a match: replace it and fail that match. */
  private timedOut() {
    this.worker?.terminate()
    this.worker = null
    this.ready = false
    this.finish(new PatternTimeoutError(`matching took longer than ${MATCH_TIMEOUT_MS} ms`))
  }

  /** Whether matching takes too long for any of the inputs. */
  async isSlow(pattern: string, inputs: readonly string[]): Promise<boolean> {
    for (const input of inputs) {
      try {
        // A pause of the worker (a collection, a busy machine) can slow one probe; slow twice is the pattern.
        if ((await this.run(pattern, input)).elapsedMs > PROBE_SLOW_MS && (await this.run(pattern, input)).elapsedMs > PROBE_SLOW_MS) {
          return true
        }
      } catch (error) {
        if (error instanceof PatternTimeoutError) return true
        throw error
      }
    }
    return false
  }
}

function invalid(message: string, path: string): never {
  throw new ValidationError(message, [{ message, path }])
}

/**
 * Inputs that make backtracking patterns blow up: a long run of one character followed by one that
 * does not fit. The characters come from the pattern itself, its example and common name
 * characters; flag names are at most 100 URL-safe characters, so that is what is probed.
 */
function probeInputs(pattern: string, example: string | undefined): string[] {
  const characters = new Set(['a', 'A', '0', '-', '_', '.'])
  for (const character of pattern + (example ?? '')) {
    if (/[A-Za-z0-9\-_.!~*'()]/.test(character)) characters.add(character)
  }
  const inputs: string[] = []
  for (const character of characters) {
    for (const ending of ['!', '~', '\u0000']) inputs.push(character.repeat(99) + ending)
  }
  return inputs
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
    // On its own too: `a)|(b` is only valid once wrapped, and would change meaning there.
    new RegExp(pattern)
    new RegExp(`^(?:${pattern})$`)
  } catch (error) {
    invalid(`featureNaming.pattern is not a valid regular expression: ${(error as Error).message}`, '/featureNaming/pattern')
  }
  if (await matcher.isSlow(pattern, probeInputs(pattern, example))) {
    invalid(
      'featureNaming.pattern backtracks catastrophically (it is very slow to match a 100-character name); simplify it',
      '/featureNaming/pattern',
    )
  }
  if (example !== undefined && example !== '' && !(await matcher.matches(pattern, example))) {
    invalid(`featureNaming.example "${example}" does not match the pattern ^${pattern}$`, '/featureNaming/example')
  }
  return {
    pattern,
    ...(example !== undefined && example !== '' ? { example } : {}),
    ...(description !== undefined && description !== '' ? { description } : {}),
  }
}

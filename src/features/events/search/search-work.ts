/**
 * The bound on one search's work in the worker. Segments decide every query whose needle is well
 * formed from their lists and token streams; what is left is read back from `events.jsonl` (a
 * needle holding half a surrogate pair, checked event by event) or read from the log because no
 * segment holds that part yet (during a rebuild). Both cost time in proportion to the log, and the
 * worker answers one search at a time: so each search reads back at most so many events, and
 * stops when the server has given up on its request, instead of holding the worker (and every
 * search queued behind it) for minutes.
 */

/** Events a search may read back from the log to check them, by default (about a second on the test machine). */
export const READ_BACK_LIMIT = 250_000

export type WorkExceeded = 'read-back' | 'deadline'

/** Thrown out of a search that went past its bound; the worker answers it as a failure of that kind. */
export class SearchWorkExceeded extends Error {
  constructor(
    readonly reason: WorkExceeded,
    message: string,
  ) {
    super(message)
  }
}

/** Reading back this many events between two looks at the clock. */
const CLOCK_EVERY = 1024

export class SearchWork {
  private readBack = 0

  constructor(
    private readonly readBackLimit: number,
    /** When the request is given up (epoch ms, as Date.now()): the worker and the HTTP thread share the clock. */
    private readonly deadline: number,
  ) {}

  /** No limit: for callers without a request behind them. */
  static unbounded(): SearchWork {
    return new SearchWork(Infinity, Infinity)
  }

  /** One event read back from the log to check it. */
  readOne(): void {
    if (++this.readBack > this.readBackLimit) {
      throw new SearchWorkExceeded(
        'read-back',
        `this query would read more than ${this.readBackLimit} events back from the log to check them; narrow it with a filter or a word`,
      )
    }
    if (this.readBack % CLOCK_EVERY === 0) this.checkTime()
  }

  /** Gives up once the request has been. */
  checkTime(): void {
    if (Date.now() > this.deadline)
      throw new SearchWorkExceeded('deadline', 'the search took longer than the request may wait and was stopped')
  }
}

/**
 * Slows down guessing: failed sign-ins are counted per username and per client address. Once a
 * key has `limit` failures (attempts still being verified count too, so a burst sent at once is
 * held back like one sent in a row), further attempts on it are refused with 429 before any
 * password is verified, for 30 seconds, doubling with each failure past the limit up to 15 minutes.
 * A key with no failure for 15 minutes is forgotten; a successful sign-in clears its username's
 * count (not the address's, which may be shared by a guesser). So 100 wrong passwords in a row cost
 * `limit` argon2id verifications, and the rest a map lookup each.
 *
 * Kept in memory: a restart forgets the counts, which costs a guesser a restart of the service per
 * few guesses. At most MAX_KEYS keys are held; the least recently failed are dropped first.
 */
const BLOCK_MIN_MS = 30_000
const BLOCK_MAX_MS = 15 * 60_000
const FORGET_AFTER_MS = 15 * 60_000
const MAX_KEYS = 10_000

interface Entry {
  failures: number
  pending: number
  blockedUntil: number
  lastFailure: number
}

export interface ThrottleLimits {
  /** Failures per username before it is held back. */
  perUser: number
  /** Failures per client address (many people can share one) before it is held back. */
  perAddress: number
}

export const DEFAULT_LIMITS: ThrottleLimits = { perUser: 5, perAddress: 20 }

export class LoginThrottle {
  private readonly entries = new Map<string, Entry>()

  constructor(private readonly limits: ThrottleLimits = DEFAULT_LIMITS) {}

  private keysOf(username: string, address: string | null): [string, number][] {
    const keys: [string, number][] = [[`user:${username.toLowerCase()}`, this.limits.perUser]]
    if (address !== null) keys.push([`address:${address}`, this.limits.perAddress])
    return keys
  }

  private entry(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key)
    if (entry && entry.pending === 0 && now - entry.lastFailure > FORGET_AFTER_MS && now >= entry.blockedUntil) {
      this.entries.delete(key)
      return undefined
    }
    return entry
  }

  /**
   * Reserves an attempt: null when it may go ahead (call `settle` with the outcome), else the
   * seconds to wait.
   */
  begin(username: string, address: string | null, now = Date.now()): number | null {
    let wait = 0
    for (const [key, limit] of this.keysOf(username, address)) {
      const entry = this.entry(key, now)
      if (!entry) continue
      if (entry.blockedUntil > now) wait = Math.max(wait, entry.blockedUntil - now)
      // Under the limit, attempts may run side by side up to it; past it (once the hold is over), one at a time.
      else if (entry.failures + entry.pending >= limit && (entry.failures < limit || entry.pending > 0)) wait = Math.max(wait, 1000)
    }
    if (wait > 0) return Math.ceil(wait / 1000)
    for (const [key] of this.keysOf(username, address)) this.touch(key, now).pending++
    return null
  }

  settle(username: string, address: string | null, succeeded: boolean, now = Date.now()): void {
    for (const [key, limit] of this.keysOf(username, address)) {
      const entry = this.touch(key, now)
      entry.pending = Math.max(0, entry.pending - 1)
      if (succeeded) {
        if (key.startsWith('user:')) this.entries.delete(key)
        continue
      }
      entry.failures++
      entry.lastFailure = now
      if (entry.failures >= limit) entry.blockedUntil = now + Math.min(BLOCK_MIN_MS * 2 ** (entry.failures - limit), BLOCK_MAX_MS)
    }
  }

  private touch(key: string, now: number): Entry {
    let entry = this.entry(key, now)
    if (!entry) {
      if (this.entries.size >= MAX_KEYS) this.entries.delete(this.entries.keys().next().value!)
      entry = { failures: 0, pending: 0, blockedUntil: 0, lastFailure: now }
    } else this.entries.delete(key)
    // Re-inserted, so that the map's order is the order of last use and the oldest goes first.
    this.entries.set(key, entry)
    return entry
  }
}

/**
 * Slows down guessing: failed sign-ins are counted per person and per client address. A person is
 * the user the login names (by username or email, one count either way), or, for a login that
 * names nobody, that login in lower case (counted alike, so that the answers say nothing about
 * who exists). Once a key has `limit` failures (attempts still being verified count too, so a
 * burst sent at once is held back like one sent in a row), further attempts on it are refused
 * with 429 before any password is verified, for 30 seconds, doubling with each failure past the
 * limit up to 15 minutes. A key with no attempt for 15 minutes is forgotten; a successful sign-in
 * clears its person's count (not the address's, which may be shared by a guesser). So 100 wrong
 * passwords in a row cost `limit` argon2id verifications, and the rest a lookup each.
 *
 * The counts live in a FailureTable: in memory on the files (a restart forgets them), in a table
 * every instance shares on PostgreSQL, where each step is one transaction, so that guesses spread
 * over instances add up as if sent to one.
 *
 * Memory is bounded without letting anyone flush a hold. Users' keys are as many as the users, and
 * are never dropped before they are forgotten. Keys anyone can invent (addresses, logins that name
 * nobody) are held to `maxKeys`; an entry that holds its key back is never dropped to make room.
 * Each address's own limit is its budget: it adds at most `perAddress` such keys before it is held
 * back itself. A password longer than any password can be is no guess at anyone's, and costs no
 * verification: it is counted against the address only, so cheap failures cannot fill the table.
 * When the room is taken by keys that are held back (a flood from many addresses), an attempt that
 * needs a new key for an unknown login is refused with 429 until room frees up; a known user still
 * signs in, and an address that finds no room goes uncounted (its person's key still counts).
 */
import type { FailureEntry, FailureKey, FailureTable } from '../../storage/failure-table'
import { MemoryFailureTable, pendingOf } from '../../storage/failure-table'

const BLOCK_MIN_MS = 30_000
const BLOCK_MAX_MS = 15 * 60_000

export interface ThrottleLimits {
  /** Failures per person before they are held back. */
  perUser: number
  /** Failures per client address (many people can share one) before it is held back. */
  perAddress: number
  /** Entries of addresses and unknown logins kept at most. */
  maxKeys: number
}

export const DEFAULT_LIMITS: ThrottleLimits = { perUser: 5, perAddress: 20, maxKeys: 10_000 }

/** The person key of a sign-in: the user the login names, else the login itself. */
export function personKey(userId: number | undefined, login: string): string {
  return userId === undefined ? `login:${login.toLowerCase()}` : `user:${userId}`
}

interface Counted extends FailureKey {
  limit: number
  person: boolean
}

/** An attempt begun: `wait` is null when it may go ahead (then `settle` it), else the seconds to wait. */
export interface Attempt {
  wait: number | null
  counted: Counted[]
}

export class LoginThrottle {
  private readonly limits: ThrottleLimits

  constructor(
    limits: Partial<ThrottleLimits> = {},
    private readonly table: FailureTable = new MemoryFailureTable(),
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...limits }
  }

  /**
   * Reserves an attempt of `person` (a personKey, or null for an attempt that is no guess and is
   * counted against the address only) from `address`.
   */
  begin(person: string | null, address: string | null, now = Date.now()): Promise<Attempt> {
    const keys: Counted[] = []
    if (person !== null)
      keys.push({ key: person, capped: !person.startsWith('user:'), limit: this.limits.perUser, person: true })
    if (address !== null)
      keys.push({ key: `address:${address}`, capped: true, limit: this.limits.perAddress, person: false })
    return this.table.update<Attempt>(keys, now, this.limits.maxKeys, (entries, room) => {
      let wait = 0
      keys.forEach(({ limit }, i) => {
        const entry = entries[i]
        if (!entry) return
        const pending = pendingOf(entry, now)
        if (entry.blockedUntil > now) wait = Math.max(wait, entry.blockedUntil - now)
        // Under the limit, attempts may run side by side up to it; past it (once the hold is over), one at a time.
        else if (entry.failures + pending >= limit && (entry.failures < limit || pending > 0))
          wait = Math.max(wait, 1000)
      })
      const counted = keys.filter((key, i) => entries[i] !== undefined || !key.capped || room-- > 0)
      // No room for an unknown login's key: refused, as a guess past its limit would be.
      if (person !== null && !counted.some(key => key.person)) wait = Math.max(wait, BLOCK_MIN_MS)
      if (wait > 0) return { writes: [], result: { wait: Math.ceil(wait / 1000), counted: [] } }
      const writes = keys.map((key, i): FailureEntry | undefined => {
        if (!counted.includes(key)) return undefined
        const entry = entries[i]
        return {
          failures: entry?.failures ?? 0,
          pending: (entry ? pendingOf(entry, now) : 0) + 1,
          blockedUntil: entry?.blockedUntil ?? 0,
          lastSeen: now,
        }
      })
      return { writes, result: { wait: null, counted } }
    })
  }

  async settle(attempt: Attempt, succeeded: boolean, now = Date.now()): Promise<void> {
    const keys = attempt.counted
    if (keys.length === 0) return
    await this.table.update(keys, now, this.limits.maxKeys, entries => ({
      result: undefined,
      writes: keys.map(({ limit, person }, i): FailureEntry | null => {
        const entry = entries[i] ?? { failures: 0, pending: 1, blockedUntil: 0, lastSeen: now }
        const pending = Math.max(0, pendingOf(entry, now) - 1)
        if (succeeded) return person ? null : { ...entry, pending }
        const failures = entry.failures + 1
        const blockedUntil =
          failures >= limit ? now + Math.min(BLOCK_MIN_MS * 2 ** (failures - limit), BLOCK_MAX_MS) : entry.blockedUntil
        return { failures, pending, blockedUntil, lastSeen: Math.max(entry.lastSeen, now) }
      }),
    }))
  }
}

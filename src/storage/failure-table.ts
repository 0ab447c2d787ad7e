/**
 * Counts of failed attempts by key, for the sign-in throttle (features/users/login-throttle.ts,
 * which gives the counts their meaning). Two backings with one contract: in memory for a store on
 * files, and a table every instance shares on PostgreSQL (postgres-failures.ts). A step reads the
 * entries of a few keys and writes them back as one atomic change, so that instances counting the
 * same key add up instead of overwriting each other.
 *
 * Room: entries made under a key of the capped kind (those anyone can invent: an address, a login
 * that names nobody) are held to a capacity. To make room for new ones, the backing first forgets
 * entries with no attempt for FORGET_AFTER_MS and no hold, then drops the least recently seen
 * entries that hold nothing back (no hold, no attempt under way). It never drops an entry that is
 * holding its key back: when those fill the room, new capped entries are refused instead.
 */

/** One key's count. Times are milliseconds since the epoch, of the clock of the instance that wrote them. */
export interface FailureEntry {
  failures: number
  /** Attempts begun and not yet settled (taken as 0 once PENDING_LEASE_MS has passed since lastSeen). */
  pending: number
  /** Attempts on the key are refused until then (0: none). */
  blockedUntil: number
  /** The last attempt begun or failed. */
  lastSeen: number
}

export interface FailureKey {
  key: string
  /** Whether an entry of this key counts towards the capacity (keys anyone can invent do). */
  capped: boolean
}

export interface FailureStep<T> {
  /** For each key, the entry to write, null to remove it, undefined to leave it as it is. */
  writes: (FailureEntry | null | undefined)[]
  result: T
}

export interface FailureTable {
  /**
   * One atomic step on `keys`: `step` gets each key's entry (undefined when it has none, or one that
   * is forgotten) and `room`, how many of the capped keys without an entry may be given one under
   * `capacity` (uncapped keys always may), and says what to write.
   */
  update<T>(
    keys: readonly FailureKey[],
    now: number,
    capacity: number,
    step: (entries: (FailureEntry | undefined)[], room: number) => FailureStep<T>,
  ): Promise<T>
}

/** An entry with no attempt for this long and no hold is forgotten. */
export const FORGET_AFTER_MS = 15 * 60_000
/**
 * How long a begun attempt counts as under way without being settled: far longer than a password
 * check takes, so that only an attempt whose instance died before settling it lapses.
 */
export const PENDING_LEASE_MS = 60_000

/** The attempts under way on an entry. */
export function pendingOf(entry: FailureEntry, now: number): number {
  return now - entry.lastSeen < PENDING_LEASE_MS ? entry.pending : 0
}

export function isForgotten(entry: FailureEntry, now: number): boolean {
  return now - entry.lastSeen > FORGET_AFTER_MS && now >= entry.blockedUntil
}

/** Whether dropping the entry loses nothing that holds an attempt back now. */
export function isDroppable(entry: FailureEntry, now: number): boolean {
  return now >= entry.blockedUntil && pendingOf(entry, now) === 0
}

interface Held extends FailureEntry {
  capped: boolean
}

export class MemoryFailureTable implements FailureTable {
  /** In order of last write, so that the first droppable one met is the least recently seen. */
  private readonly entries = new Map<string, Held>()
  private capped = 0

  // Synchronous inside: no other step runs between the read and the write.
  async update<T>(
    keys: readonly FailureKey[],
    now: number,
    capacity: number,
    step: (entries: (FailureEntry | undefined)[], room: number) => FailureStep<T>,
  ): Promise<T> {
    const entries = keys.map(({ key }) => this.live(key, now))
    const wanted = keys.filter((key, i) => key.capped && entries[i] === undefined).length
    const { writes, result } = step(entries, wanted > 0 ? this.room(now, capacity, wanted) : 0)
    keys.forEach(({ key, capped }, i) => {
      const write = writes[i]
      if (write === undefined) return
      this.remove(key)
      if (write === null) return
      this.entries.set(key, { ...write, capped })
      if (capped) this.capped++
    })
    return result
  }

  private live(key: string, now: number): FailureEntry | undefined {
    const entry = this.entries.get(key)
    if (entry && isForgotten(entry, now)) {
      this.remove(key)
      return undefined
    }
    return entry
  }

  private remove(key: string) {
    const entry = this.entries.get(key)
    if (!entry) return
    this.entries.delete(key)
    if (entry.capped) this.capped--
  }

  private room(now: number, capacity: number, wanted: number): number {
    if (this.capped + wanted > capacity) {
      for (const [key, entry] of this.entries) if (isForgotten(entry, now)) this.remove(key)
    }
    for (const [key, entry] of this.entries) {
      if (this.capped + wanted <= capacity) break
      if (entry.capped && isDroppable(entry, now)) this.remove(key)
    }
    return Math.max(0, capacity - this.capped)
  }
}

/**
 * Serialised answers of the flag list, kept at the HTTP edge: the list is read far more often than
 * flags change, and building 1,000 flag views and serialising them is what it costs. Each answer
 * is kept with the version of the list it was made from (FlagsService.listVersion) and reused
 * while that version is current; a list without a version (an unknown project, whose name is the
 * client's to choose) is not kept. An answer can also go out of date with no write at all, when a
 * flag in it becomes potentially stale with age: it is kept only until the first such moment.
 */
export class ListCache {
  private readonly entries = new Map<string, { version: number; json: string; validUntil: number }>()

  constructor(private readonly versionOf: (key: string) => number | null) {}

  /** `validUntil`: the time (ms since the epoch) up to which the answer `make` gives holds without a write. */
  json(key: string, make: () => unknown, validUntil: () => number = () => Number.POSITIVE_INFINITY): string {
    const version = this.versionOf(key)
    const cached = this.entries.get(key)
    if (cached !== undefined && cached.version === version && Date.now() <= cached.validUntil) return cached.json
    const until = validUntil()
    const json = JSON.stringify(make())
    if (version === null) {
      this.entries.delete(key)
    } else {
      this.entries.set(key, { version, json, validUntil: until })
      // Lists of deleted projects go when another list is made, so that they are not held for ever.
      for (const other of this.entries.keys()) if (this.versionOf(other) === null) this.entries.delete(other)
    }
    return json
  }
}

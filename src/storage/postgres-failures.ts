/**
 * The sign-in throttle's counts on PostgreSQL (failure-table.ts), in `flagstore_login_failures`, so
 * that every instance on the database counts the same guesses. A step is one transaction holding an
 * advisory lock on each of its keys (taken in key order, so two steps never wait on each other in a
 * ring): it reads the rows, lets the step decide, and replaces them. Making room for new capped
 * entries takes one more lock, so that instances adding keys at once do not overfill the table.
 * Times are the instances' clocks, in milliseconds, as the in-memory table keeps them.
 */
import type { SQL } from 'bun'
import { StoreFailedError } from '../errors'
import {
  FORGET_AFTER_MS,
  isForgotten,
  PENDING_LEASE_MS,
  type FailureEntry,
  type FailureKey,
  type FailureStep,
  type FailureTable,
} from './failure-table'
import { lockName } from './postgres-connect'

interface Row {
  key: string
  failures: number
  pending: number
  blocked_until: string
  last_seen: string
}

export class PostgresFailureTable implements FailureTable {
  constructor(
    private readonly sql: SQL,
    private readonly schema: string,
    private readonly describe: (error: unknown) => string,
  ) {}

  async update<T>(
    keys: readonly FailureKey[],
    now: number,
    capacity: number,
    step: (entries: (FailureEntry | undefined)[], room: number) => FailureStep<T>,
  ): Promise<T> {
    if (keys.length === 0) return step([], 0).result
    try {
      return await this.sql.begin(async tx => {
        const names = keys.map(({ key }) => key)
        // The two-number lock space is apart from the one the commit and checkpoint locks use.
        await tx`SELECT pg_advisory_xact_lock(hashtext(${lockName(this.schema, 'failures')}), hashtext(k))
                 FROM (SELECT k FROM unnest(${tx.array(names, 'TEXT')}) AS k ORDER BY k) AS sorted`
        const rows: Row[] =
          await tx`SELECT key, failures, pending, blocked_until, last_seen FROM flagstore_login_failures WHERE key = ANY(${tx.array(names, 'TEXT')})`
        const entries = names.map(name => {
          const row = rows.find(candidate => candidate.key === name)
          const entry = row && {
            failures: Number(row.failures),
            pending: Number(row.pending),
            blockedUntil: Number(row.blocked_until),
            lastSeen: Number(row.last_seen),
          }
          return entry && !isForgotten(entry, now) ? entry : undefined
        })
        const wanted = keys.filter((key, i) => key.capped && entries[i] === undefined).length
        const { writes, result } = step(entries, wanted > 0 ? await this.room(tx, now, capacity, wanted) : 0)
        const changed = keys.filter((_, i) => writes[i] !== undefined)
        if (changed.length > 0) {
          await tx`DELETE FROM flagstore_login_failures WHERE key = ANY(${tx.array(
            changed.map(({ key }) => key),
            'TEXT',
          )})`
          const put = keys.flatMap((key, i) => (writes[i] ? [{ ...key, ...writes[i] }] : []))
          if (put.length > 0) {
            await tx`INSERT INTO flagstore_login_failures (key, capped, failures, pending, blocked_until, last_seen)
                     SELECT * FROM unnest(${tx.array(
                       put.map(p => p.key),
                       'TEXT',
                     )}, ${tx.array(
                       put.map(p => p.capped),
                       'BOOLEAN',
                     )},
                       ${tx.array(
                         put.map(p => p.failures),
                         'INT',
                       )}, ${tx.array(
                         put.map(p => p.pending),
                         'INT',
                       )},
                       ${tx.array(
                         put.map(p => p.blockedUntil),
                         'BIGINT',
                       )}, ${tx.array(
                         put.map(p => p.lastSeen),
                         'BIGINT',
                       )})`
          }
        }
        return result
      })
    } catch (error) {
      throw new StoreFailedError(`Sign-in attempts cannot be counted: ${this.describe(error)}`)
    }
  }

  /** As MemoryFailureTable's: forget the old, then drop the least recently seen that hold nothing back. */
  private async room(tx: SQL, now: number, capacity: number, wanted: number): Promise<number> {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${lockName(this.schema, 'failures-room')}), 0)`
    const used = async () => Number((await tx`SELECT count(*) AS n FROM flagstore_login_failures WHERE capped`)[0].n)
    let count = await used()
    if (count + wanted > capacity) {
      await tx`DELETE FROM flagstore_login_failures WHERE last_seen < ${now - FORGET_AFTER_MS} AND blocked_until <= ${now}`
      count = await used()
    }
    if (count + wanted > capacity) {
      await tx`DELETE FROM flagstore_login_failures WHERE key IN (
                 SELECT key FROM flagstore_login_failures
                 WHERE capped AND blocked_until <= ${now} AND (pending = 0 OR last_seen <= ${now - PENDING_LEASE_MS})
                 ORDER BY last_seen LIMIT ${count + wanted - capacity})`
      count = await used()
    }
    return Math.max(0, capacity - count)
  }
}

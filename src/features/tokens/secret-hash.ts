/**
 * How a token's secret is stored: HMAC-SHA-256 under the data directory's secret key
 * (storage/secret-key.ts), written `hmac-sha256:<hex>`. A keyed hash rather than a slow one
 * (scrypt, argon2): every SDK request authenticates, thousands a second, and a slow hash would cost
 * each request with an unknown secret tens of milliseconds of CPU, which anyone could send; the key
 * gives the same protection to a state file, journal or event log that leaves the machine without
 * it. See docs/security.md for the choice and its measurements.
 *
 * Data directories written before this hold a bare SHA-256 (64 hex digits); those still match, and
 * are replaced by the keyed hash the first time their secret is presented.
 */
import { createHash } from 'node:crypto'

const KEYED = 'hmac-sha256:'

export class SecretHasher {
  /** Keyed once: each hash starts from a copy of it (0.3 µs against createHmac's 0.75 µs, which keys anew). */
  private readonly keyed: Bun.CryptoHasher

  constructor(key: Buffer) {
    this.keyed = new Bun.CryptoHasher('sha256', key)
  }

  /** What is stored for `secret`. */
  hash(secret: string): string {
    return KEYED + this.keyed.copy().update(secret).digest('hex')
  }

  /** The hash of the versions before the key: what old records hold. */
  static legacy(secret: string): string {
    return createHash('sha256').update(secret).digest('hex')
  }

  static isLegacy(stored: string): boolean {
    return !stored.startsWith(KEYED)
  }

  /**
   * Compares two stored forms in constant time (for equal lengths): every character is looked at
   * whatever the first difference. In JavaScript, as two Buffers and timingSafeEqual were three
   * native calls and 2.5 % of an SDK request's CPU time.
   */
  static same(a: string, b: string): boolean {
    if (a.length !== b.length) return false
    let difference = 0
    for (let index = 0; index < a.length; index++) difference |= a.charCodeAt(index) ^ b.charCodeAt(index)
    return difference === 0
  }
}

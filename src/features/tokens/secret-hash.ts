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
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'

const KEYED = 'hmac-sha256:'

export class SecretHasher {
  constructor(private readonly key: Buffer) {}

  /** What is stored for `secret`. */
  hash(secret: string): string {
    return KEYED + createHmac('sha256', this.key).update(secret).digest('hex')
  }

  /** The hash of the versions before the key: what old records hold. */
  static legacy(secret: string): string {
    return createHash('sha256').update(secret).digest('hex')
  }

  static isLegacy(stored: string): boolean {
    return !stored.startsWith(KEYED)
  }

  /** Compares two stored forms in constant time (for equal lengths). */
  static same(a: string, b: string): boolean {
    const left = Buffer.from(a)
    const right = Buffer.from(b)
    return left.length === right.length && timingSafeEqual(left, right)
  }
}

/**
 * Passwords: argon2id through Bun's built-in Bun.password, with OWASP's smallest recommended
 * setting (19 MiB, 2 passes, 1 lane), so that one verification costs tens of milliseconds on a
 * small machine rather than half a second (64 MiB, Bun's default, measured 490 ms here under load).
 * The hash carries its parameters, so hashes made with other settings still verify.
 */
import { randomBytes } from 'node:crypto'

const ARGON2 = { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 } as const

/** Longer passwords are refused before any hashing, so that a huge one cannot buy CPU. */
export const PASSWORD_MAX_LENGTH = 128
export const PASSWORD_MIN_LENGTH = 10

/**
 * The strength rule, Unleash's: 10 to 128 characters with a lower-case letter, an upper-case
 * letter, a digit and a character that is none of these. Returns what is missing, or null.
 */
export function passwordProblem(password: string): string | null {
  const missing: string[] = []
  if (password.length < PASSWORD_MIN_LENGTH) missing.push(`at least ${PASSWORD_MIN_LENGTH} characters`)
  if (!/\p{Ll}/u.test(password)) missing.push('a lower-case letter')
  if (!/\p{Lu}/u.test(password)) missing.push('an upper-case letter')
  if (!/\p{Nd}/u.test(password)) missing.push('a digit')
  if (!/[^\p{L}\p{Nd}]/u.test(password)) missing.push('a character other than a letter or digit')
  if (password.length > PASSWORD_MAX_LENGTH) return `A password must be at most ${PASSWORD_MAX_LENGTH} characters long`
  return missing.length === 0 ? null : `A password needs ${missing.join(', ')}`
}

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, ARGON2)
}

/**
 * Checks `password` against `hash`; with no hash (an unknown user, or one without a password) it
 * verifies against a hash of a password nobody has, so that the answer takes as long either way.
 */
export async function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  const against = hash ?? (await decoyHash())
  const matches = await Bun.password.verify(password, against).catch(() => false)
  return hash !== null && matches
}

let decoy: Promise<string> | null = null
function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(32).toString('base64url'))
  return decoy
}

/** A password for the first admin: 120 random bits, plus one of each class the rule asks for. */
export function generatePassword(): string {
  return `${randomBytes(15).toString('base64url')}-Aa7`
}

/**
 * Argon2id in a test process, cached by its arguments. The service hashes and verifies passwords
 * with Bun.password at a fixed cost (src/features/users/passwords.ts): about 65 ms of CPU each, and
 * a test process makes the same few users with the same few passwords, and signs them in, hundreds
 * of times (three people per change-request test, the sign-in throttle's guesses). So, in this
 * process only:
 *
 * - `verify` answers what argon2 answered the first time for the same password and hash: it is a
 *   function of those two, so every answer is the one argon2 gives. Distinct guesses are still
 *   verified each, and a malformed hash still throws.
 * - `hash` answers, for the same password and options, the hash argon2 made the first time: an
 *   argon2id hash of that password with the service's parameters, so it verifies as any other. Two
 *   users with the same password share its salt, which no test looks at.
 *
 * Nothing of the service changes: it calls Bun.password as in production, and a spawned server
 * (test/system) hashes each time.
 */
type Password = typeof Bun.password

const original: Password = Bun.password
const hashes = new Map<string, Promise<string>>()
const verdicts = new Map<string, Promise<boolean>>()

/** Forgets a failed computation, so that a rejection is not handed to a later caller as an answer. */
function cached<T>(cache: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let answer = cache.get(key)
  if (answer === undefined) {
    answer = make()
    cache.set(key, answer)
    answer.catch(() => cache.delete(key))
  }
  return answer
}

const text = (value: Parameters<Password['hash']>[0]) =>
  typeof value === 'string' ? value : Buffer.from(value as ArrayBuffer).toString('base64')

const memoised: Password = {
  ...original,
  hash: (password, options) =>
    cached(hashes, JSON.stringify([text(password), options ?? null]), () => original.hash(password, options)),
  verify: (password, hash, algorithm) =>
    cached(verdicts, JSON.stringify([text(password), text(hash), algorithm ?? null]), () =>
      original.verify(password, hash, algorithm),
    ),
}
// Bun's typings mark it read-only; the property is writable.
;(Bun as { password: Password }).password = memoised

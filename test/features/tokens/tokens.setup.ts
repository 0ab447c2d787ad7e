/** What the token tests share: the secret's format, and checks that a secret is written nowhere. */
import { expect } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Api } from '../../helpers'

export const ADMIN_SECRET_FORMAT = /^\*:\*\.[0-9a-f]{64}$/
export const TOKENS = '/api/admin/api-tokens'

/** The random part of a secret: what must never be written anywhere. */
export function randomPart(secret: string): string {
  return secret.slice(secret.indexOf('.') + 1)
}

export function expectNoSecret(text: string, secret: string) {
  expect(text).not.toContain(secret)
  expect(text).not.toContain(randomPart(secret))
}

export function tokenCount(api: Api) {
  return Object.keys(api.services.store.state.tokens).length
}

/** Every file under a directory, as text. */
export function filesUnder(dir: string): string[] {
  const texts: string[] = []
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) texts.push(...filesUnder(path))
    else texts.push(readFileSync(path, 'utf8'))
  }
  return texts
}

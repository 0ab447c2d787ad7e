/** Console users and their sessions. */
import { expect } from 'bun:test'
import { SESSION_COOKIE } from '../../src/features/users/sessions.service'
import type { Api } from './api'
import { expectOk } from './expect'

/** Creates a console user through the admin API, asserting 201; answers the created user. */
export async function newUser<T = { id: number; username: string | null }>(
  target: Api,
  body: Record<string, unknown>,
): Promise<T> {
  const response = await target.post<T>('/api/admin/user-admin', body)
  expectOk(response, 201)
  return response.body
}

/** Signs in with a password, asserting it works; answers the session cookie as a Cookie header value. */
export async function signIn(target: Api, username: string, password: string): Promise<string> {
  const response = await target.post('/auth/simple/login', { username, password }, { token: null })
  expectOk(response)
  const header = response.headers.get('set-cookie') ?? ''
  expect(header).toStartWith(`${SESSION_COOKIE}=`)
  return header.split(';')[0]!
}

/** Request options for a call signed in with `cookie`, from the console's own origin (or with `headers` instead). */
export const asSession = (cookie: string, headers: Record<string, string> = { origin: 'http://localhost' }) => ({
  token: null,
  headers: { cookie, ...headers },
})

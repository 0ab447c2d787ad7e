/** What the single sign-on tests share: settings pointing at a provider, and a sign-in through it. */
import { expect } from 'bun:test'
import { expectOk, type Api } from '../../helpers'
import { CLIENT_ID, CLIENT_SECRET } from './provider'

export const CALLBACK = 'http://localhost/auth/oidc/callback'

/** Switches OpenID Connect on against `issuer`, with `extra` settings. */
export async function useProvider(api: Api, issuer: string, extra: Record<string, unknown> = {}) {
  const answer = await api.post('/api/admin/auth/oidc/settings', {
    enabled: true,
    discoverUrl: issuer,
    clientId: CLIENT_ID,
    secret: CLIENT_SECRET,
    autoCreate: true,
    defaultRootRole: 'Viewer',
    ...extra,
  })
  expectOk(answer)
}

/** The flow cookie `/auth/oidc/login` sets, as a Cookie header value. */
export function flowCookieOf(response: { headers: Headers }): string {
  const line = response.headers.getSetCookie().find(cookie => cookie.startsWith('flagstore-oidc='))
  expect(line).toBeDefined()
  return line!.split(';')[0]!
}

/** Starts a sign-in: the provider's URL and the flow cookie. */
export async function startSignIn(api: Api): Promise<{ location: string; flow: string }> {
  const started = await api.get('/auth/oidc/login', { token: null })
  expect(started.status).toBe(302)
  return { location: started.headers.get('location')!, flow: flowCookieOf(started) }
}

/** Our callback as the browser comes back with it: the path and query of `back`, with `flow`. */
export function callback(api: Api, back: URL, flow: string | null) {
  return api.get(back.pathname + back.search, { token: null, headers: flow ? { cookie: flow } : {} })
}

/** The session cookie an answer sets, as a Cookie header value, or null. */
export function sessionOf(response: { headers: Headers }): string | null {
  const line = response.headers.getSetCookie().find(cookie => cookie.startsWith('unleash-session='))
  return line ? line.split(';')[0]! : null
}

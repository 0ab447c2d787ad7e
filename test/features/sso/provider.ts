/**
 * A real OpenID provider for the tests: panva's oidc-provider (certified), on a free loopback port,
 * with its development sign-in form (any login, any password: the login is the subject). The
 * people it knows are `accounts`; `rotateKeys` starts it again with a new signing key under the
 * same issuer. `signIn` plays a browser through its forms and answers the redirect back to us.
 */
import { generateKeyPairSync } from 'node:crypto'
import type { Server } from 'node:http'
import Provider from 'oidc-provider'
import { freePort } from '../../helpers'

export const CLIENT_ID = 'flagstore'
export const CLIENT_SECRET = 'flagstore-client-secret'

export type Claims = Record<string, unknown>

export interface TestProvider {
  issuer: string
  accounts: Map<string, Claims>
  /** From our `/auth/oidc/login` redirect to the provider, through its forms as `subject`: our callback URL, with the code. */
  signIn(authorizationUrl: string, subject: string): Promise<URL>
  rotateKeys(): Promise<void>
  close(): Promise<void>
}

function signingKey() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return { ...privateKey.export({ format: 'jwk' }), kid: crypto.randomUUID(), alg: 'RS256', use: 'sig' }
}

/** A cookie jar for one browser, enough for the provider's own cookies. */
class Browser {
  private readonly cookies = new Map<string, string>()

  async go(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers)
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '))
    const response = await fetch(url, { ...init, headers, redirect: 'manual' })
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const at = pair!.indexOf('=')
      this.cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim())
    }
    return response
  }
}

export async function startProvider(redirectUris: string[]): Promise<TestProvider> {
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}`
  const accounts = new Map<string, Claims>()
  let server: Server
  const listen = (keys: object[]) => {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          redirect_uris: redirectUris,
          post_logout_redirect_uris: redirectUris.map(uri => new URL('/', uri).href),
        },
      ],
      jwks: { keys } as never,
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
      scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'],
      findAccount: async (_ctx: unknown, sub: string) => ({
        accountId: sub,
        claims: async () => ({ sub, ...(accounts.get(sub) ?? {}) }),
      }),
      features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    })
    server = provider.listen(port, '127.0.0.1') as unknown as Server
    return new Promise<void>(resolve => server.once('listening', () => resolve()))
  }
  let keys = [signingKey()]
  await listen(keys)

  return {
    issuer,
    accounts,
    async signIn(authorizationUrl, subject) {
      const browser = new Browser()
      let response = await browser.go(authorizationUrl)
      for (let step = 0; step < 12; step++) {
        const location = response.headers.get('location')
        if (location) {
          const next = new URL(location, issuer)
          if (next.origin !== issuer) return next
          response = await browser.go(next.href)
          continue
        }
        const page = await response.text()
        const action = /action="([^"]+)"/.exec(page)?.[1]
        if (!action) throw new Error(`the provider answered ${response.status} without a form: ${page.slice(0, 300)}`)
        const form: Record<string, string> = page.includes('name="login"')
          ? { prompt: 'login', login: subject, password: 'any' }
          : { prompt: 'consent' }
        response = await browser.go(new URL(action, issuer).href, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(form).toString(),
        })
      }
      throw new Error('the provider never sent the browser back')
    },
    async rotateKeys() {
      await new Promise(resolve => server.close(resolve))
      keys = [signingKey()]
      await listen(keys)
    },
    close: () => new Promise<void>(resolve => server.close(() => resolve())),
  }
}

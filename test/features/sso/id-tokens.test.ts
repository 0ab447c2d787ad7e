/**
 * The ID token checks, each against a token made to fail it: a real provider never sends such
 * tokens, so a small provider here hands out the one each test asks for (discovery, keys, token
 * endpoint). The sign-in must answer 401 with a page, open no session and change nothing.
 */
// Store-independent: each token is refused before anything is written; sign-ins that write run again on
// PostgreSQL in sso.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { freePort, freshApiPerTest, type Api } from '../../helpers'
import { CLIENT_ID } from './provider'
import { callback, sessionOf, startSignIn, useProvider } from './sso.setup'

const b64 = (value: object | string) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

function rsaKey() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return { privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid: 'key-1', alg: 'RS256', use: 'sig' } }
}

const published = rsaKey()
const other = rsaKey()

function jwt(header: Record<string, unknown>, claims: Record<string, unknown>, key: KeyObject | null): string {
  const input = `${b64(header)}.${b64(claims)}`
  return key ? `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}` : `${input}.`
}

let issuer = ''
let server: ReturnType<typeof Bun.serve>
/** What the token endpoint answers next, given the nonce of the sign-in. */
let nextToken: (nonce: string) => string = () => ''
let nonce = ''

beforeAll(async () => {
  const port = await freePort()
  issuer = `http://127.0.0.1:${port}`
  server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    fetch(request) {
      const { pathname } = new URL(request.url)
      if (pathname === '/.well-known/openid-configuration')
        return Response.json({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
        })
      if (pathname === '/jwks') return Response.json({ keys: [published.jwk] })
      if (pathname === '/token')
        return Response.json({ access_token: 'opaque', token_type: 'Bearer', id_token: nextToken(nonce) })
      return new Response('not found', { status: 404 })
    },
  })
})
afterAll(() => server.stop(true))

let api: Api
freshApiPerTest(fresh => (api = fresh))

const now = () => Math.floor(Date.now() / 1000)
const claimsFor = (tokenNonce: string) => ({
  iss: issuer,
  sub: 'zoe',
  aud: CLIENT_ID,
  iat: now(),
  exp: now() + 300,
  nonce: tokenNonce,
  email: 'zoe@example.com',
  email_verified: true,
})
const signed = (claims: Record<string, unknown>) => jwt({ alg: 'RS256', kid: 'key-1' }, claims, published.privateKey)

/** A sign-in whose token endpoint answers `token`. */
async function signInWith(token: (nonce: string) => string) {
  await useProvider(api, issuer)
  const { location, flow } = await startSignIn(api)
  const asked = new URL(location)
  nonce = asked.searchParams.get('nonce')!
  expect(asked.searchParams.get('code_challenge_method')).toBe('S256')
  nextToken = token
  const back = new URL(`http://localhost/auth/oidc/callback?code=a-code&state=${asked.searchParams.get('state')}`)
  return callback(api, back, flow)
}

describe('the ID token', () => {
  test('a token that passes every check signs the person in (the provider here works)', async () => {
    const answer = await signInWith(tokenNonce => signed(claimsFor(tokenNonce)))
    expect(answer.status).toBe(200)
    expect(sessionOf(answer)).not.toBeNull()
  })

  const refusals: [string, (nonce: string) => string][] = [
    ['another nonce', () => signed(claimsFor('not-the-nonce'))],
    ['no nonce', tokenNonce => signed({ ...claimsFor(tokenNonce), nonce: undefined })],
    ['another audience', tokenNonce => signed({ ...claimsFor(tokenNonce), aud: 'another-client' })],
    ['another issuer', tokenNonce => signed({ ...claimsFor(tokenNonce), iss: 'https://evil.test' })],
    ['expired', tokenNonce => signed({ ...claimsFor(tokenNonce), iat: now() - 900, exp: now() - 600 })],
    ['unsigned (alg none)', tokenNonce => jwt({ alg: 'none' }, claimsFor(tokenNonce), null)],
    [
      'signed by a key the provider does not publish',
      tokenNonce => jwt({ alg: 'RS256', kid: 'key-1' }, claimsFor(tokenNonce), other.privateKey),
    ],
    [
      'with its claims altered after signing',
      tokenNonce => {
        const [header, , signature] = signed(claimsFor(tokenNonce)).split('.')
        return `${header}.${b64({ ...claimsFor(tokenNonce), sub: 'admin' })}.${signature}`
      },
    ],
  ]
  for (const [what, token] of refusals) {
    test(`${what}: refused with a page, no session, nothing changed`, async () => {
      const users = Object.keys(api.services.store.state.users).length
      const answer = await signInWith(token)
      expect(answer.status).toBe(401)
      expect(answer.headers.get('content-type')).toContain('text/html')
      expect(sessionOf(answer)).toBeNull()
      expect(Object.keys(api.services.store.state.users)).toHaveLength(users)
    })
  }
})

import { t } from 'elysia'
import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase } from '../../http/plugins'
import type { Authorization } from '../tokens/auth'
import { ssoModels } from './sso.model'
import type { Answer, SsoService } from './sso.service'
import type { OidcSettingsInput } from './sso.settings'

const tags = ['Single sign-on']

/** The base path a request came under, from its own path (the routes are `<BASE_URI_PATH>/auth/oidc/…`). */
const basePathOf = (request: Request) => new URL(request.url).pathname.replace(/\/auth\/oidc\/[a-z]+$/, '')

const htmlText = (text: string) =>
  text.replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

/**
 * A redirect, or a small page saying what happened. After a sign-in the page goes on to the console
 * with a refresh rather than a redirect: the browser arrived from the provider's site, and the
 * SameSite=Strict session cookie is sent only once it navigates from this one.
 */
function respond(answer: Answer, basePath: string): Response {
  const headers = new Headers({ 'cache-control': 'no-store' })
  for (const cookie of answer.cookies) headers.append('set-cookie', cookie)
  if (answer.status === 302) {
    headers.set('location', answer.location!)
    return new Response(null, { status: 302, headers })
  }
  const next = answer.location ?? `${basePath}/`
  const refresh = answer.location ? `<meta http-equiv="refresh" content="0;url=${htmlText(next)}">` : ''
  headers.set('content-type', 'text/html; charset=utf-8')
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title>${refresh}</head><body><main><h1>${answer.status === 200 ? 'Signed in' : 'Sign-in refused'}</h1><p>${htmlText(answer.message ?? '')}</p><p><a href="${htmlText(next)}">Go to the console</a></p></main></body></html>`
  return new Response(page, { status: answer.status, headers })
}

const page = (description: string) => t.String({ description })

/** The browser's side of single sign-on: outside /api, open to everyone. */
export function ssoController(sso: SsoService, auth: Authorization) {
  return controllerBase(auth, ssoModels)
    .get(
      '/auth/options',
      () => {
        const oidc = sso.settings.oidc()
        return {
          passwordSignIn: !sso.settings.passwordSignInOff(),
          oidc: oidc.enabled,
          singleSignOut: oidc.enabled && oidc.enableSingleSignOut,
        }
      },
      {
        response: { 200: 'signInOptionsSchema' },
        detail: { operationId: 'getSignInOptions', summary: 'The ways to sign in', tags },
      },
    )
    .get(
      '/auth/oidc/login',
      async ({ request }) => respond(await sso.start(request, basePathOf(request)), basePathOf(request)),
      {
        response: {
          302: t.Void({ description: "To the provider's sign-in" }),
          404: page('Single sign-on is not switched on (a page)'),
          502: page('The provider could not be reached (a page)'),
        },
        detail: {
          operationId: 'oidcLogin',
          summary: 'Sign in with the identity provider',
          tags,
          description:
            'Sends the browser to the provider (authorization code flow with PKCE and a nonce). `redirect`: a path of the console to go back to.',
        },
      },
    )
    .get(
      '/auth/oidc/callback',
      async ({ request }) => respond(await sso.finish(request, basePathOf(request)), basePathOf(request)),
      {
        response: {
          200: page('Signed in: sets the session cookie, and the page goes on to the console'),
          400: page('No sign-in was started here, it took too long, or its state does not match or was used (a page)'),
          401: page("The provider's answer was refused: an error, or a token that does not check (a page)"),
          403: page('The person may not sign in here: unknown, disabled, deleted, or a domain not allowed (a page)'),
          404: page('Single sign-on is not switched on (a page)'),
        },
        detail: {
          operationId: 'oidcCallback',
          summary: 'Back from the identity provider',
          tags,
          description:
            "The redirect URI to register at the provider. Checks the state, the PKCE verifier, and the ID token's issuer, audience, signature, expiry and nonce; finds the user by subject, then verified email, or makes one; opens the same session as a password sign-in.",
        },
      },
    )
    .get(
      '/auth/oidc/logout',
      async ({ request }) => {
        const basePath = basePathOf(request)
        const to = (await sso.signOutUrl(request, basePath)) ?? `${basePath}/`
        return new Response(null, { status: 302, headers: { location: to, 'cache-control': 'no-store' } })
      },
      {
        response: { 302: t.Void({ description: "To the provider's sign-out, or the console" }) },
        detail: {
          operationId: 'oidcLogout',
          summary: 'Sign out at the identity provider',
          tags,
          description:
            "After POST /logout: with single sign-out on, to the provider's end-session endpoint, which comes back to the console; else to the console.",
        },
      },
    )
}

/** Single sign-on's settings, for admins (Unleash's routes). */
export function ssoSettingsController(sso: SsoService, auth: Authorization) {
  return controllerBase(auth, ssoModels)
    .get('/api/admin/auth/oidc/settings', () => sso.settings.oidcView(), {
      auth: 'ADMIN',
      response: { 200: 'oidcSettingsSchema', ...authErrors() },
      detail: {
        operationId: 'getOidcSettings',
        summary: 'OpenID Connect settings',
        tags,
        description: 'The client secret is never answered: hasSecret says whether one is set.',
      },
    })
    .post(
      '/api/admin/auth/oidc/settings',
      ({ body, caller }) => sso.settings.updateOidc(body as OidcSettingsInput, caller),
      {
        auth: 'ADMIN',
        body: 'oidcSettingsInputSchema',
        response: { 200: 'oidcSettingsSchema', ...bodyErrors(409) },
        detail: {
          operationId: 'setOidcSettings',
          summary: 'Change the OpenID Connect settings',
          tags,
          description:
            'Settings set by OIDC_* environment variables at start cannot be changed here (409). Switching OpenID Connect off while password sign-in is off is refused (409). Records setting-updated (id unleash.enterprise.auth.oidc), without the secret: hasSecret and secretChanged say what became of it.',
        },
      },
    )
    .get('/api/admin/auth/simple/settings', () => ({ disabled: sso.settings.passwordSignInOff() }), {
      auth: 'ADMIN',
      response: { 200: 'simpleSettingsSchema', ...authErrors() },
      detail: { operationId: 'getSimpleSettings', summary: 'Whether password sign-in is off', tags },
    })
    .put(
      '/api/admin/auth/simple/settings',
      ({ body, caller }) => sso.settings.setPasswordSignIn(body.disabled, caller),
      {
        auth: 'ADMIN',
        body: 'simpleSettingsSchema',
        response: { 200: 'simpleSettingsSchema', ...bodyErrors() },
        detail: {
          operationId: 'setSimpleSettings',
          summary: 'Switch password sign-in off or on',
          tags,
          description:
            'Off only while OpenID Connect is on (else 400). The way back for a locked-out admin: start the service with PASSWORD_SIGN_IN=on. Records setting-updated (id unleash.auth.simple).',
        },
      },
    )
}

/**
 * Single sign-on's settings as plain values: the defaults, what the environment gives, and their
 * checks. Free of the store, so that the configuration (config.ts) can read them at start.
 */
import { ValidationError } from '../../errors'
import type { OidcSettings } from './sso.records'

export const DEFAULT_OIDC: OidcSettings = {
  enabled: false,
  discoverUrl: '',
  clientId: '',
  secret: '',
  autoCreate: false,
  emailDomains: '',
  defaultRootRole: 'viewer',
  enableSingleSignOut: false,
  enableGroupSyncing: false,
  groupJsonPath: 'groups',
  addGroupsScope: false,
  idTokenSigningAlgorithm: 'RS256',
  acrValues: '',
  extraScopes: '',
  rootRoleMapping: [],
}

/** What the environment sets at start (`sso.env.ts`). */
export interface SsoEnvironment {
  /** OIDC_* variables, when any is set: they replace the stored settings whole. */
  oidc: OidcSettings | null
  /** `PASSWORD_SIGN_IN=on`: password sign-in stays on whatever is stored. */
  passwordSignInForced: boolean
  /** `UNLEASH_URL`: the service's public address, for the redirect URI; else the request's origin. */
  publicUrl: string | null
}

export const NO_SSO_ENVIRONMENT: SsoEnvironment = { oidc: null, passwordSignInForced: false, publicUrl: null }

export const ROLE_NAMES = { admin: 'Admin', editor: 'Editor', viewer: 'Viewer' } as const

export function roleFrom(sent: unknown, path: string): OidcSettings['defaultRootRole'] {
  const lower = String(sent).toLowerCase()
  if (lower === 'admin' || lower === 'editor' || lower === 'viewer') return lower
  throw ValidationError.at(path, `must be Admin, Editor or Viewer, got ${JSON.stringify(sent)}`)
}

/** Enabled settings must name a provider and a client; the discovery URL must be http(s). */
export function checkOidc(settings: OidcSettings): void {
  if (settings.discoverUrl !== '') {
    let url: URL | undefined
    try {
      url = new URL(settings.discoverUrl)
    } catch {}
    if (!url || !['http:', 'https:'].includes(url.protocol))
      throw ValidationError.at('/discoverUrl', 'must be an http or https URL (the issuer, or its discovery document)')
  }
  if (settings.enabled && (settings.discoverUrl === '' || settings.clientId === ''))
    throw ValidationError.at(
      settings.discoverUrl === '' ? '/discoverUrl' : '/clientId',
      'OpenID Connect needs discoverUrl and clientId to be enabled',
    )
}

/**
 * Single sign-on's environment variables, read at start (config.ts). Any `OIDC_*` variable set
 * makes the environment the source of the OpenID Connect settings, which the API then cannot change.
 */
import { checkOidc, DEFAULT_OIDC, roleFrom, type SsoEnvironment } from './sso.options'
import type { OidcSettings } from './sso.records'

const STRINGS = {
  OIDC_DISCOVER_URL: 'discoverUrl',
  OIDC_CLIENT_ID: 'clientId',
  OIDC_CLIENT_SECRET: 'secret',
  OIDC_EMAIL_DOMAINS: 'emailDomains',
  OIDC_GROUP_JSON_PATH: 'groupJsonPath',
  OIDC_ID_TOKEN_SIGNING_ALGORITHM: 'idTokenSigningAlgorithm',
  OIDC_ACR_VALUES: 'acrValues',
  OIDC_EXTRA_SCOPES: 'extraScopes',
} as const
const BOOLEANS = {
  OIDC_ENABLED: 'enabled',
  OIDC_AUTO_CREATE: 'autoCreate',
  OIDC_ENABLE_SINGLE_SIGN_OUT: 'enableSingleSignOut',
  OIDC_ENABLE_GROUP_SYNCING: 'enableGroupSyncing',
  OIDC_ADD_GROUPS_SCOPE: 'addGroupsScope',
} as const

/** Every variable read here, for the README's configuration table. */
export const SSO_VARIABLES = [
  ...Object.keys(BOOLEANS),
  ...Object.keys(STRINGS),
  'OIDC_DEFAULT_ROOT_ROLE',
  'OIDC_ROOT_ROLE_MAPPING',
  'PASSWORD_SIGN_IN',
]

function flag(key: string, raw: string): boolean {
  const value = raw.trim().toLowerCase()
  if (['true', '1', 'yes', 'on'].includes(value)) return true
  if (['false', '0', 'no', 'off'].includes(value)) return false
  throw new Error(`${key} must be true or false, got "${raw}"`)
}

/**
 * The settings the environment gives, with the service's public URL (`UNLEASH_URL`, read once by the
 * configuration); throws an Error naming the variable for a bad value.
 */
export function ssoFromEnvironment(env: Record<string, string | undefined>, publicUrl: string | null): SsoEnvironment {
  const set = (key: string) => env[key] !== undefined && env[key] !== ''
  let oidc: OidcSettings | null = null
  if (Object.keys(env).some(key => key.startsWith('OIDC_') && set(key))) {
    const settings: OidcSettings = { ...DEFAULT_OIDC, rootRoleMapping: [] }
    for (const [key, field] of Object.entries(BOOLEANS)) if (set(key)) settings[field] = flag(key, env[key]!)
    for (const [key, field] of Object.entries(STRINGS)) if (set(key)) settings[field] = env[key]!.trim()
    try {
      if (set('OIDC_DEFAULT_ROOT_ROLE')) settings.defaultRootRole = roleFrom(env.OIDC_DEFAULT_ROOT_ROLE, '')
    } catch {
      throw new Error(`OIDC_DEFAULT_ROOT_ROLE must be Admin, Editor or Viewer, got "${env.OIDC_DEFAULT_ROOT_ROLE}"`)
    }
    if (set('OIDC_ROOT_ROLE_MAPPING')) settings.rootRoleMapping = mapping(env.OIDC_ROOT_ROLE_MAPPING!)
    try {
      checkOidc(settings)
    } catch (error) {
      throw new Error(`OIDC_* settings: ${(error as Error).message}`)
    }
    oidc = settings
  }
  return {
    oidc,
    passwordSignInForced: set('PASSWORD_SIGN_IN') ? flag('PASSWORD_SIGN_IN', env.PASSWORD_SIGN_IN!) : false,
    publicUrl,
  }
}

/** `OIDC_ROOT_ROLE_MAPPING`: JSON `[{"group": "…", "rootRole": "Admin"}]`, first match wins. */
function mapping(raw: string): OidcSettings['rootRoleMapping'] {
  const problem = 'OIDC_ROOT_ROLE_MAPPING must be JSON such as [{"group":"flag-admins","rootRole":"Admin"}]'
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new Error(problem)
  }
  if (!Array.isArray(parsed)) throw new Error(problem)
  return parsed.map(entry => {
    if (typeof entry?.group !== 'string') throw new Error(problem)
    try {
      return { group: entry.group, rootRole: roleFrom(entry.rootRole, '') }
    } catch {
      throw new Error(`${problem}; "${entry.rootRole}" is not Admin, Editor or Viewer`)
    }
  })
}

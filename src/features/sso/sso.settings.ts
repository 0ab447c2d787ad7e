/**
 * Single sign-on's settings: OpenID Connect's (Unleash's `/api/admin/auth/oidc/settings` fields,
 * plus `rootRoleMapping`) and whether password sign-in is switched off. Settings given by
 * environment variables at start win over the stored ones: the API then answers them and refuses
 * to change them. `PASSWORD_SIGN_IN=on` at start lets passwords in whatever is stored: the way back
 * for an admin locked out by a provider that no longer works.
 */
import { events } from '../../domain/events'
import { ConflictError, ValidationError } from '../../errors'
import type { Store } from '../../storage/store'
import { actorOf, type Caller } from '../tokens/permissions'
import { checkOidc, DEFAULT_OIDC, NO_SSO_ENVIRONMENT, ROLE_NAMES, roleFrom, type SsoEnvironment } from './sso.options'
import type { OidcSettings, SsoSettingsRecord } from './sso.records'

const EMPTY: SsoSettingsRecord = { oidc: null, passwordSignInDisabled: false }
const KEY = 'settings'
/** The settings' ids in their events, as Unleash names them. */
const OIDC_SETTING = 'unleash.enterprise.auth.oidc'
const SIMPLE_SETTING = 'unleash.auth.simple'

/** The settings as the API answers them: never the secret. */
export type OidcSettingsView = Omit<OidcSettings, 'secret' | 'defaultRootRole' | 'rootRoleMapping'> & {
  defaultRootRole: string
  rootRoleMapping: { group: string; rootRole: string }[]
  hasSecret: boolean
  setByEnvironment: boolean
}

/** The settings without the secret: what the API answers and the events record (`hasSecret` says whether one is kept). */
function withoutSecret(settings: OidcSettings) {
  const { secret, defaultRootRole, rootRoleMapping, ...rest } = settings
  return {
    ...rest,
    defaultRootRole: ROLE_NAMES[defaultRootRole],
    rootRoleMapping: rootRoleMapping.map(entry => ({ group: entry.group, rootRole: ROLE_NAMES[entry.rootRole] })),
    hasSecret: secret !== '',
  }
}

export type OidcSettingsInput = Partial<
  Omit<OidcSettings, 'defaultRootRole' | 'rootRoleMapping'> & {
    defaultRootRole: string
    rootRoleMapping: { group: string; rootRole: string }[]
  }
>

export class SsoSettings {
  constructor(
    private readonly store: Pick<Store, 'reader' | 'transact'>,
    readonly environment: SsoEnvironment = NO_SSO_ENVIRONMENT,
  ) {}

  private stored(): SsoSettingsRecord {
    return this.store.reader.get('ssoSettings', KEY) ?? EMPTY
  }

  /** The OpenID Connect settings in force: the environment's, else the stored ones, else the defaults. */
  oidc(): OidcSettings {
    return this.environment.oidc ?? this.stored().oidc ?? DEFAULT_OIDC
  }

  oidcView(): OidcSettingsView {
    return { ...withoutSecret(this.oidc()), setByEnvironment: this.environment.oidc !== null }
  }

  /** Whether password sign-in is refused now. */
  passwordSignInOff(): boolean {
    return !this.environment.passwordSignInForced && this.stored().passwordSignInDisabled
  }

  /**
   * Changes what `input` names; a secret left out (or empty) keeps the stored one. Records
   * setting-updated, without the secret (`secretChanged` says whether a new one was given).
   */
  async updateOidc(input: OidcSettingsInput, caller: Caller): Promise<OidcSettingsView> {
    if (this.environment.oidc !== null)
      throw new ConflictError(
        'OpenID Connect is set by environment variables (OIDC_*) at start, which win over the API: change them there',
      )
    const { defaultRootRole, rootRoleMapping, secret, ...plain } = input
    await this.store.transact(actorOf(caller), tx => {
      const before = tx.get('ssoSettings', KEY) ?? EMPTY
      const current = before.oidc ?? DEFAULT_OIDC
      const next: OidcSettings = {
        ...current,
        ...plain,
        secret: secret ? secret : current.secret,
        defaultRootRole:
          defaultRootRole === undefined ? current.defaultRootRole : roleFrom(defaultRootRole, '/defaultRootRole'),
        rootRoleMapping:
          rootRoleMapping === undefined
            ? current.rootRoleMapping
            : rootRoleMapping.map((entry, index) => ({
                group: entry.group,
                rootRole: roleFrom(entry.rootRole, `/rootRoleMapping/${index}/rootRole`),
              })),
      }
      checkOidc(next)
      if (!next.enabled && before.passwordSignInDisabled)
        throw new ConflictError(
          'Password sign-in is switched off: switch it back on before switching OpenID Connect off',
        )
      tx.put('ssoSettings', KEY, { ...before, oidc: next })
      tx.appendEvent(
        events.settingUpdated(
          OIDC_SETTING,
          { ...withoutSecret(next), secretChanged: next.secret !== current.secret },
          withoutSecret(current),
        ),
      )
    })
    return this.oidcView()
  }

  /** `PUT /api/admin/auth/simple/settings`: switching passwords off needs single sign-on to be on. Records setting-updated. */
  async setPasswordSignIn(disabled: boolean, caller: Caller): Promise<{ disabled: boolean }> {
    await this.store.transact(actorOf(caller), tx => {
      const before = tx.get('ssoSettings', KEY) ?? EMPTY
      const oidc = this.environment.oidc ?? before.oidc
      if (disabled && !oidc?.enabled)
        throw ValidationError.at(
          '/disabled',
          'Password sign-in can only be switched off while OpenID Connect is on: nobody could sign in',
        )
      tx.put('ssoSettings', KEY, { ...before, passwordSignInDisabled: disabled })
      tx.appendEvent(events.settingUpdated(SIMPLE_SETTING, { disabled }, { disabled: before.passwordSignInDisabled }))
    })
    return { disabled: this.passwordSignInOff() }
  }
}

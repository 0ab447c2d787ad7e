/**
 * OFREP event streams (protocol ADR-0008): the bulk answer names an SSE endpoint, and a web
 * provider that can open it refetches its bulk evaluation when told to instead of polling. The
 * browser's EventSource sends no headers, so the token cannot go with it: the endpoint's path holds
 * a channel that stands for the token. A channel is made from what every instance on the same data
 * knows, and nothing else: the token's name, then a keyed hash (HMAC-SHA-256 under a key derived
 * from the store's secret key) of the token as stored (name, secret hash, type, environment,
 * projects). So any instance, the one that named it or another, and the same one after a restart,
 * checks it without having seen it; nobody without the key can make or alter one; and it stops
 * being valid when its token is deleted, gets another secret or scope, or expires. What comes down
 * a channel is only "something changed, refetch" (no flag, no value), so a channel that leaks
 * tells no more than that, and the token's name.
 */
import { AuthenticationRequired } from '../../errors'
import type { Store } from '../../storage/store'
import type { SdkScope, SdkTokenType } from '../tokens/auth'
import { SecretHasher } from '../tokens/secret-hash'
import { tokenExpired, type ApiTokenRecord } from '../tokens/tokens.records'

/** Base64url characters of the hash a channel carries: 144 bits. */
const MAC_LENGTH = 24

export interface ChannelHolder {
  tokenName: string
  type: SdkTokenType
  scope: SdkScope
}

export class OfrepChannels {
  private readonly keyed: Bun.CryptoHasher
  /** The channel last made for each token, with the record it was made from: a bulk answer costs no hash while its token is unchanged. */
  private readonly made = new Map<string, { token: ApiTokenRecord; channel: string }>()

  constructor(private readonly store: Pick<Store, 'state' | 'watch' | 'secretKey'>) {
    // A key of its own, derived from the store's: a channel's hash is never a token secret's hash.
    this.keyed = new Bun.CryptoHasher(
      'sha256',
      new Bun.CryptoHasher('sha256', store.secretKey).update('ofrep-channel').digest(),
    )
    store.watch('tokens', name => this.made.delete(name))
  }

  /** The channel of the token `tokenName`, which this request was authenticated with. */
  channelFor(tokenName: string): string {
    const token = this.store.state.tokens[tokenName]
    if (token === undefined) throw new AuthenticationRequired('The API token was deleted meanwhile')
    const kept = this.made.get(tokenName)
    if (kept?.token === token) return kept.channel
    const channel = `${Buffer.from(tokenName).toString('base64url')}.${this.mac(token)}`
    this.made.set(tokenName, { token, channel })
    return channel
  }

  /** Whose channel this is, if it was made for a token that still exists as it was then and has not expired. */
  holder(channel: string): ChannelHolder | undefined {
    const dot = channel.indexOf('.')
    if (dot < 0) return undefined
    const tokenName = Buffer.from(channel.slice(0, dot), 'base64url').toString()
    const tokens = this.store.state.tokens
    const token = Object.hasOwn(tokens, tokenName) ? tokens[tokenName] : undefined
    if (token === undefined || token.type === 'admin' || tokenExpired(token, Date.now())) return undefined
    if (!SecretHasher.same(channel.slice(dot + 1), this.mac(token))) return undefined
    return { tokenName, type: token.type, scope: { projects: token.projects, environment: token.environment } }
  }

  private mac(token: ApiTokenRecord): string {
    const signed = JSON.stringify([token.tokenName, token.secretHash, token.type, token.environment, token.projects])
    return this.keyed.copy().update(signed).digest('base64url').slice(0, MAC_LENGTH)
  }
}

/**
 * OFREP event streams (protocol ADR-0008): the bulk answer names an SSE endpoint, and a web
 * provider that can open it refetches its bulk evaluation when told to instead of polling. The
 * browser's EventSource sends no headers, so the token cannot go with it: the endpoint's path holds
 * a channel, an unguessable id this process gives a token (the first time it asks for a bulk
 * answer) and keeps for as long as the token keeps its scope. What comes down a channel is only
 * "something changed, refetch" (no flag, no value), so a channel that leaks tells no more than that.
 * Channels live in memory: after a restart an old one is 401, the provider gives up on that
 * stream and polls or asks the bulk route again, which names a new one.
 */
import type { Store } from '../../storage/store'
import { sameScope } from '../streaming/streaming.service'
import { tokenExpired } from '../tokens/tokens.records'
import type { SdkScope } from '../tokens/auth'

export class OfrepChannels {
  private readonly byToken = new Map<string, string>()
  private readonly byChannel = new Map<string, { tokenName: string; scope: SdkScope }>()

  constructor(private readonly store: Pick<Store, 'state' | 'watch'>) {
    store.watch('tokens', (name, before, after) => {
      if (before !== undefined && !sameScope(before, after)) this.forget(name)
    })
  }

  /** The channel of the token `tokenName`, authenticated with `scope` by this request. */
  channelFor(tokenName: string, scope: SdkScope): string {
    let channel = this.byToken.get(tokenName)
    if (channel === undefined) {
      channel = Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url')
      this.byToken.set(tokenName, channel)
      this.byChannel.set(channel, { tokenName, scope })
    }
    return channel
  }

  /** Whose channel this is, if its token still exists and has not expired. */
  holder(channel: string): { tokenName: string; scope: SdkScope } | undefined {
    const held = this.byChannel.get(channel)
    if (held === undefined) return undefined
    const token = this.store.state.tokens[held.tokenName]
    if (token === undefined || tokenExpired(token, Date.now())) return undefined
    return held
  }

  private forget(tokenName: string): void {
    const channel = this.byToken.get(tokenName)
    if (channel === undefined) return
    this.byToken.delete(tokenName)
    this.byChannel.delete(channel)
  }
}

/**
 * One held stream of the streaming service: the source of its response's body (a Bun direct
 * stream), what it is sent before the response starts, and the bytes its client has not taken yet.
 */
import type { Scope } from '../client/client.service'

/** Bun's direct stream controller: writes go to the socket's buffer, without a queue of chunks in between. */
export interface DirectSink {
  write(chunk: Uint8Array): number | Promise<number>
  flush(): number | Promise<number>
  /**
   * With a reason, resets the connection and drops what waits in its buffer (Bun writes the reason
   * to stderr); without one, ends the response once what waits is sent.
   */
  close(reason?: string): void
}

/**
 * One held stream, and the underlying source of its response's body (a Bun direct stream). Its
 * methods are the class's, not closures, and its `pull` returns at once instead of awaiting the
 * end: an idle stream is this object, its Response and Bun's own bookkeeping (about 10 objects),
 * where closures and an awaiting pull made it 26, which every major collection marks and every
 * collection's roots reach (docs/realtime.md, "what an idle stream holds").
 */
export class HeldStream {
  /** Bun's direct stream: a message is written straight to the socket, which at 10,000 streams costs markedly less per write than a standard stream's queue. */
  readonly type = 'direct'
  /** Null until the server starts sending the response; what is sent before waits in `early`. */
  sink: DirectSink | null = null
  early: Uint8Array[] | null
  /** Bytes written that the socket has not taken yet (they wait in Bun's buffer). */
  unsent = 0
  closed = false

  constructor(
    private readonly owner: { forget(stream: HeldStream): void },
    first: Uint8Array,
    readonly tokenName: string,
    /** The client's address, for a frontend token's stream (counted against STREAMING_MAX_STREAMS_PER_ADDRESS); else null. */
    readonly address: string | null,
    /** When its token expires (ms), Infinity for never: nothing is sent to it from then on. */
    readonly expiresAt: number,
    readonly group: Group,
    /** The heartbeat slot it is in. */
    readonly slot: Set<HeldStream>,
    /**
     * Whether its credential still holds, checked once per heartbeat interval (the console's live
     * channel: a session signed out or expired, a token deleted or its role changed); null: the
     * token's own checks (deletion, scope change, expiry) are enough.
     */
    readonly alive: (() => boolean) | null = null,
  ) {
    this.early = [first]
  }

  /** Bun's write answers a promise when the socket cannot take the bytes now; they count as unsent until it settles. */
  write(sink: DirectSink, bytes: Uint8Array): void {
    const written = sink.write(bytes)
    if (written instanceof Promise) {
      this.unsent += bytes.length
      written.then(
        () => (this.unsent -= bytes.length),
        () => this.owner.forget(this),
      )
    }
  }

  /** Called once, when the response starts. Returning no promise leaves the response open until `close()`. */
  pull(sink: DirectSink): void {
    try {
      for (const bytes of this.early ?? []) this.write(sink, bytes)
      this.early = null
      sink.flush()
      // Ended before the response started (a token deleted meanwhile, a stop): what it was sent, then nothing.
      if (this.closed) sink.close()
      else this.sink = sink
    } catch {
      // The client went away first.
      this.owner.forget(this)
    }
  }

  /** The client went away (Bun), or the reader was cancelled. */
  cancel(): void {
    this.owner.forget(this)
  }
}

/** Another protocol's notice of a change (OFREP's refetchEvaluation), made by that protocol's feature. */
export interface NoticeFormat {
  /** Streams of the same scope and format share one notice per commit. */
  name: string
  /** What the stream is sent as soon as it opens. */
  first: Uint8Array
  /** The notice of the change that made `revision`. */
  notice: (revision: number) => Uint8Array
}

/** Whom the live channel's messages may reach: as the event search decides what a caller sees (events.service.ts). */
export interface Audience {
  /** null: every project, and the events of no project. */
  projects: readonly string[] | null
  hiddenTypes: readonly string[]
}

/** Streams that are sent the same bytes: those of one scope in one format, or the live channel's of one audience. */
export type Group = ScopeGroup | LiveGroup

interface Grouped {
  /** The key the group is kept under: the kind's name and the scope's or the audience's key. */
  key: string
  streams: Set<HeldStream>
}

/**
 * Streams sent a message on each change to what `scope` serves: the client API's events
 * (`client`), or a notice in another protocol's format.
 */
export interface ScopeGroup extends Grouped {
  kind: 'client' | NoticeFormat
  scope: Scope
}

/** The console's live channel's streams of one audience (sent by `sendLive`, not per scope). */
export interface LiveGroup extends Grouped {
  kind: 'live'
  audience: Audience
}

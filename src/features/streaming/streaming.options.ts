/** The streaming settings (STREAMING_* in config.ts) and their defaults. */
export interface StreamingOptions {
  /** `STREAMING_MAX_STREAMS`: streams held at once; more are told to poll. */
  maxStreams: number
  /** `STREAMING_HEARTBEAT_MS`: how often an SSE comment is written to every stream. */
  heartbeatMs: number
  /** `STREAMING_MAX_STREAMS_PER_TOKEN`: streams one token holds at once, so that no token takes every slot. */
  maxStreamsPerToken?: number
  /** `STREAMING_MAX_STREAMS_PER_ADDRESS`: streams of frontend tokens (public ones) held for one client address. */
  maxStreamsPerAddress?: number
  /** `STREAMING_MAX_UNSENT_BYTES`: bytes a stream may have waiting for its client before it is ended. */
  maxUnsentBytes?: number
}

export const DEFAULT_STREAMING: Required<StreamingOptions> = {
  maxStreams: 10_000,
  heartbeatMs: 15_000,
  maxStreamsPerToken: 1000,
  maxStreamsPerAddress: 20,
  maxUnsentBytes: 256 * 1024,
}

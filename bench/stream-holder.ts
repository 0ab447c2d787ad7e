/**
 * Holds idle SSE streams for bench/streaming.ts in a process of its own, started at the lowest
 * priority (`nice -n 19`): in production the SDKs behind idle streams run on other machines, and
 * here their reading of heartbeats would otherwise take the same two cores as the server and wrk,
 * so that a slower /health with streams open measured the clients as much as the server.
 *
 *   bun bench/stream-holder.ts <base URL> <client token> <count>
 *
 * Prints `connected <count>` once every stream has its hydration, and closes them all when its
 * standard input ends (the benchmark kills it, or closes the pipe).
 */
import { holdStreams } from './streams'

const [base, secret, count] = process.argv.slice(2)
const streams = await holdStreams(base, secret, Number(count), () => {})
console.log(`connected ${count}`)
for await (const _ of Bun.stdin.stream()) {
  // Nothing is sent; the loop ends when the pipe closes.
}
streams.close()
process.exit(0)

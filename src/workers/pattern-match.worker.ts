/**
 * Runs project naming-pattern matches off the main thread, so that a pattern which backtracks
 * catastrophically costs a terminated worker instead of a hung server.
 */
import type { PatternMatchReply, PatternMatchRequest } from './pattern-match.messages'

declare const self: Worker

const compiled = new Map<string, RegExp>()

self.onmessage = (message: MessageEvent<PatternMatchRequest>) => {
  const { id, pattern, input } = message.data
  let regex = compiled.get(pattern)
  if (!regex) {
    if (compiled.size > 1000) compiled.clear()
    regex = new RegExp(`^(?:${pattern})$`)
    compiled.set(pattern, regex)
  }
  const started = performance.now()
  const matches = regex.test(input)
  const reply: PatternMatchReply = { id, matches, elapsedMs: performance.now() - started }
  self.postMessage(reply)
}

self.postMessage('ready')

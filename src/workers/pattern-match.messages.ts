export interface PatternMatchRequest {
  id: number
  pattern: string
  input: string
}

export interface PatternMatchReply {
  id: number
  matches: boolean
  /** How long the match took inside the worker. */
  elapsedMs: number
}

export interface PatternMatchRequest {
  id: number
  pattern: string
  input: string
}

export interface PatternMatchReply {
  id: number
  matches: boolean
}

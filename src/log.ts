/**
 * The service's log: one JSON object per line, on standard output (errors on standard error),
 * below a level set by `LOG_LEVEL`. Nothing logged ever holds a token secret.
 */
import { writeSync } from 'node:fs'

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

export type LogSink = (line: string, level: Exclude<LogLevel, 'silent'>) => void

/**
 * Lines for standard output are gathered and written together, at most FLUSH_MS after the first of
 * them or once FLUSH_BYTES are waiting: one write per line (console.log) was a quarter of the
 * server's CPU time on an OFREP 304, where every request logs a line, and one write per turn of the
 * event loop (a turn holds one to three requests under load) still 7 to 9 % with its setImmediate
 * (measured with bun --cpu-prof; docs/ofrep.md). Warnings and errors go to standard error at once,
 * after what was gathered, so the two keep their order; what is gathered is written before the
 * process exits. A process killed outright (SIGKILL) loses at most FLUSH_MS of request lines.
 */
const FLUSH_MS = 20
const FLUSH_BYTES = 1 << 16
let gathered = ''
let flushTimer: ReturnType<typeof setTimeout> | undefined

function flushGathered() {
  if (flushTimer !== undefined) clearTimeout(flushTimer)
  flushTimer = undefined
  if (gathered === '') return
  const text = gathered
  gathered = ''
  try {
    writeSync(1, text)
  } catch {
    // Standard output closed (a pipe whose reader left): the lines are lost, as console.log would lose them.
  }
}
process.on('exit', flushGathered)

const defaultSink: LogSink = (line, level) => {
  if (level === 'error' || level === 'warn') {
    flushGathered()
    console.error(line)
    return
  }
  gathered += line + '\n'
  if (gathered.length >= FLUSH_BYTES) flushGathered()
  else if (flushTimer === undefined) {
    flushTimer = setTimeout(flushGathered, FLUSH_MS)
    // Waiting lines never keep the process alive: they are written on exit.
    flushTimer.unref()
  }
}

export class Logger {
  constructor(
    readonly level: LogLevel = 'info',
    private readonly sink: LogSink = defaultSink,
  ) {}

  /** Whether lines of `level` are written; lets a hot path skip building fields nobody will see. */
  enabled(level: Exclude<LogLevel, 'silent'>): boolean {
    return RANK[level] >= RANK[this.level]
  }

  debug(msg: string, fields: Record<string, unknown> = {}) {
    this.write('debug', msg, fields)
  }
  info(msg: string, fields: Record<string, unknown> = {}) {
    this.write('info', msg, fields)
  }
  warn(msg: string, fields: Record<string, unknown> = {}) {
    this.write('warn', msg, fields)
  }
  error(msg: string, fields: Record<string, unknown> = {}) {
    this.write('error', msg, fields)
  }

  private write(level: Exclude<LogLevel, 'silent'>, msg: string, fields: Record<string, unknown>) {
    if (RANK[level] < RANK[this.level]) return
    this.sink(logLine(level, msg, fields), level)
  }
}

/** The time of the last line, as its text: lines come many to a millisecond under load. */
let stampedAt = Number.NaN
let stamp = ''
function timeText(): string {
  const now = Date.now()
  if (now !== stampedAt) {
    stampedAt = now
    stamp = new Date(now).toISOString()
  }
  return stamp
}

const MEMBER_NAMES = new Map<string, string>()
/** Names that would not keep their place after time, level and msg (an own one of those; an index, which objects put first). */
const REORDERED = /^(time|level|msg|\d.*)$/

/**
 * `JSON.stringify({ time, level, msg, ...fields })`, the same text, made without the spread copy
 * nor the object walk: the request log writes one per request, and the whole-object stringify was
 * measured at a tenth of an OFREP 304 in process (docs/ofrep.md). Strings and objects still go
 * through JSON.stringify each; a field whose name would move it falls back to the plain form.
 */
export function logLine(level: string, msg: string, fields: Record<string, unknown>): string {
  let line = `{"time":"${timeText()}","level":"${level}","msg":${JSON.stringify(msg)}`
  for (const name of Object.keys(fields)) {
    const value = fields[name]
    let text: string | undefined
    switch (typeof value) {
      case 'string':
        text = JSON.stringify(value)
        break
      case 'number':
        text = Number.isFinite(value) ? String(value) : 'null'
        break
      case 'boolean':
        text = value ? 'true' : 'false'
        break
      case 'undefined':
      case 'function':
      case 'symbol':
        continue
      default:
        text = JSON.stringify(value)
        if (text === undefined) continue
    }
    let member = MEMBER_NAMES.get(name)
    if (member === undefined) {
      if (REORDERED.test(name)) return JSON.stringify({ time: timeText(), level, msg, ...fields })
      member = `,${JSON.stringify(name)}:`
      if (MEMBER_NAMES.size < 1000) MEMBER_NAMES.set(name, member)
    }
    line += member + text
  }
  return line + '}'
}

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

let lastMs = 0
let lastTime = ''

/** The time as ISO 8601, made once per millisecond however many lines it stamps. */
function timeNow(): string {
  const ms = Date.now()
  if (ms !== lastMs) {
    lastMs = ms
    lastTime = new Date(ms).toISOString()
  }
  return lastTime
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

  /**
   * The line is `{"time","level","msg"}` followed by the fields, written out as JSON.stringify of
   * the merged object would but without making that object (a request line per request: measured
   * with bun --cpu-prof, benchmarks.md). Fields must not be named time, level or msg.
   */
  private write(level: Exclude<LogLevel, 'silent'>, msg: string, fields: Record<string, unknown>) {
    if (RANK[level] < RANK[this.level]) return
    const head = `{"time":"${timeNow()}","level":"${level}","msg":${JSON.stringify(msg)}`
    const rest = JSON.stringify(fields)
    this.sink(rest === '{}' ? `${head}}` : `${head},${rest.slice(1)}`, level)
  }
}

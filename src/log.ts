/**
 * The service's log: one JSON object per line, on standard output (errors on standard error),
 * below a level set by `LOG_LEVEL`. Nothing logged ever holds a token secret.
 */
import { write, writeSync } from 'node:fs'

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

export type LogSink = (line: string, level: Exclude<LogLevel, 'silent'>) => void

/**
 * Where the lines go: standard output, or standard error for warnings and errors. Writes are made
 * off the event loop (`fs.write`, one at a time and in order, both outputs in one queue so that a
 * warning stays after the lines before it), so that an output whose reader stops reading (a paused
 * terminal, a stuck log shipper, a full pipe) costs log lines, never answers: a blocking write on
 * the event loop stopped every request until the reader went on. Lines wait in memory while a
 * write is under way, at most `maxWaitingBytes`; past that they are dropped and counted, and once
 * the output takes lines again a warning says how many were lost.
 */
export class LogOutput {
  private readonly queue: { fd: number; text: string }[] = []
  private waitingBytes = 0
  private writing = false
  private dropped = 0
  private drained: (() => void)[] = []

  constructor(
    private readonly options: {
      maxWaitingBytes: number
      /** Writes `bytes` from `offset` to `fd`, then calls back with the bytes written (fs.write's shape). */
      write: (fd: number, bytes: Uint8Array, offset: number, done: (error: unknown, written: number) => void) => void
      /** The line that tells how many lines were dropped. */
      droppedLine: (count: number) => string
    },
  ) {}

  add(fd: number, text: string): void {
    if (this.waitingBytes + text.length > this.options.maxWaitingBytes) {
      this.dropped += lineCount(text)
      return
    }
    this.queue.push({ fd, text })
    this.waitingBytes += text.length
    if (!this.writing) this.writeNext()
  }

  /** Resolves once nothing waits (or at once when nothing does). */
  whenDrained(): Promise<void> {
    if (!this.writing && this.queue.length === 0) return Promise.resolve()
    return new Promise(resolve => this.drained.push(resolve))
  }

  /**
   * As the process exits: `text` for `fd` written now, blocking. Lines wait only while a write is
   * under way, and then nothing is written: that output may not be taking lines, and the exit must
   * not wait on it (stop() waits a bounded time for the lines first).
   */
  writeAtExit(fd: number, text: string, writeSync: (fd: number, text: string) => void): void {
    if (!this.writing && text !== '') writeSync(fd, text)
  }

  private writeNext(): void {
    if (this.queue.length === 0 && this.dropped > 0) {
      this.queue.push({ fd: 2, text: `${this.options.droppedLine(this.dropped)}\n` })
      this.dropped = 0
    }
    const chunk = this.queue.shift()
    if (!chunk) {
      for (const resolve of this.drained.splice(0)) resolve()
      return
    }
    this.writing = true
    const bytes = Buffer.from(chunk.text)
    const step = (offset: number) =>
      this.options.write(chunk.fd, bytes, offset, (error, written) => {
        // A closed output (a pipe whose reader left) loses its lines, as console.log would.
        if (!error && offset + written < bytes.length) return step(offset + written)
        this.writing = false
        this.waitingBytes -= chunk.text.length
        this.writeNext()
      })
    step(0)
  }
}

function lineCount(text: string): number {
  let count = 0
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++
  return Math.max(count, 1)
}

/** Log lines that may wait for a blocked output before lines are dropped. */
const MAX_WAITING_BYTES = 8 << 20

const output = new LogOutput({
  maxWaitingBytes: MAX_WAITING_BYTES,
  write: (fd, bytes, offset, done) => write(fd, bytes, offset, bytes.length - offset, null, done),
  droppedLine: count =>
    formatLine('warn', 'log lines dropped: the output did not take them', {
      dropped: count,
      waitedBytes: MAX_WAITING_BYTES,
    }),
})

/**
 * Lines for standard output are gathered and handed over together, at most FLUSH_MS after the
 * first of them or once FLUSH_BYTES are waiting: one write per line (console.log) was a quarter of
 * the server's CPU time on an OFREP 304, where every request logs a line, and one write per turn of
 * the event loop (a turn holds one to three requests under load) still 7 to 9 % with its
 * setImmediate (measured with bun --cpu-prof; docs/ofrep.md). Warnings and errors are handed over
 * at once, after what was gathered. What waits is written before the process exits. A process
 * killed outright (SIGKILL) loses at most FLUSH_MS of request lines.
 */
const FLUSH_MS = 20
const FLUSH_BYTES = 1 << 16
let gathered = ''
let flushTimer: ReturnType<typeof setTimeout> | undefined

function flushGathered() {
  if (flushTimer !== undefined) clearTimeout(flushTimer)
  flushTimer = undefined
  if (gathered === '') return
  output.add(1, gathered)
  gathered = ''
}
process.on('exit', () => {
  const rest = gathered
  gathered = ''
  output.writeAtExit(1, rest, (fd, text) => {
    try {
      writeSync(fd, text)
    } catch {}
  })
})

/** Resolves once every line logged so far is written, or after `timeoutMs` (an output that takes none). */
export function logWritten(timeoutMs: number): Promise<void> {
  flushGathered()
  return Promise.race([output.whenDrained(), Bun.sleep(timeoutMs)])
}

const outputSink: LogSink = (line, level) => {
  if (level === 'error' || level === 'warn') {
    flushGathered()
    output.add(2, `${line}\n`)
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

/** Where lines go: the process's outputs, or what a test reads them with (captureLogLines). */
let defaultSink: LogSink = outputSink

/**
 * A warning or error of code that has no Logger of the server's (the store, the SDK metrics,
 * integrations, sign-on, the database's connection): written whatever LOG_LEVEL says, the same
 * line a Logger writes.
 */
export function logAlways(level: 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}): void {
  defaultSink(formatLine(level, msg, fields), level)
}

/** For tests: every line that would be written goes to `read` instead, until the function returned is called. */
export function captureLogLines(read: LogSink): () => void {
  defaultSink = read
  return () => {
    defaultSink = outputSink
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
    private readonly sink: LogSink = (line, level) => defaultSink(line, level),
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
    this.sink(formatLine(level, msg, fields), level)
  }
}

/**
 * The line `{"time","level","msg"}` followed by the fields, written out as JSON.stringify of the
 * merged object would but without making that object (a request line per request: measured with
 * bun --cpu-prof, benchmarks.md). Fields must not be named time, level or msg.
 */
function formatLine(level: Exclude<LogLevel, 'silent'>, msg: string, fields: Record<string, unknown>): string {
  const head = `{"time":"${timeNow()}","level":"${level}","msg":${JSON.stringify(msg)}`
  const rest = JSON.stringify(fields)
  return rest === '{}' ? `${head}}` : `${head},${rest.slice(1)}`
}

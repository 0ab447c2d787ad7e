/**
 * The service's log: one JSON object per line, on standard output (errors on standard error),
 * below a level set by `LOG_LEVEL`. Nothing logged ever holds a token secret.
 */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

export type LogSink = (line: string, level: Exclude<LogLevel, 'silent'>) => void

const defaultSink: LogSink = (line, level) => (level === 'error' || level === 'warn' ? console.error(line) : console.log(line))

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
    this.sink(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }), level)
  }
}

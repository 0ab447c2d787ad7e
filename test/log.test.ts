/**
 * Log lines are made by hand (src/log.ts logLine) rather than by stringifying a spread object: the
 * text must be the one `JSON.stringify({ time, level, msg, ...fields })` gives, for every kind of
 * field a caller may pass.
 */
import { expect, setSystemTime, test, afterEach } from 'bun:test'
import { Logger, logLine } from '../src/log'

afterEach(() => setSystemTime())

const plain = (time: string, level: string, msg: string, fields: Record<string, unknown>) => JSON.stringify({ time, level, msg, ...fields })

const FIELD_SETS: Record<string, unknown>[] = [
  {},
  { method: 'POST', route: '/ofrep/v1/evaluate/flags', status: 304, durationMs: 0.12, requestId: 'a-b', tokenName: null, clientAddress: '127.0.0.1' },
  { route: null, tokenName: 'name with "quotes", a \\ backslash,\n a newline, \u2028 and é', status: 200 },
  { count: Number.NaN, big: 1e21, small: -0, infinite: -Infinity, float: 1 / 3, flag: true, off: false },
  { skipped: undefined, fn: () => 1, sym: Symbol('s'), kept: 'yes' },
  { nested: { a: [1, 'two', null, { b: undefined }] }, list: [undefined, () => 0], when: new Date(0) },
  { withToJson: { toJSON: () => undefined }, after: 1 },
  { 'odd "name"': 1, 'ünïcode': 2, '': 3 },
  // Names that an object would place elsewhere: an own time, level or msg keeps the first place, an index comes first.
  { msg: 'replaced', extra: 1 },
  { time: 'mine', level: 'mine' },
  { 7: 'index', name: 'x' },
  { name: 'x', 10: 'index later' },
]

test('a line is the text JSON.stringify gives for the same members', () => {
  setSystemTime(new Date('2026-11-26T13:16:05.941Z'))
  for (const level of ['debug', 'info', 'warn', 'error']) {
    for (const fields of FIELD_SETS) {
      for (const msg of ['request', 'a "quoted"\nmessage']) {
        expect(logLine(level, msg, fields)).toBe(plain('2026-11-26T13:16:05.941Z', level, msg, fields))
      }
    }
  }
})

test('each line has the time it was written, to the millisecond', () => {
  const lines: string[] = []
  const log = new Logger('info', (line) => lines.push(line))
  setSystemTime(new Date('2026-11-26T13:16:05.941Z'))
  log.info('one')
  log.info('two')
  setSystemTime(new Date('2026-11-26T13:16:05.942Z'))
  log.info('three')
  setSystemTime(new Date('2027-01-01T00:00:00.000Z'))
  log.warn('four', { n: 4 })
  expect(lines.map((line) => JSON.parse(line))).toEqual([
    { time: '2026-11-26T13:16:05.941Z', level: 'info', msg: 'one' },
    { time: '2026-11-26T13:16:05.941Z', level: 'info', msg: 'two' },
    { time: '2026-11-26T13:16:05.942Z', level: 'info', msg: 'three' },
    { time: '2027-01-01T00:00:00.000Z', level: 'warn', msg: 'four', n: 4 },
  ])
})

/**
 * The exposition at /internal-backstage/prometheus read strictly as Prometheus' text format 0.0.4
 * says: a parser below that takes each line apart character by character (names, label values with
 * their escapes, values, HELP and TYPE) and refuses anything the format does not allow, then the
 * rules across lines (one group per metric, TYPE before samples, histograms' buckets).
 */
// Store-independent: the text's form; the figures read from the store are checked on both stores in metrics.test.ts.
import { afterEach, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { Metrics } from '../../src/http/metrics'
import { Registry } from '../../src/http/prometheus'
import { makeApi, tokenFor, type Api } from '../helpers'

let api: Api | undefined
afterEach(async () => api?.close())

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

interface Family {
  name: string
  help: string
  type: string
  samples: Sample[]
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/
// Go's ParseFloat, as Prometheus reads a value: a decimal or exponent form, NaN, or an infinity.
const VALUE = /^(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|NaN|[-+]Inf)$/

function parseValue(text: string, line: string): number {
  if (!VALUE.test(text)) throw new Error(`not a value: ${JSON.stringify(text)} in ${JSON.stringify(line)}`)
  return text === 'NaN' ? Number.NaN : text.endsWith('Inf') ? (text[0] === '-' ? -Infinity : Infinity) : Number(text)
}

/** A sample line: name, optional `{name="value",…}`, one space, value (no timestamp here). */
function parseSample(line: string): Sample {
  const name = NAME.exec(line)?.[0]
  if (!name) throw new Error(`no metric name: ${JSON.stringify(line)}`)
  let at = name.length
  const labels: Record<string, string> = {}
  if (line[at] === '{') {
    at++
    while (line[at] !== '}') {
      const label = LABEL_NAME.exec(line.slice(at))?.[0]
      if (!label) throw new Error(`no label name at ${at}: ${JSON.stringify(line)}`)
      if (label in labels) throw new Error(`label ${label} twice: ${JSON.stringify(line)}`)
      at += label.length
      if (line.slice(at, at + 2) !== '="') throw new Error(`no ="… after ${label}: ${JSON.stringify(line)}`)
      at += 2
      let value = ''
      for (;;) {
        const c = line[at++]
        if (c === undefined) throw new Error(`unterminated label value: ${JSON.stringify(line)}`)
        if (c === '"') break
        if (c === '\\') {
          const escaped = line[at++]
          if (escaped === 'n') value += '\n'
          else if (escaped === '\\' || escaped === '"') value += escaped
          else throw new Error(`escape \\${escaped} not in the format: ${JSON.stringify(line)}`)
        } else value += c
      }
      labels[label] = value
      if (line[at] === ',') at++
      else if (line[at] !== '}') throw new Error(`, or } expected at ${at}: ${JSON.stringify(line)}`)
    }
    at++
  }
  if (line[at] !== ' ') throw new Error(`one space before the value: ${JSON.stringify(line)}`)
  return { name, labels, value: parseValue(line.slice(at + 1), line) }
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(.)/g, (whole, c: string) => {
    if (c === 'n') return '\n'
    if (c === '\\') return '\\'
    throw new Error(`escape ${whole} not allowed in HELP`)
  })
}

/** The families in the order written; throws on any line or order the format does not allow. */
function parse(text: string): Family[] {
  if (!text.endsWith('\n')) throw new Error('the text must end with a line feed')
  const families: Family[] = []
  const byName = new Map<string, Family>()
  let current: Family | undefined
  const family = (name: string) => {
    let found = byName.get(name)
    if (found === undefined) {
      found = { name, help: '', type: '', samples: [] }
      byName.set(name, found)
      families.push(found)
    } else if (found !== current) throw new Error(`${name}'s lines are not one group`)
    current = found
    return found
  }
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue
    const meta = /^# (HELP|TYPE) ([^ ]+) (.*)$/.exec(line)
    if (meta) {
      const [, keyword, name, rest] = meta as unknown as [string, 'HELP' | 'TYPE', string, string]
      if (NAME.exec(name)?.[0] !== name) throw new Error(`bad name in ${JSON.stringify(line)}`)
      const found = family(name)
      if (keyword === 'HELP') {
        if (found.help !== '') throw new Error(`HELP twice for ${name}`)
        found.help = unescapeHelp(rest)
      } else {
        if (found.type !== '') throw new Error(`TYPE twice for ${name}`)
        if (found.samples.length > 0) throw new Error(`TYPE after samples for ${name}`)
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) throw new Error(line)
        found.type = rest
      }
      continue
    }
    if (line.startsWith('#')) throw new Error(`a comment the service does not write: ${JSON.stringify(line)}`)
    const sample = parseSample(line)
    const histogramOf = sample.name.replace(/_(bucket|sum|count)$/, '')
    const owner = byName.get(histogramOf)?.type === 'histogram' ? histogramOf : sample.name
    family(owner).samples.push(sample)
  }
  for (const found of families) {
    const keys = found.samples.map(s => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())}`)
    expect({ name: found.name, duplicates: keys.length - new Set(keys).size }).toEqual({
      name: found.name,
      duplicates: 0,
    })
  }
  return families
}

/** A histogram's series by their labels other than `le`: buckets in order, sum and count. */
function histogramSeries(found: Family) {
  const series = new Map<string, { buckets: [string, number][]; sum?: number; count?: number }>()
  for (const sample of found.samples) {
    const { le, ...rest } = sample.labels
    const key = JSON.stringify(Object.entries(rest).sort())
    const entry = series.get(key) ?? { buckets: [] }
    series.set(key, entry)
    if (sample.name === `${found.name}_bucket`) entry.buckets.push([le!, sample.value])
    else if (sample.name === `${found.name}_sum`) entry.sum = sample.value
    else if (sample.name === `${found.name}_count`) entry.count = sample.value
    else throw new Error(`${sample.name} in histogram ${found.name}`)
    if (sample.name !== `${found.name}_bucket`) expect(le).toBeUndefined()
  }
  return series
}

async function scrape(): Promise<string> {
  const response = await api!.get('/internal-backstage/prometheus', { token: null })
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
  return response.text
}

const value = (families: Family[], name: string, labels: Record<string, string> = {}) =>
  families
    .find(f => f.name === name)
    ?.samples.find(s => s.name === name && JSON.stringify(s.labels) === JSON.stringify(labels))?.value

test('a scrape after requests, commits and SDK answers follows the text format line by line and as a whole', async () => {
  api = await makeApi()
  const token = await tokenFor(api, 'sdk', { type: 'client', environment: 'development', projects: ['*'] })
  await api.createFlag('default', 'formatted')
  await api.get('/health')
  await api.get('/api/client/features', { token })
  await api.get('/no/such/route')
  const text = await scrape()
  const families = parse(text)
  // Every family is described and typed, and its samples carry its name.
  expect(families.length).toBeGreaterThan(20)
  for (const found of families) {
    expect({ name: found.name, help: found.help.length > 0, type: found.type }).toEqual({
      name: found.name,
      help: true,
      type: expect.stringMatching(/^(counter|gauge|histogram)$/),
    })
    expect(found.samples.length).toBeGreaterThan(0)
    for (const sample of found.samples)
      expect(sample.name).toBeOneOf(
        found.type === 'histogram' ? ['_bucket', '_sum', '_count'].map(suffix => found.name + suffix) : [found.name],
      )
  }
  // Blocks are separated by exactly one blank line, and the text ends with one line feed.
  expect(text).not.toContain('\n\n\n')
  expect(text.endsWith('\n\n')).toBe(false)
  expect(value(families, 'http_requests_total', { method: 'GET', route: '/health', status: '200' })).toBe(1)
  expect(value(families, 'sdk_answers_total', { api: 'client', source: 'compiled' })).toBeGreaterThanOrEqual(1)
  expect(families.find(f => f.name === 'sdk_answers_total')?.type).toBe('counter')
})

test('histogram buckets are the fixed bounds, cumulative, and end with +Inf equal to _count', async () => {
  const store = { state: { flags: {}, projects: {}, tokens: {} }, lastEventId: 0, onCommitTimed() {}, onCommit() {} }
  const metrics = new Metrics(store as unknown as ConstructorParameters<typeof Metrics>[0])
  // On a bound (counted in it), between bounds, past the last bound (only in +Inf), and zero.
  for (const seconds of [0.001, 0.001, 0.003, 0.3, 0.3, 6, 60, 0]) metrics.observeRequest('GET', '/h', 200, seconds)
  metrics.observeRequest('GET', '/h', 500, 0.02)
  metrics.observeRequest('PUT', '/h', 200, 1)
  const families = parse(await metrics.render())
  const histograms = families.filter(f => f.type === 'histogram')
  expect(histograms.map(f => f.name).sort()).toEqual(['http_request_duration_seconds', 'store_commit_duration_seconds'])
  const bounds = ['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '+Inf']
  for (const found of histograms)
    for (const [labels, series] of histogramSeries(found)) {
      expect({ labels, les: series.buckets.map(([le]) => le) }).toEqual({ labels, les: bounds })
      const counts = series.buckets.map(([, count]) => count)
      for (let i = 1; i < counts.length; i++) expect(counts[i]!).toBeGreaterThanOrEqual(counts[i - 1]!)
      expect(counts.at(-1)).toBe(series.count!)
      expect(series.sum).toBeNumber()
    }
  const get = histogramSeries(histograms.find(f => f.name === 'http_request_duration_seconds')!).get(
    JSON.stringify(Object.entries({ method: 'GET', route: '/h' }).sort()),
  )!
  expect(Object.fromEntries(get.buckets)).toEqual({
    '0.001': 3,
    '0.0025': 3,
    '0.005': 4,
    '0.01': 4,
    '0.025': 5,
    '0.05': 5,
    '0.1': 5,
    '0.25': 5,
    '0.5': 7,
    '1': 7,
    '2.5': 7,
    '5': 7,
    '+Inf': 9,
  })
  expect(get.count).toBe(9)
  expect(get.sum).toBeCloseTo(0.001 * 2 + 0.003 + 0.3 * 2 + 6 + 60 + 0.02, 9)
})

test('label values with a double quote, a backslash and a line feed are escaped, and read back as they were', async () => {
  const store = { state: { flags: {}, projects: {}, tokens: {} }, lastEventId: 0, onCommitTimed() {}, onCommit() {} }
  const metrics = new Metrics(store as unknown as ConstructorParameters<typeof Metrics>[0])
  const route = 'a"b\\c\nd'
  metrics.observeRequest('GET', route, 200, 0.01)
  const text = await metrics.render()
  expect(text).toContain('http_requests_total{method="GET",route="a\\"b\\\\c\\nd",status="200"} 1')
  expect(text).toContain('http_request_duration_seconds_count{method="GET",route="a\\"b\\\\c\\nd"} 1')
  const families = parse(text)
  expect(value(families, 'http_requests_total', { method: 'GET', route, status: '200' })).toBe(1)
  // HELP text escapes backslash and line feed (and leaves a quote as it is).
  const registry = new Registry()
  registry.counter('escaped_total', 'a "quoted" back\\slash\nand a second line').series({ why: '"\\\n' }).value += 2
  const written = `${registry.render()}\n`
  expect(written).toBe(
    '# HELP escaped_total a "quoted" back\\\\slash\\nand a second line\n' +
      '# TYPE escaped_total counter\n' +
      'escaped_total{why="\\"\\\\\\n"} 2\n',
  )
  expect(parse(written)).toEqual([
    {
      name: 'escaped_total',
      help: 'a "quoted" back\\slash\nand a second line',
      type: 'counter',
      samples: [{ name: 'escaped_total', labels: { why: '"\\\n' }, value: 2 }],
    },
  ])
})

test('the parser refuses what the format does not allow', () => {
  const refused = [
    'x{a="b} 1\n',
    'x{a="\\t"} 1\n',
    'x{a=b} 1\n',
    'x 1', // no final line feed
    'x one\n',
    '1x 1\n',
    '# TYPE x counter\n# TYPE x counter\nx 1\n',
    'x 1\n# TYPE x counter\n',
    '# TYPE x counter\nx 1\n# TYPE y gauge\ny 1\nx{a="b"} 2\n',
    'x 1\nx 2\n',
  ]
  for (const text of refused) expect(() => parse(text), text).toThrow()
})

test('the process metrics are there with plausible figures, and CPU time grows with work', async () => {
  api = await makeApi()
  const families = parse(await scrape())
  const figure = (name: string) => value(families, name)
  const resident = figure('process_resident_memory_bytes')!
  expect(resident).toBeGreaterThan(10 * 1024 * 1024)
  expect(figure('nodejs_heap_size_used_bytes')).toBeGreaterThan(1024 * 1024)
  expect(figure('nodejs_external_memory_bytes')).toBeGreaterThanOrEqual(0)
  const user = figure('process_cpu_user_seconds_total')!
  const system = figure('process_cpu_system_seconds_total')!
  expect(user).toBeGreaterThan(0)
  expect(figure('process_cpu_seconds_total')).toBeCloseTo(user + system, 6)
  const started = figure('process_start_time_seconds')!
  expect(Math.abs(started - (Date.now() / 1000 - process.uptime()))).toBeLessThan(2)
  const hasProc = existsSync('/proc/self/status')
  if (hasProc) {
    expect(figure('process_virtual_memory_bytes')).toBeGreaterThan(resident)
    expect(figure('process_open_fds')).toBeGreaterThanOrEqual(3) // standard input, output and error at least
    expect(figure('process_max_fds')).toBeGreaterThanOrEqual(figure('process_open_fds')!)
  } else
    for (const name of ['process_virtual_memory_bytes', 'process_open_fds', 'process_max_fds'])
      expect(figure(name)).toBeUndefined()
  // The monitor's figures are NaN when it took no sample since the last scrape (another test's).
  for (const figureName of ['', '_min', '_max', '_mean', '_stddev', '_p50', '_p90', '_p99']) {
    const lag = figure(`nodejs_eventloop_lag${figureName}_seconds`)!
    expect({ figureName, lag: Number.isNaN(lag) || lag >= 0 }).toEqual({ figureName, lag: true })
  }

  // 50 ms of CPU in this process, the event loop blocked meanwhile, then a tick for the monitor.
  const before = process.cpuUsage()
  let spin = 0
  while (process.cpuUsage(before).user < 50_000) spin++
  expect(spin).toBeGreaterThan(0)
  await Bun.sleep(15)
  const after = parse(await scrape())
  expect(value(after, 'process_cpu_seconds_total')! - figure('process_cpu_seconds_total')!).toBeGreaterThanOrEqual(0.05)
  expect(value(after, 'process_cpu_user_seconds_total')! - user).toBeGreaterThanOrEqual(0.05)
  // The monitor saw the blocked loop: its figures are in order, the longest delay at least 10 ms.
  const lag = (name: string) => value(after, `nodejs_eventloop_lag_${name}_seconds`)!
  expect(lag('min')).toBeLessThanOrEqual(lag('p50'))
  expect(lag('p50')).toBeLessThanOrEqual(lag('p90'))
  expect(lag('p90')).toBeLessThanOrEqual(lag('p99'))
  expect(lag('p99')).toBeLessThanOrEqual(lag('max') * 1.01)
  expect(lag('max')).toBeGreaterThanOrEqual(0.01)
})

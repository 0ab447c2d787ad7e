/**
 * A small Prometheus registry: counters, gauges and histograms with fixed buckets, written in the
 * text exposition format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/).
 * A series is found once by its labels and then kept by its user, so that counting is a number
 * update: no key is made and no labels are checked per observation.
 */

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

export type Labels = Readonly<Record<string, string>>

/** A label value with backslash, double quote and newline escaped, as the format requires. */
const escapeLabel = (value: string) => value.replace(/[\\"\n]/g, c => (c === '\n' ? '\\n' : `\\${c}`))
/** HELP text escapes backslash and newline only. */
const escapeHelp = (text: string) => text.replace(/[\\\n]/g, c => (c === '\n' ? '\\n' : '\\\\'))

/** `name="value",…` in the labels' order, without braces; '' for no labels. */
function labelPairs(labels: Labels): string {
  return Object.entries(labels)
    .map(([name, value]) => `${name}="${escapeLabel(value)}"`)
    .join(',')
}

const braced = (pairs: string) => (pairs === '' ? '' : `{${pairs}}`)

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Number.POSITIVE_INFINITY) return '+Inf'
  if (value === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(value)
}

interface Metric {
  readonly name: string
  /** Appends this metric's sample lines. */
  samples(lines: string[]): void
}

/** Series by their labels, in the order they were first asked for. */
class Family<S> {
  private readonly series = new Map<string, S>()
  constructor(private readonly make: (pairs: string) => S) {}

  of(labels: Labels): S {
    const pairs = labelPairs(labels)
    let series = this.series.get(pairs)
    if (series === undefined) this.series.set(pairs, (series = this.make(pairs)))
    return series
  }

  entries() {
    return this.series.entries()
  }
}

export interface CounterSeries {
  value: number
}

export class Counter implements Metric {
  private readonly family = new Family<CounterSeries>(() => ({ value: 0 }))
  constructor(readonly name: string) {}

  /** The series of `labels` (made at 0 the first time): keep it and add to its `value`. */
  series(labels: Labels = {}): CounterSeries {
    return this.family.of(labels)
  }

  samples(lines: string[]) {
    for (const [pairs, { value }] of this.family.entries())
      lines.push(`${this.name}${braced(pairs)} ${formatValue(value)}`)
  }
}

/**
 * A metric read when scraped: `read` gives its value, or its values by labels. A gauge, or a
 * counter that something else keeps.
 */
export class Collected implements Metric {
  constructor(
    readonly name: string,
    private readonly read: () => number | readonly (readonly [Labels, number])[],
  ) {}

  samples(lines: string[]) {
    const read = this.read()
    const values = typeof read === 'number' ? [[{}, read] as const] : read
    for (const [labels, value] of values) lines.push(`${this.name}${braced(labelPairs(labels))} ${formatValue(value)}`)
  }
}

export class HistogramSeries {
  /** Observations per bucket, not cumulative: the one that took each (the +Inf one is `count` minus the rest). */
  readonly counts: number[]
  sum = 0
  count = 0

  constructor(
    private readonly bounds: readonly number[],
    /** `,name="value"…` after `le`, or '' */
    readonly rest: string,
  ) {
    this.counts = bounds.map(() => 0)
  }

  observe(value: number) {
    this.sum += value
    this.count += 1
    const bounds = this.bounds
    for (let index = 0; index < bounds.length; index++)
      if (value <= bounds[index]!) {
        this.counts[index]! += 1
        return
      }
  }
}

export class Histogram implements Metric {
  private readonly family: Family<HistogramSeries>
  private readonly les: string[]

  constructor(
    readonly name: string,
    bounds: readonly number[],
  ) {
    this.family = new Family(pairs => new HistogramSeries(bounds, pairs === '' ? '' : `,${pairs}`))
    this.les = bounds.map(bound => `le="${formatValue(bound)}"`)
  }

  /** The series of `labels` (made empty the first time): keep it and `observe` on it. */
  series(labels: Labels = {}): HistogramSeries {
    return this.family.of(labels)
  }

  samples(lines: string[]) {
    for (const [pairs, series] of this.family.entries()) {
      let cumulative = 0
      for (let index = 0; index < this.les.length; index++) {
        cumulative += series.counts[index]!
        lines.push(`${this.name}_bucket{${this.les[index]}${series.rest}} ${cumulative}`)
      }
      lines.push(`${this.name}_bucket{le="+Inf"${series.rest}} ${series.count}`)
      lines.push(`${this.name}_sum${braced(pairs)} ${formatValue(series.sum)}`)
      lines.push(`${this.name}_count${braced(pairs)} ${series.count}`)
    }
  }
}

type Type = 'counter' | 'gauge' | 'histogram'

/** Metrics in the order they were added, each written as HELP, TYPE and its samples. */
export class Registry {
  private readonly metrics: { metric: Metric; header: string }[] = []

  add<M extends Metric>(type: Type, help: string, metric: M): M {
    if (this.metrics.some(m => m.metric.name === metric.name)) throw new Error(`metric ${metric.name} added twice`)
    const header = `# HELP ${metric.name} ${escapeHelp(help)}\n# TYPE ${metric.name} ${type}`
    this.metrics.push({ metric, header })
    return metric
  }

  counter(name: string, help: string): Counter {
    return this.add('counter', help, new Counter(name))
  }

  /** A gauge, or a counter kept elsewhere, read when scraped. */
  collected(type: 'counter' | 'gauge', name: string, help: string, read: ConstructorParameters<typeof Collected>[1]) {
    return this.add(type, help, new Collected(name, read))
  }

  histogram(name: string, help: string, bounds: readonly number[]): Histogram {
    return this.add('histogram', help, new Histogram(name, bounds))
  }

  /** The metrics' blocks, separated by blank lines, without a final newline. */
  render(): string {
    return this.metrics
      .map(({ metric, header }) => {
        const lines = [header]
        metric.samples(lines)
        return lines.join('\n')
      })
      .join('\n\n')
  }
}

/**
 * A flag's usage: the SDKs' yes/no counts per hour over the last 48 hours (Unleash's
 * `GET /api/admin/client-metrics/features/:name/raw`), one chart per environment drawn with uPlot
 * on a canvas. The chart is an image to assistive technology (`role="img"`, named "Usage of <flag>
 * in <environment>, last 48 hours") described by a sentence of totals, the busiest hour and the
 * applications; with no counts the environment shows what to do instead. Colours are the theme's
 * tokens, read when drawing, and the chart is drawn again when the theme changes (useTheme).
 */
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { enc, get } from './api'
import { ChartLine } from 'lucide'
import { EmptyState, ErrorLine, useLoad } from './ui'
import { useTheme } from './theme'
import './pages.css'

export interface UsageBucket {
  featureName: string
  appName: string
  environment: string
  timestamp: string
  yes: number
  no: number
  variants: Record<string, number>
}

const HOUR = 3_600_000
const HOURS = 48

/** The flag's hourly buckets, loaded once for all its environments. */
export function useUsage(name: string) {
  return useLoad(
    () => get<{ data: UsageBucket[] }>(`/api/admin/client-metrics/features/${enc(name)}/raw?hoursBack=${HOURS}`),
    [name],
  )
}

interface Series {
  hours: number[]
  yes: number[]
  no: number[]
  apps: string[]
}

/** 48 hourly slots ending with the current hour, summed over applications. */
export function seriesOf(buckets: UsageBucket[], environment: string, now = Date.now()): Series {
  const last = Math.floor(now / HOUR) * HOUR
  const hours = Array.from({ length: HOURS }, (_, i) => last - (HOURS - 1 - i) * HOUR)
  const yes = hours.map(() => 0)
  const no = hours.map(() => 0)
  const apps = new Set<string>()
  for (const bucket of buckets) {
    if (bucket.environment !== environment) continue
    const at = Math.floor(Date.parse(bucket.timestamp) / HOUR) * HOUR
    const slot = hours.indexOf(at)
    if (slot === -1) continue
    yes[slot]! += bucket.yes
    no[slot]! += bucket.no
    apps.add(bucket.appName)
  }
  return { hours, yes, no, apps: [...apps].sort() }
}

const count = (n: number) => n.toLocaleString('en')
const hourText = (at: number) =>
  new Date(at).toLocaleString(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' })

/** The sentence a screen reader hears for the chart. */
export function summaryOf(series: Series): string {
  const yes = series.yes.reduce((a, b) => a + b, 0)
  const no = series.no.reduce((a, b) => a + b, 0)
  const totals = series.hours.map((_, i) => series.yes[i]! + series.no[i]!)
  const busiest = totals.indexOf(Math.max(...totals))
  const share = Math.round((yes / (yes + no)) * 100)
  return (
    `${count(yes + no)} evaluations in the last 48 hours: ${count(yes)} yes (${share} %) and ${count(no)} no. ` +
    `Busiest hour: ${hourText(series.hours[busiest]!)}, with ${count(totals[busiest]!)}. ` +
    `Reported by ${series.apps.join(', ')}.`
  )
}

const token = (element: Element, name: string) => getComputedStyle(element).getPropertyValue(name).trim()

function UsageChart({ flag, environment, series }: { flag: string; environment: string; series: Series }) {
  const box = useRef<HTMLDivElement>(null)
  const theme = useTheme()
  useEffect(() => {
    const element = box.current!
    const yes = token(element, '--color-success') || 'currentColor'
    const no = token(element, '--color-danger') || 'currentColor'
    const axis = { stroke: token(element, '--color-muted'), grid: { stroke: token(element, '--color-border') } }
    const chart = new uPlot(
      {
        width: Math.max(element.clientWidth, 240),
        height: 160,
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        axes: [{ ...axis }, { ...axis, size: 48 }],
        series: [{}, { label: 'yes', stroke: yes, width: 2 }, { label: 'no', stroke: no, width: 2, dash: [6, 4] }],
      },
      [series.hours.map(at => at / 1000), series.yes, series.no],
      element,
    )
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(element.clientWidth, 240), height: 160 }))
    resize.observe(element)
    return () => {
      resize.disconnect()
      chart.destroy()
    }
  }, [series, theme])
  const summaryId = `usage-${environment}-summary`
  return (
    <figure class="usage-chart">
      <div
        ref={box}
        role="img"
        aria-label={`Usage of ${flag} in ${environment}, last 48 hours`}
        aria-describedby={summaryId}
        class="chart-box"
      />
      <figcaption>
        <span class="legend-yes">yes</span> <span class="legend-no">no</span>{' '}
        <span id={summaryId}>{summaryOf(series)}</span>
      </figcaption>
    </figure>
  )
}

/** One environment's chart, or what to do when no SDK reported the flag there. */
export function EnvironmentUsage({
  flag,
  environment,
  usage,
}: {
  flag: string
  environment: string
  usage: ReturnType<typeof useUsage>
}) {
  if (usage.error) return <ErrorLine error={usage.error} />
  if (!usage.data) return null
  const series = seriesOf(usage.data.data, environment)
  const any = series.yes.some(n => n > 0) || series.no.some(n => n > 0)
  return (
    <section class="usage" aria-label={`Usage in ${environment}`}>
      <h4>Usage in {environment}</h4>
      {any ? (
        <UsageChart flag={flag} environment={environment} series={series} />
      ) : (
        <EmptyState icon={ChartLine} title={`No SDK reported ${flag} in ${environment} in the last 48 hours`}>
          Give an application a client token for {environment}: its SDK sends yes/no counts every minute, and they show
          here.
        </EmptyState>
      )}
    </section>
  )
}

/** What the usage-history tests share: a client token, a report, the history read, on a given app. */
import { expect, setSystemTime } from 'bun:test'
import type { Api } from '../../helpers'

export interface Row {
  featureName: string
  appName: string
  environment: string
  timestamp: string
  yes: number
  no: number
  variants: Record<string, number>
}
export interface History {
  version: number
  maturity: string
  featureName: string
  data: Row[]
}

export const HOUR = 3_600_000
export const START = Date.parse('2026-03-01T10:30:00.000Z')
export const at = (hours: number) => setSystemTime(new Date(START + hours * HOUR))

export const brief = (rows: Row[]) =>
  rows.map(row => [row.timestamp.slice(11, 13), row.environment, row.appName, row.yes, row.no])

/** The helpers over `current()`, the test's app, unless given another. */
export function usageHelpers(current: () => Api) {
  async function clientToken(environment = 'development', projects = ['*'], on = current()): Promise<string> {
    const name = `sdk-${Math.random().toString(36).slice(2, 10)}`
    const response = await on.createToken({ tokenName: name, type: 'client', projects, environment })
    expect(response.status).toBe(201)
    return response.body.secret
  }
  const report = (token: string, appName: string, toggles: Record<string, unknown>, on = current()) =>
    on.post(
      '/api/client/metrics',
      { appName, instanceId: `${appName}-1`, bucket: { start: 0, stop: 0, toggles } },
      { token },
    )
  const history = (flag: string, hoursBack?: string | number, on = current(), token?: string) =>
    on.get<History>(
      `/api/admin/client-metrics/features/${flag}/raw${hoursBack === undefined ? '' : `?hoursBack=${hoursBack}`}`,
      token ? { token } : {},
    )
  return { clientToken, report, history }
}

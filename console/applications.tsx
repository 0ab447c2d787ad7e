/** The SDK applications seen, and on a flag's page the applications that used it. */
import { AppWindow } from 'lucide'
import { enc, get } from './api'
import { EmptyState } from './components/empty-state'
import { ErrorLine, useLoad, TableWrap } from './ui'

interface Application {
  appName: string
  sdkVersion?: string
  strategies: string[]
  usage: { project: string; environments: string[] }[]
}

export function ApplicationsPage() {
  const { data, error } = useLoad(() => get<{ applications: Application[] }>('/api/admin/metrics/applications'), [])
  return (
    <main>
      <h1>Applications</h1>
      <ErrorLine error={error} />
      {data && data.applications.length === 0 && (
        <EmptyState icon={AppWindow} title="No application has registered yet">
          Applications appear here once an SDK connects with a client token: create one under API tokens and give it to
          the SDK.
        </EmptyState>
      )}
      <TableWrap label="Applications" hidden={data?.applications.length === 0}>
        <table aria-label="Applications">
          <thead>
            <tr>
              <th>Application</th>
              <th>SDK</th>
              <th>Used with</th>
            </tr>
          </thead>
          <tbody>
            {data?.applications.map(app => (
              <tr key={app.appName}>
                <td>{app.appName}</td>
                <td>{app.sdkVersion ?? '—'}</td>
                <td>
                  {app.usage
                    .map(
                      entry =>
                        `${entry.project === '*' ? 'all projects' : entry.project}: ${entry.environments.join(', ')}`,
                    )
                    .join('; ')}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </main>
  )
}

interface UsageRow {
  appName: string
  environment: string
  yes: number
  no: number
}

/** On a flag's page: the applications that used the flag (24 hours), and yes/no of the last hour. */
export function FlagUsage({ name }: { name: string }) {
  const { data, error } = useLoad(
    () =>
      get<{ lastHourUsage: UsageRow[]; seenApplications: string[] }>(`/api/admin/client-metrics/features/${enc(name)}`),
    [name],
  )
  const totals = new Map<string, UsageRow>()
  for (const row of data?.lastHourUsage ?? []) {
    const key = `${row.appName}\n${row.environment}`
    const sum = totals.get(key) ?? { appName: row.appName, environment: row.environment, yes: 0, no: 0 }
    totals.set(key, { ...sum, yes: sum.yes + row.yes, no: sum.no + row.no })
  }
  return (
    <section aria-label="Usage">
      <h2>Usage</h2>
      <ErrorLine error={error} />
      <p>Applications that used it in the last 24 hours: {data ? data.seenApplications.join(', ') || 'none' : '…'}</p>
      {totals.size > 0 && (
        <table aria-label="Evaluations in the last hour">
          <thead>
            <tr>
              <th>Application</th>
              <th>Environment</th>
              <th>Yes</th>
              <th>No</th>
            </tr>
          </thead>
          <tbody>
            {[...totals.values()].map(row => (
              <tr key={`${row.appName} ${row.environment}`}>
                <td>{row.appName}</td>
                <td>{row.environment}</td>
                <td>{row.yes}</td>
                <td>{row.no}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

/**
 * The official SDK acceptance tests (`@unleash/client-specification`) against the real process: each
 * specification file's `state` is made through the admin API in a project of its own (segments,
 * flags, strategies, variants, enabling, dependencies), the official Node SDK reads it with a client
 * token, and every `tests` / `variantTests` entry is asserted. Flag names are kept as the
 * specification's (flag-level variants hash with the flag name, rollouts with the groupId), so files
 * that share a flag name go to different service processes.
 */
import { afterAll, expect, test } from 'bun:test'
import { InMemStorageProvider, Unleash } from 'unleash-client'
import {
  affectedBy,
  ALTERED,
  batches as specBatches,
  createState,
  ENVIRONMENT,
  files,
  NOT_RUN,
  REFUSED,
} from '../client-specification'
import { adminCall, startService, type RunningService } from '../helpers/processes'
import { destroySdk, eventOf } from '../helpers/sdk'

const ADMIN = '*:*.spec-test-admin-secret-0123456789'

const servers: RunningService[] = []
const clients: Unleash[] = []

afterAll(async () => {
  for (const client of clients) destroySdk(client)
  for (const server of servers) await server.stop()
})

async function startServer(): Promise<string> {
  const service = await startService(ADMIN, 'flags-spec-')
  servers.push(service)
  return service.base
}

async function admin(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const answer = await adminCall(base, ADMIN, method, path, body)
  if (answer.status >= 300) throw new Error(`${method} ${path} → ${answer.status} ${answer.text}`)
  return answer.body
}

/** The SDK's variant as the specification writes it (`feature_enabled`; no payload key when there is none). */
function specVariant(variant: Record<string, unknown>, expected: Record<string, unknown>): Record<string, unknown> {
  const shaped: Record<string, unknown> = { name: variant.name, enabled: variant.enabled }
  if ('payload' in expected || variant.payload !== undefined) shaped.payload = variant.payload
  if ('feature_enabled' in expected) shaped.feature_enabled = variant.feature_enabled ?? variant.featureEnabled
  if ('featureEnabled' in expected) shaped.featureEnabled = variant.featureEnabled ?? variant.feature_enabled
  return shaped
}

test('every specification file whose flags the admin API stores passes with unleash-client', async () => {
  // Files that share a flag name go to different processes (flag names are unique per service).
  const batches = specBatches()

  const results: { file: string; failures: string[]; skipped: string[] }[] = []
  const unexpected: string[] = []
  const refused = new Set<string>()
  const altered = new Set<string>()
  for (const batch of batches) {
    const base = await startServer()
    for (const { file, spec } of batch.specs) {
      const project = `spec-${file.slice(0, 2)}`
      const refusals = await createState(
        (method, path, body) => adminCall(base, ADMIN, method, path, body),
        project,
        spec,
      )
      const skipped: string[] = []
      for (const [flag, message] of refusals) {
        const reason = REFUSED[`${file}/${flag}`]
        if (reason) {
          skipped.push(`${flag}: ${reason}`)
          refused.add(`${file}/${flag}`)
        } else unexpected.push(`${file}/${flag}: ${message}`)
      }
      const token = await admin(base, 'POST', '/api/admin/api-tokens', {
        tokenName: project,
        type: 'client',
        projects: [project],
        environment: ENVIRONMENT,
      })
      // A flag whose parent (at any depth) was refused is not evaluated as the specification means either.
      const affected = affectedBy(spec, refusals)
      const failures: string[] = []
      if ((spec.state.segments ?? []).length > 0) {
        // The two forms the SDK clients below are served: definitions at the top level, or none.
        for (const [spec, definitions] of [
          ['5.2.2', true],
          ['4.1.0', false],
        ] as const) {
          const body = await (
            await fetch(`${base}/api/client/features`, {
              headers: { authorization: token.secret, 'unleash-client-spec': spec },
            })
          ).json()
          if (Array.isArray(body.segments) !== definitions)
            failures.push(`Unleash-Client-Spec ${spec}: top-level segments ${JSON.stringify(body.segments)}`)
        }
      }
      // The SDK's own Unleash-Client-Spec (segments by id), then an older one (segment constraints inlined).
      const forms: { name: string; headers: Record<string, string> }[] = [
        { name: 'segment ids', headers: {} },
        { name: 'inlined', headers: { 'Unleash-Client-Spec': '4.1.0' } },
      ]
      for (const form of forms) {
        const client = new Unleash({
          url: `${base}/api`,
          appName: `spec-${file.slice(0, 2)}`,
          customHeaders: { Authorization: token.secret, ...form.headers },
          refreshInterval: 60_000,
          disableMetrics: true,
          storageProvider: new InMemStorageProvider(),
        })
        clients.push(client)
        const problems: string[] = []
        client.on('error', (error: Error) => problems.push(`error: ${error.message}`))
        await eventOf(client, 'synchronized')

        for (const entry of spec.tests ?? []) {
          if (affected(entry.toggleName)) continue
          const actual = client.isEnabled(entry.toggleName, entry.context as any)
          if (actual !== entry.expectedResult)
            failures.push(`${form.name}: ${entry.description}: isEnabled → ${actual}`)
        }
        for (const entry of spec.variantTests ?? []) {
          if (affected(entry.toggleName)) continue
          if (ALTERED[`${file}/${entry.toggleName}`]) {
            altered.add(`${file}/${entry.toggleName}`)
            if (!skipped.some(line => line.startsWith(`${entry.toggleName}:`)))
              skipped.push(`${entry.toggleName}: ${ALTERED[`${file}/${entry.toggleName}`]}`)
            continue
          }
          const actual = specVariant(
            client.getVariant(entry.toggleName, entry.context as any) as any,
            entry.expectedResult,
          )
          if (!Bun.deepEquals(actual, entry.expectedResult))
            failures.push(
              `${form.name}: ${entry.description}: getVariant → ${JSON.stringify(actual)}, expected ${JSON.stringify(entry.expectedResult)}`,
            )
        }
        failures.push(...problems.map(problem => `${form.name}: ${problem}`))
        destroySdk(client)
      }
      results.push({ file, failures, skipped })
    }
  }
  console.log(
    results
      .map(
        result =>
          `${result.file}: ${result.failures.length === 0 ? 'pass' : `${result.failures.length} failures`}${result.skipped.length ? ` (skipped ${result.skipped.join('; ')})` : ''}`,
      )
      .join('\n'),
  )
  expect(unexpected).toEqual([])
  expect(results.filter(result => result.failures.length > 0)).toEqual([])
  // Each listed exception still happens: a list entry the service no longer needs is noticed.
  expect([...refused].sort()).toEqual(Object.keys(REFUSED).sort())
  expect([...altered].sort()).toEqual(Object.keys(ALTERED).sort())
  expect(results.map(result => result.file).sort()).toEqual(files.filter(file => !NOT_RUN[file]).sort())
}, 60_000)

/**
 * The official SDK acceptance tests (`@unleash/client-specification`) through the frontend API: each
 * file's state is made through the admin API (test/client-specification.ts), and every test whose
 * context the frontend API can carry is asked through GET /api/frontend (query string) and through
 * POST /api/frontend (body): the flag is listed if and only if the specification says enabled, and a
 * listed flag's variant has the specification's name, enabled and payload.
 *
 * As unleash-proxy-client does, the context is sent with an appName and environment `default` (the
 * Node SDK the specification was written for adds the same). Not asserted, with the reason printed:
 * tests whose answer depends on the sessionId or the remoteAddress the context leaves out, because
 * the frontend API fills those in (a random session, the caller's address) where the SDK has none.
 */
// Store-independent: it checks the frontend API's evaluator against the SDK specification; the flags' writes
// take the one commit path that the feature tests run again on PostgreSQL.
import { afterAll, expect, test } from 'bun:test'
import {
  affectedBy,
  ALTERED,
  batches,
  createState,
  ENVIRONMENT,
  REFUSED,
  type SpecFile,
} from '../../client-specification'
import { makeApi, type Api } from '../../helpers'

const apps: Api[] = []
afterAll(async () => {
  for (const api of apps) await api.close()
})

type Context = Record<string, unknown> & { properties?: Record<string, unknown> }

/** Why the answer for `context` may depend on what the frontend API fills in; null when it cannot. */
function dependsOnDefaults(spec: SpecFile, name: string, context: Context, seen = new Set<string>()): string | null {
  const feature = (spec.state.features ?? []).find(candidate => candidate.name === name)
  if (!feature || seen.has(name)) return null
  seen.add(name)
  const segmentConstraints = (ids: number[] = []) =>
    ids.flatMap(id => (spec.state.segments ?? []).find(segment => segment.id === id)?.constraints ?? [])
  const has = (field: string) => context[field] !== undefined && context[field] !== null && context[field] !== ''
  const noSession = !has('sessionId')
  const noAddress = !has('remoteAddress')
  // The SDK's default stickiness: userId, else sessionId, else remoteAddress, else random.
  const reads = (stickiness: string | undefined) => {
    const field = !stickiness || stickiness === 'default' ? (has('userId') ? 'userId' : 'sessionId') : stickiness
    return (field === 'sessionId' && noSession) || (field === 'remoteAddress' && noAddress)
  }
  const why = (what: string) => `${name} reads the ${what} the context leaves out`
  // With the default stickiness the SDK hashes a random id when there is none: only a rollout of 0 or
  // 100 %, or a single variant with weight, gives the same answer for any id.
  const certain = (stickiness: string | undefined, percentage: string | undefined) =>
    (!stickiness || stickiness === 'default') && ['0', '100'].includes(String(percentage))
  const oneVariant = (list: Record<string, unknown>[], stickiness: string | undefined) =>
    (!stickiness || stickiness === 'default') && list.filter(variant => Number(variant.weight) > 0).length === 1
  for (const strategy of feature.strategies) {
    const parameters = strategy.parameters ?? {}
    for (const constraint of [...(strategy.constraints ?? []), ...segmentConstraints(strategy.segments)]) {
      if (
        (constraint.contextName === 'sessionId' && noSession) ||
        (constraint.contextName === 'remoteAddress' && noAddress)
      )
        return why(constraint.contextName)
    }
    if (strategy.name === 'gradualRolloutSessionId' && noSession) return why('sessionId')
    if (strategy.name === 'remoteAddress' && noAddress) return why('remoteAddress')
    if (
      strategy.name === 'flexibleRollout' &&
      reads(parameters.stickiness) &&
      !certain(parameters.stickiness, parameters.rollout)
    )
      return why(`stickiness field (${parameters.stickiness ?? 'default'})`)
    const variants = strategy.variants ?? []
    const variantStickiness = (variants[0]?.stickiness as string | undefined) || parameters.stickiness
    if (variants.length > 0 && reads(variantStickiness) && !oneVariant(variants, variantStickiness))
      return why('stickiness field of its strategy variants')
  }
  const variants = (feature.variants ?? []) as Record<string, unknown>[]
  const stickiness = variants[0]?.stickiness as string | undefined
  if (variants.length > 0 && reads(stickiness) && !oneVariant(variants, stickiness))
    return why('stickiness field of its variants')
  for (const dependency of feature.dependencies ?? []) {
    const parent = dependsOnDefaults(spec, dependency.feature, context, seen)
    if (parent) return parent
  }
  return null
}

function queryOf(context: Context): string {
  const parts: string[] = []
  for (const [key, value] of Object.entries(context)) {
    if (key === 'properties' || value === null || value === undefined) continue
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`)
  }
  // A property without a value (null) is left out: to the SDK that is the same as no property.
  for (const [key, value] of Object.entries(context.properties ?? {})) {
    if (value !== null && value !== undefined)
      parts.push(`${encodeURIComponent(`properties[${key}]`)}=${encodeURIComponent(String(value))}`)
  }
  return parts.length > 0 ? `?${parts.join('&')}` : ''
}

interface Toggle {
  name: string
  enabled: boolean
  variant: { name: string; enabled: boolean; payload?: unknown; feature_enabled: boolean; featureEnabled: boolean }
  impressionData: boolean
}

test('every specification test whose context the frontend API can carry gets the specification’s answer through GET and POST /api/frontend', async () => {
  const report: string[] = []
  const failures: string[] = []
  let asserted = 0
  for (const batch of batches()) {
    const api = await makeApi()
    apps.push(api)
    const call = async (method: string, path: string, body?: unknown) =>
      api.request<any>(method, path, body === undefined ? {} : { body })
    for (const { file, spec } of batch.specs) {
      const project = `spec-${file.slice(0, 2)}`
      const refusals = await createState(call, project, spec)
      // The system test (test/system/client-specification.test.ts) holds every refusal to its list; here they are only left out.
      const affected = affectedBy(spec, refusals)
      const token = await api.createToken({
        tokenName: project,
        type: 'frontend',
        projects: [project],
        environment: ENVIRONMENT,
      })
      expect(token.status).toBe(201)
      const ask = async (context: Context) => {
        const sent = { appName: project, environment: 'default', ...context }
        const byQuery = await api.get<{ toggles: Toggle[] }>(`/api/frontend${queryOf(sent)}`, {
          token: token.body.secret,
        })
        const byBody = await api.post<{ toggles: Toggle[] }>(
          '/api/frontend',
          { context: sent },
          { token: token.body.secret },
        )
        expect(byQuery.status).toBe(200)
        expect(byBody.status).toBe(200)
        return [
          ['GET', byQuery.body.toggles],
          ['POST', byBody.body.toggles],
        ] as const
      }
      const skipped = new Map<string, number>()
      const skip = (reason: string) => skipped.set(reason, (skipped.get(reason) ?? 0) + 1)
      const applies = (name: string, context: Context) => {
        if (affected(name)) return false
        const reason = dependsOnDefaults(spec, name, context)
        if (reason) skip(reason)
        return reason === null
      }
      for (const entry of spec.tests ?? []) {
        if (!applies(entry.toggleName, entry.context as Context)) continue
        for (const [method, toggles] of await ask(entry.context as Context)) {
          asserted++
          const listed = toggles.some(toggle => toggle.name === entry.toggleName)
          if (listed !== entry.expectedResult)
            failures.push(`${file} ${method}: ${entry.description}: listed ${listed}, expected ${entry.expectedResult}`)
        }
      }
      for (const entry of spec.variantTests ?? []) {
        if (ALTERED[`${file}/${entry.toggleName}`] || !applies(entry.toggleName, entry.context as Context)) continue
        const expected = entry.expectedResult as {
          name: string
          enabled: boolean
          payload?: unknown
          feature_enabled?: boolean
        }
        for (const [method, toggles] of await ask(entry.context as Context)) {
          asserted++
          const toggle = toggles.find(candidate => candidate.name === entry.toggleName)
          // Listed iff the flag is enabled; the specification says so in feature_enabled, or, in older files, by a disabled variant.
          const enabled = expected.feature_enabled ?? !(expected.name === 'disabled' && !expected.enabled)
          if (!toggle) {
            if (enabled)
              failures.push(`${file} ${method}: ${entry.description}: not listed, expected ${JSON.stringify(expected)}`)
            continue
          }
          const actual = {
            name: toggle.variant.name,
            enabled: toggle.variant.enabled,
            ...(toggle.variant.payload !== undefined ? { payload: toggle.variant.payload } : {}),
          }
          const wanted = {
            name: expected.name,
            enabled: expected.enabled,
            ...(expected.payload !== undefined ? { payload: expected.payload } : {}),
          }
          if (
            !enabled ||
            !Bun.deepEquals(actual, wanted) ||
            !toggle.variant.feature_enabled ||
            !toggle.variant.featureEnabled
          ) {
            failures.push(
              `${file} ${method}: ${entry.description}: ${JSON.stringify(toggle.variant)}, expected ${JSON.stringify(expected)}`,
            )
          }
        }
      }
      const refused = [...refusals.keys()].map(flag => `${flag}: ${REFUSED[`${file}/${flag}`] ?? 'refused'}`)
      report.push(
        `${file}: ${
          [...skipped]
            .map(([reason, count]) => `${count} skipped (${reason})`)
            .concat(refused.map(line => `not run: ${line}`))
            .join('; ') || 'all asserted'
        }`,
      )
    }
  }
  console.log(`${report.join('\n')}\n${asserted} answers compared`)
  expect(failures).toEqual([])
  // The files are read, not skipped wholesale: thousands of answers are compared.
  expect(asserted).toBeGreaterThan(300)
}, 60_000)

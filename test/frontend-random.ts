/**
 * Random flags (made through the admin API) and random contexts for comparing evaluations: every
 * strategy type the SDK knows but the random ones, every operator, inverted and case-insensitive
 * forms, segments, strategy and flag variants with payloads, overrides and stickiness, parents on,
 * off and with variants, a user-defined strategy type. The contexts always carry a sessionId, a
 * remoteAddress and the field variants are sticky on, so that no answer is random. Used by
 * test/features/frontend/frontend-evaluation.test.ts (against the SDK's engine), ofrep-evaluation.test.ts and
 * test/features/playground/playground.property.test.ts.
 */
import type { FeatureInterface } from 'unleash-client/lib/feature'
import type { Segment } from 'unleash-client/lib/strategy/strategy'
import { expectOk, type Api } from './helpers'
import type { Random } from './random'

export const ENVIRONMENT = 'development'
export const PROJECT = 'default'
const USERS = Array.from({ length: 30 }, (_, i) => `user-${i}`).concat(['', 'Ünïcode-ø', '42'])
const ADDRESSES = [
  '10.1.2.3',
  '10.200.0.1',
  '192.168.1.1',
  '192.168.1.2',
  '172.16.5.4',
  '2001:db8::1',
  '2001:db9::1',
  '::ffff:10.0.0.1',
  'not-an-ip',
  '',
]
const VERSIONS = [
  '1.2.3',
  '1.10.0',
  '1.10.0-beta.1',
  '1.10.0-beta.11',
  '2.0.0+build.5',
  'v1.3.0',
  '1.2',
  '0.9.0',
  ' 1.4.0 ',
]
const EMAILS = ['a@example.com', 'B@EXAMPLE.COM', 'c@other.org', 'd@example.org', '']
const TIMES = ['2020-06-01T00:00:00.000Z', '2024-01-01T00:00:00Z', '2030-01-01T12:00:00.000Z', 'garbage']

function constraint(random: Random, segmentIds: number[]) {
  const inverted = random.chance(0.25)
  const kinds = [
    () => ({
      contextName: random.pick(['userId', 'plan', 'appName', 'environment']),
      operator: random.pick(['IN', 'NOT_IN']),
      values: random.some(['user-1', 'user-2', 'user-3', 'pro', 'free', 'web', 'default', '42'], 4).concat(['user-0']),
    }),
    () => ({
      contextName: 'email',
      operator: random.pick(['STR_STARTS_WITH', 'STR_ENDS_WITH', 'STR_CONTAINS']),
      values: random.some(['a@', '@example.com', 'EXAMPLE', '.org', 'b'], 3).concat(['x']),
      caseInsensitive: random.chance(0.5),
    }),
    () => ({
      contextName: 'age',
      operator: random.pick(['NUM_EQ', 'NUM_GT', 'NUM_GTE', 'NUM_LT', 'NUM_LTE']),
      values: [],
      value: random.pick(['0', '17', '18', '30.5']),
    }),
    () => ({
      contextName: 'currentTime',
      operator: random.pick(['DATE_AFTER', 'DATE_BEFORE']),
      values: [],
      value: random.pick(['2023-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z']),
    }),
    () => ({
      contextName: 'version',
      operator: random.pick(['SEMVER_EQ', 'SEMVER_GT', 'SEMVER_GTE', 'SEMVER_LT', 'SEMVER_LTE']),
      values: [],
      value: random.pick(['1.2.3', '1.10.0-beta.2', '1.10.0', '2.0.0']),
    }),
    () => ({
      contextName: 'email',
      operator: 'REGEX',
      values: [],
      value: random.pick(['^[a-c]@', 'example\\.(com|org)$', 'B@']),
      caseInsensitive: random.chance(0.5),
      inverted: false,
    }),
    () => ({
      contextName: 'remoteAddress',
      operator: 'IN_CIDR',
      values: random
        .some(['10.0.0.0/8', '192.168.1.1', '2001:db8::/32', '172.16.0.0/12', '::ffff:10.0.0.0/104'], 3)
        .concat(['127.0.0.1']),
    }),
  ]
  const made: Record<string, unknown> = random.pick(kinds)()
  return {
    inverted: made.operator === 'REGEX' ? false : inverted,
    caseInsensitive: false,
    ...made,
    _segment: segmentIds,
  }
}

const payload = (random: Random, tag: string) =>
  random.pick([
    undefined,
    { type: 'string', value: `text-${tag}` },
    { type: 'json', value: `{"tag":"${tag}"}` },
    { type: 'number', value: '7' },
  ])

function strategy(random: Random, name: string, segmentIds: number[]) {
  const stickiness = random.pick(['default', 'userId', 'sessionId', 'plan'])
  const type = random.pick([
    'default',
    'flexibleRollout',
    'flexibleRollout',
    'userWithId',
    'remoteAddress',
    'gradualRolloutUserId',
    'gradualRolloutSessionId',
    'applicationHostname',
    'custom-rollout',
  ])
  const parameters: Record<string, string> =
    type === 'flexibleRollout'
      ? {
          rollout: String(random.pick([0, 10, 50, 90, 100])),
          stickiness,
          groupId: random.chance(0.8) ? name : 'shared-group',
        }
      : type === 'userWithId'
        ? { userIds: random.some(USERS.slice(0, 10), 5).join(', ') }
        : type === 'remoteAddress'
          ? { IPs: random.some(['10.0.0.0/8', '192.168.1.1', '172.16.5.4', '2001:db8::1'], 3).join(',') || '10.1.2.3' }
          : type.startsWith('gradualRollout')
            ? { percentage: String(random.pick([0, 25, 50, 100])), groupId: name }
            : type === 'applicationHostname'
              ? { hostNames: 'nowhere.example' }
              : type === 'custom-rollout'
                ? { percent: '100' }
                : {}
  const constraints = Array.from({ length: random.int(0, 2) }, () => constraint(random, segmentIds)).map(
    ({ _segment, ...rest }) => rest,
  )
  const variants = random.chance(0.3)
    ? random.some(['red', 'green', 'blue'], 3).map(variantName => ({
        name: variantName,
        weight: 0,
        weightType: 'variable',
        stickiness: stickiness === 'userId' ? 'sessionId' : stickiness,
        ...(payload(random, variantName) ? { payload: payload(random, variantName) } : {}),
      }))
    : []
  return {
    name: type,
    parameters,
    constraints,
    segments: random.some(segmentIds, 2),
    ...(variants.length > 0 ? { variants } : {}),
  }
}

export async function makeFlags(api: Api, random: Random): Promise<void> {
  expectOk(
    await api.post('/api/admin/strategies', {
      name: 'custom-rollout',
      parameters: [{ name: 'percent', type: 'percentage' }],
    }),
    201,
  )
  const segmentIds: number[] = []
  for (let i = 0; i < 4; i++) {
    const constraints = [constraint(random, [])].map(({ _segment, ...rest }) => rest)
    const created = await api.post<{ id: number }>('/api/admin/segments', { name: `segment-${i}`, constraints })
    expectOk(created, 201)
    segmentIds.push(created.body.id)
  }
  const names = Array.from({ length: 60 }, (_, i) => `flag-${String(i).padStart(2, '0')}`)
  for (const name of names) {
    expectOk(await api.createFlag(PROJECT, name, { impressionData: random.chance(0.2) }), 201)
    for (let k = random.int(0, 3); k > 0; k--)
      expectOk(
        await api.post(
          `/api/admin/projects/${PROJECT}/features/${name}/environments/${ENVIRONMENT}/strategies`,
          strategy(random, name, segmentIds),
        ),
      )
    if (random.chance(0.35)) {
      const stickiness = random.pick(['default', 'sessionId', 'plan'])
      const variants = random.some(['alpha', 'beta', 'gamma', 'delta'], 4).map((variantName, index) => ({
        name: variantName,
        weight: index === 0 && random.chance(0.3) ? 200 : 0,
        weightType: index === 0 ? 'fix' : 'variable',
        stickiness,
        overrides: random.chance(0.3)
          ? [{ contextName: random.pick(['userId', 'plan']), values: ['user-3', 'pro'] }]
          : [],
        ...(payload(random, variantName) ? { payload: payload(random, variantName) } : {}),
      }))
      if (variants.length > 0 && variants.every(variant => variant.weightType === 'fix'))
        variants[0].weightType = 'variable'
      if (variants.length > 0)
        expectOk(
          await api.put(
            `/api/admin/projects/${PROJECT}/features/${name}/environments/${ENVIRONMENT}/variants`,
            variants,
          ),
        )
    }
    if (random.chance(0.7)) expectOk(await api.toggle(PROJECT, name, ENVIRONMENT, true))
  }
  // Parents among the first twenty (which have none themselves: one level, as the admin API allows).
  for (const name of names.slice(20)) {
    if (!random.chance(0.4)) continue
    const parent = random.pick(names.slice(0, 20))
    const dependency = random.pick([
      { feature: parent },
      { feature: parent, enabled: false },
      { feature: parent, variants: random.some(['alpha', 'beta', 'disabled'], 2) },
    ])
    expectOk(await api.post(`/api/admin/projects/${PROJECT}/features/${name}/dependencies`, dependency))
  }
}

export function context(random: Random) {
  const properties: Record<string, string> = {}
  if (random.chance(0.7)) properties.email = random.pick(EMAILS)
  if (random.chance(0.7)) properties.version = random.pick(VERSIONS)
  if (random.chance(0.7)) properties.age = random.pick(['17', '18', '30.5', 'old', ''])
  // Always there: a variant sticky on a missing field would be chosen at random.
  properties.plan = random.pick(['pro', 'free', 'PRO'])
  // An SDK field among the properties: read where the root one is missing (the SDK's resolveContextValue).
  if (random.chance(0.3))
    properties[random.pick(['userId', 'appName', 'environment', 'currentTime'])] = random.pick([
      'user-1',
      'user-3',
      'web',
      'production',
      '2030-01-01T12:00:00.000Z',
    ])
  return {
    ...(random.chance(0.85) ? { userId: random.pick(USERS) } : {}),
    sessionId: `session-${random.int(0, 50)}`,
    remoteAddress: random.pick(ADDRESSES),
    appName: random.pick(['web', 'ios']),
    environment: random.pick(['default', 'production']),
    ...(random.chance(0.5) ? { currentTime: random.pick(TIMES) } : {}),
    properties,
  }
}

/**
 * The context as the browser SDK writes it in a query string (URLSearchParams: spaces as +), with
 * properties as properties[name] or, at random, as root fields (which the service moves into properties).
 */
export function queryOf(sent: ReturnType<typeof context>, random: Random): string {
  const { properties, ...root } = sent
  const query = new URLSearchParams(root as Record<string, string>)
  // At the root only a field that is not the SDK's own (which would stay a root field).
  const sdkField = (name: string) =>
    ['userId', 'sessionId', 'remoteAddress', 'appName', 'environment', 'currentTime'].includes(name)
  for (const [name, value] of Object.entries(properties))
    query.append(sdkField(name) || random.chance(0.5) ? `properties[${name}]` : name, value)
  return query.toString()
}

/** The flags and segments as the client API serves them to an SDK of the project's environment (its token named `sdk`). */
export async function servedFlags(api: Api): Promise<{ features: FeatureInterface[]; segments: Segment[] }> {
  const client = await api.createToken({
    tokenName: 'sdk',
    type: 'client',
    projects: [PROJECT],
    environment: ENVIRONMENT,
  })
  const served = await api.get<{ features: FeatureInterface[]; segments?: Segment[] }>('/api/client/features', {
    token: client.body.secret,
    headers: { 'unleash-client-spec': '5.2.0' },
  })
  expectOk(served)
  return { features: served.body.features, segments: served.body.segments ?? [] }
}

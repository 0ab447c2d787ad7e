/**
 * What the client API streams and the delta API answers is what /api/client/features answers: a
 * long random walk of admin writes (flags made, changed, archived, revived and deleted; strategies
 * added, changed, disabled and removed; variants; tags; dependencies; segments made, changed, moved
 * between projects and deleted; projects' environments disconnected and connected again) while
 * streams and delta pollers of several token scopes keep an SDK's copy from the events alone. After
 * every write each copy is compared with a fresh list for the same token. Streams are dropped and
 * resumed with Last-Event-ID along the way. Flags cannot move between projects (the API refuses it),
 * so that is not walked.
 */
import { expect, test } from 'bun:test'
import { makeApi, tokenFor, type Api } from '../../helpers'
import { seededRandom, type Random } from '../../random'
import { applyDelta, emptyCopy, SseReader, type Copy } from './sse'

const SPEC = { 'unleash-client-spec': '5.2.0' }
const PROJECTS = ['default', 'p2']
const ENVIRONMENTS = ['development', 'production']
const FLAGS = Array.from({ length: 8 }, (_, index) => `walk-${index}`)

interface Scope {
  name: string
  secret: string
  /** Projects whose segments the scope sees; null for all. */
  projects: string[] | null
}

interface Follower {
  scope: Scope
  stream: SseReader
  /** Messages of `stream` already applied. */
  applied: number
  streamCopy: Copy
  deltaCopy: Copy
  etag: string | null
}

async function openStream(api: Api, scope: Scope, lastEventId?: string): Promise<SseReader> {
  const headers: Record<string, string> = { authorization: scope.secret, ...SPEC }
  if (lastEventId) headers['last-event-id'] = lastEventId
  const response = await api.app.handle(new Request('http://localhost/api/client/streaming', { headers }))
  expect(response.status).toBe(200)
  return new SseReader(response)
}

/** Applies the stream's new messages; returns the event types of each. */
function follow(follower: Follower): string[][] {
  const seen: string[][] = []
  for (; follower.applied < follower.stream.messages.length; follower.applied++) {
    const message = follower.stream.messages[follower.applied]
    expect(['unleash-connected', 'unleash-updated']).toContain(message.event)
    seen.push(applyDelta(follower.streamCopy, JSON.parse(message.data)))
  }
  return seen
}

async function pollDelta(api: Api, follower: Follower): Promise<void> {
  const response = await api.get<{ events: unknown[] }>('/api/client/delta', {
    token: follower.scope.secret,
    headers: follower.etag ? { 'if-none-match': follower.etag } : {},
  })
  if (response.status === 304) return
  expect(response.status).toBe(200)
  applyDelta(follower.deltaCopy, response.body)
  follower.etag = response.headers.get('etag')
}

async function expected(api: Api, scope: Scope) {
  const list = await api.get<{ features: any[]; segments?: any[] }>('/api/client/features', {
    token: scope.secret,
    headers: SPEC,
  })
  expect(list.status).toBe(200)
  const segments = (await api.get<{ segments: any[] }>('/api/admin/segments')).body.segments
    .filter(segment => segment.project === null || scope.projects === null || scope.projects.includes(segment.project))
    .map(segment => ({ id: segment.id, name: segment.name, constraints: segment.constraints }))
    .sort((a, b) => a.id - b.id)
  return { features: list.body.features, referenced: list.body.segments ?? [], segments }
}

function compare(copy: Copy, truth: Awaited<ReturnType<typeof expected>>, what: string, step: number) {
  const features = [...copy.features.values()].sort((a, b) => (a.name < b.name ? -1 : 1))
  const segments = [...copy.segments.values()].sort((a, b) => a.id - b.id)
  expect({ what, step, features }).toEqual({ what, step, features: truth.features })
  // The list holds the segments its flags name; the copy every segment the scope may use.
  expect({ what, step, segments }).toEqual({ what, step, segments: truth.segments })
  for (const segment of truth.referenced) expect(copy.segments.get(segment.id)).toEqual(segment)
}

type Write = { kind: string; method: string; path: string; body?: unknown }

function randomConstraint(random: Random) {
  return random.pick([
    {
      contextName: 'userId',
      operator: 'IN',
      values: random.some(['1', '2', '3', '4'], 3).concat('9'),
      caseInsensitive: false,
      inverted: random.chance(0.2),
    },
    {
      contextName: 'appName',
      operator: 'STR_STARTS_WITH',
      values: ['shop'],
      caseInsensitive: random.chance(0.5),
      inverted: false,
    },
    { contextName: 'environment', operator: 'NOT_IN', values: ['test'], caseInsensitive: false, inverted: false },
  ])
}

/** One random admin write; some are refused (a flag that does not exist, a segment in use), which must change nothing. */
async function randomWrite(api: Api, random: Random): Promise<Write> {
  const flag = random.pick(FLAGS)
  let stored: any
  for (const candidate of PROJECTS) {
    const found = await api.get<any>(`/api/admin/projects/${candidate}/features/${flag}`)
    if (found.status === 200) stored = found.body
  }
  const project: string = stored?.project ?? random.pick(PROJECTS)
  const environment = random.pick(ENVIRONMENTS)
  const base = `/api/admin/projects/${project}/features/${flag}`
  const strategies: any[] = stored?.environments?.find((entry: any) => entry.name === environment)?.strategies ?? []
  const segments: any[] = (await api.get<{ segments: any[] }>('/api/admin/segments')).body.segments
  const usable = segments
    .filter(segment => segment.project === null || segment.project === project)
    .map(segment => segment.id)
  const strategy = () => ({
    name: random.pick(['flexibleRollout', 'default', 'userWithId']),
    parameters: random.chance(0.5)
      ? { rollout: String(random.int(0, 100)), stickiness: 'default', groupId: flag }
      : { userIds: '1,2' },
    constraints: random.some([randomConstraint(random), randomConstraint(random)], 2),
    segments: random.some(usable, 2),
    disabled: random.chance(0.15),
    variants: random.chance(0.3)
      ? [
          {
            name: 'v',
            weight: 1000,
            weightType: 'variable',
            stickiness: 'default',
            payload: { type: 'string', value: String(random.int(0, 9)) },
          },
        ]
      : [],
  })
  const choice = random.int(0, 17)
  switch (choice) {
    case 0:
    case 1:
      return {
        kind: 'create flag',
        method: 'POST',
        path: `/api/admin/projects/${random.pick(PROJECTS)}/features`,
        body: { name: flag, type: random.pick(['release', 'experiment']) },
      }
    case 2:
    case 3:
      return {
        kind: 'toggle',
        method: 'POST',
        path: `${base}/environments/${environment}/${random.chance(0.5) ? 'on' : 'off'}`,
      }
    case 4:
    case 5:
      return {
        kind: 'add strategy',
        method: 'POST',
        path: `${base}/environments/${environment}/strategies`,
        body: strategy(),
      }
    case 6:
      if (strategies.length === 0)
        return {
          kind: 'add strategy',
          method: 'POST',
          path: `${base}/environments/${environment}/strategies`,
          body: strategy(),
        }
      return {
        kind: 'change strategy',
        method: 'PUT',
        path: `${base}/environments/${environment}/strategies/${random.pick(strategies).id}`,
        body: strategy(),
      }
    case 7:
      if (strategies.length === 0)
        return { kind: 'toggle', method: 'POST', path: `${base}/environments/${environment}/off` }
      return {
        kind: 'delete strategy',
        method: 'DELETE',
        path: `${base}/environments/${environment}/strategies/${random.pick(strategies).id}`,
      }
    case 8:
      return {
        kind: 'variants',
        method: 'PUT',
        path: `${base}/environments/${environment}/variants`,
        body: random.some(['red', 'green', 'blue'], 3).map(name => ({
          name,
          weightType: 'variable',
          weight: 0,
          stickiness: 'default',
          overrides: random.chance(0.3) ? [{ contextName: 'userId', values: ['7'] }] : [],
        })),
      }
    case 9:
      return {
        kind: 'patch flag',
        method: 'PATCH',
        path: base,
        body: [
          random.pick([
            { op: 'replace', path: '/description', value: `d${random.int(0, 5)}` },
            { op: 'replace', path: '/stale', value: random.chance(0.5) },
            { op: 'replace', path: '/impressionData', value: random.chance(0.5) },
            { op: 'replace', path: '/type', value: random.pick(['release', 'kill-switch']) },
          ]),
        ],
      }
    case 10:
      return {
        kind: 'tag',
        method: 'POST',
        path: `/api/admin/features/${flag}/tags`,
        body: { type: 'simple', value: `t${random.int(0, 3)}` },
      }
    case 11:
      return { kind: 'archive', method: 'DELETE', path: base }
    case 12:
      return {
        kind: 'revive',
        method: 'POST',
        path: `/api/admin/projects/${project}/revive`,
        body: { features: [flag] },
      }
    case 13:
      return { kind: 'delete archived', method: 'DELETE', path: `/api/admin/archive/${flag}` }
    case 14: {
      const body = {
        name: `seg-${random.int(0, 3)}`,
        project: random.pick([null, ...PROJECTS]),
        constraints: [randomConstraint(random)],
      }
      if (segments.length > 0 && random.chance(0.6))
        return {
          kind: 'change segment',
          method: 'PUT',
          path: `/api/admin/segments/${random.pick(segments).id}`,
          body: { ...body, name: random.pick(segments).name },
        }
      return { kind: 'create segment', method: 'POST', path: '/api/admin/segments', body }
    }
    case 15:
      if (segments.length === 0)
        return {
          kind: 'create segment',
          method: 'POST',
          path: '/api/admin/segments',
          body: { name: 'seg-x', constraints: [randomConstraint(random)] },
        }
      return { kind: 'delete segment', method: 'DELETE', path: `/api/admin/segments/${random.pick(segments).id}` }
    case 16:
      return random.chance(0.5)
        ? {
            kind: 'disconnect environment',
            method: 'DELETE',
            path: `/api/admin/projects/p2/environments/${environment}`,
          }
        : {
            kind: 'connect environment',
            method: 'POST',
            path: '/api/admin/projects/p2/environments',
            body: { environment },
          }
    default:
      return (stored?.dependencies ?? []).length === 0 || random.chance(0.3)
        ? {
            kind: 'add dependency',
            method: 'POST',
            path: `${base}/dependencies`,
            body: { feature: random.pick(FLAGS.filter(name => name !== flag)), enabled: random.chance(0.7) },
          }
        : { kind: 'remove dependencies', method: 'DELETE', path: `${base}/dependencies` }
  }
}

for (const seed of [1, 2]) {
  test(`streams and delta polls of every scope follow a random walk of 300 writes exactly (seed ${seed})`, async () => {
    const api = await makeApi()
    const random = seededRandom(seed)
    await api.newProject('p2')
    await api.post('/api/admin/tag-types', { name: 'simple' })
    const scopes: Scope[] = [
      {
        name: 'all projects, development',
        secret: await tokenFor(api, 'all-dev', { type: 'client', projects: ['*'], environment: 'development' }),
        projects: null,
      },
      {
        name: 'default, development',
        secret: await tokenFor(api, 'default-dev', {
          type: 'client',
          projects: ['default'],
          environment: 'development',
        }),
        projects: ['default'],
      },
      {
        name: 'p2, production',
        secret: await tokenFor(api, 'p2-prod', { type: 'client', projects: ['p2'], environment: 'production' }),
        projects: ['p2'],
      },
      {
        name: 'all projects, production',
        secret: await tokenFor(api, 'all-prod', { type: 'client', projects: ['*'], environment: 'production' }),
        projects: null,
      },
    ]
    const followers: Follower[] = []
    for (const scope of scopes)
      followers.push({
        scope,
        stream: await openStream(api, scope),
        applied: 0,
        streamCopy: emptyCopy(),
        deltaCopy: emptyCopy(),
        etag: null,
      })
    const outcomes = new Map<string, { ok: number; refused: number }>()
    let resumed = 0
    let updates = 0
    for (let step = 0; step < 300; step++) {
      const write = await randomWrite(api, random)
      const response = await api.request(write.method, write.path, { body: write.body })
      expect(response.status).toBeLessThan(500)
      const outcome = outcomes.get(write.kind) ?? { ok: 0, refused: 0 }
      outcome[response.status < 300 ? 'ok' : 'refused']++
      outcomes.set(write.kind, outcome)
      for (const follower of followers) {
        const truth = await expected(api, follower.scope)
        // The events are sent just after the write is answered; reading them takes a few turns of the loop.
        await follower.stream.settle()
        for (const types of follow(follower)) if (types.some(type => type !== 'hydration')) updates++
        compare(
          follower.streamCopy,
          truth,
          `stream of ${follower.scope.name} after ${write.kind} ${write.path} → ${response.status}`,
          step,
        )
        await pollDelta(api, follower)
        compare(
          follower.deltaCopy,
          truth,
          `delta of ${follower.scope.name} after ${write.kind} ${write.path} → ${response.status}`,
          step,
        )
        if (random.chance(0.03)) {
          // A dropped connection: the SDK comes back naming the last id it read, and is sent only what it missed.
          const lastId = follower.stream.messages.at(-1)?.id ?? undefined
          await follower.stream.cancel()
          await api.request(
            'POST',
            `/api/admin/projects/${random.pick(PROJECTS)}/features/${random.pick(FLAGS)}/environments/development/on`,
          )
          follower.stream = await openStream(api, follower.scope, lastId)
          follower.applied = 0
          await follower.stream.until(() => follower.stream.messages.length > 0)
          const [types] = follow(follower)
          expect(types).not.toContain('hydration')
          resumed++
        }
      }
    }
    for (const follower of followers) {
      expect(follower.stream.ended).toBe(false)
      await follower.stream.cancel()
    }
    expect(api.services.streaming.streams).toBe(0)
    // The walk did what it says: every kind of write succeeded at least once, and streams were resumed.
    for (const [kind, outcome] of outcomes) expect({ kind, ok: outcome.ok > 0 }).toEqual({ kind, ok: true })
    expect(outcomes.size).toBeGreaterThanOrEqual(17)
    expect(resumed).toBeGreaterThan(0)
    expect(updates).toBeGreaterThan(100)
    await api.close()
  }, 120_000)
}

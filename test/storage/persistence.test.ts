/**
 * Persistence of the data directory: what one instance writes, the next one reads back exactly;
 * a crash mid-commit is recovered from; files that cannot be trusted stop the start and are left
 * alone; concurrent writes are serialised without losing any; reads never hand out the store's own
 * records.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openStore, EVENTS_FILE, JOURNAL_FILE, KEY_FILE, STATE_FILE } from '../../src/services'
import { EventsService } from '../../src/features/events/events.service'
import { StoreLoadError } from '../../src/storage/files'
import type { EventRecord } from '../../src/storage/records'
import type { Caller } from '../../src/features/tokens/permissions'
import {
  ADMIN_SECRET,
  makeApi,
  tempDir,
  type Api,
  type EnvironmentBody,
  type TagListBody,
  named,
  type ProjectListBody,
  type TagBody,
  defined,
  waitFor,
} from '../helpers'

let dirs: { path: string; remove(): void }[] = []
let apis: Api[] = []

afterEach(async () => {
  for (const api of apis) await api.close().catch(() => {})
  apis = []
  for (const dir of dirs) dir.remove()
  dirs = []
})

function newDir(): string {
  const dir = tempDir('flags-persistence-')
  dirs.push(dir)
  return dir.path
}

async function open(dataDir: string): Promise<Api> {
  const api = await makeApi({ dataDir })
  apis.push(api)
  return api
}

async function close(api: Api): Promise<void> {
  await api.close()
  apis = apis.filter(a => a !== api)
}

const statePath = (dir: string) => join(dir, STATE_FILE)
const journalPath = (dir: string) => join(dir, JOURNAL_FILE)
const eventsPath = (dir: string) => join(dir, EVENTS_FILE)

const readOrEmpty = (path: string) => (existsSync(path) ? readFileSync(path) : Buffer.alloc(0))

function filesOf(dir: string) {
  return {
    state: readFileSync(statePath(dir)),
    journal: readOrEmpty(journalPath(dir)),
    events: readFileSync(eventsPath(dir)),
  }
}

function expectFilesUnchanged(dir: string, before: { state: Buffer; journal: Buffer; events: Buffer }) {
  const after = filesOf(dir)
  expect(after.state.toString('utf8')).toBe(before.state.toString('utf8'))
  expect(after.journal.toString('utf8')).toBe(before.journal.toString('utf8'))
  expect(after.events.toString('utf8')).toBe(before.events.toString('utf8'))
}

function eventLines(dir: string): string[] {
  const text = readFileSync(eventsPath(dir), 'utf8')
  expect(text.endsWith('\n')).toBe(true)
  return text.slice(0, -1).split('\n')
}

/**
 * Opening the store and loading its event log (what start-up does before /ready) must fail;
 * returns the error (or fails the test when it opened).
 */
async function openError(dir: string): Promise<Error> {
  let opened = false
  try {
    const store = await openStore(dir)
    const events = new EventsService(store)
    try {
      await events.load()
    } finally {
      events.close()
    }
    opened = true
  } catch (error) {
    return error as Error
  }
  expect(opened).toBe(false)
  throw new Error('unreachable')
}

const ADMIN_CALLER: Caller = {
  tokenName: 'test-reader',
  kind: 'token',
  userId: 1,
  role: 'admin',
  projects: ['*'],
  credential: { check: () => 'admin' },
  permission: 'NONE',
}

/**
 * Projects (one with a naming pattern), an extra environment, flags with strategies, variants,
 * tags and a dependency, one archived, some toggled, and a project-limited editor token.
 * Returns the editor token's secret.
 */
async function buildScenario(api: Api): Promise<string> {
  const expectStatus = (label: string, response: { status: number; text: string }, status: number) => {
    if (response.status !== status)
      throw new Error(`${label}: expected ${status}, got ${response.status} ${response.text}`)
  }
  expectStatus(
    'create project checkout',
    await api.createProject('checkout', {
      name: 'Checkout',
      description: 'Everything about paying',
      featureNaming: { pattern: 'co\\.[a-z-]+', example: 'co.new-flow', description: 'Flags start with co.' },
    }),
    201,
  )
  expectStatus('create project search', await api.createProject('search', { name: 'Search' }), 201)
  expectStatus(
    'create environment',
    await api.post<EnvironmentBody>('/api/admin/environments', { name: 'staging', type: 'test', sortOrder: 150 }),
    201,
  )
  expectStatus(
    'connect staging',
    await api.post('/api/admin/projects/checkout/environments', { environment: 'staging' }),
    200,
  )
  expectStatus(
    'create co.parent',
    await api.createFlag('checkout', 'co.parent', {
      type: 'release',
      description: 'Parent flag',
      impressionData: true,
    }),
    201,
  )
  expectStatus(
    'create co.child',
    await api.createFlag('checkout', 'co.child', { type: 'experiment', description: 'Child flag' }),
    201,
  )
  expectStatus('create co.old', await api.createFlag('checkout', 'co.old', { type: 'operational' }), 201)
  expectStatus('create search-flag', await api.createFlag('search', 'search-flag', { type: 'kill-switch' }), 201)
  expectStatus(
    'add strategy',
    await api.post('/api/admin/projects/checkout/features/co.parent/environments/staging/strategies', {
      name: 'flexibleRollout',
      title: 'Half of web and ios',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'co.parent' },
      constraints: [{ contextName: 'appName', operator: 'IN', values: ['web', 'ios'] }],
      variants: [{ name: 'blue', weight: 500, weightType: 'variable', stickiness: 'default' }],
    }),
    200,
  )
  expectStatus(
    'set variants',
    await api.put('/api/admin/projects/checkout/features/co.parent/environments/production/variants', [
      { name: 'a', weight: 300, weightType: 'fix', stickiness: 'default', payload: { type: 'string', value: 'x' } },
      { name: 'b', weight: 0, weightType: 'variable', overrides: [{ contextName: 'userId', values: ['1', '2'] }] },
    ]),
    200,
  )
  expectStatus('tag 1', await api.post('/api/admin/features/co.parent/tags', { type: 'simple', value: 'team-a' }), 201)
  expectStatus('tag 2', await api.post('/api/admin/features/co.parent/tags', { value: 'payments' }), 201)
  expectStatus(
    'dependency',
    await api.post('/api/admin/projects/checkout/features/co.child/dependencies', {
      feature: 'co.parent',
      enabled: true,
      variants: ['a'],
    }),
    200,
  )
  expectStatus('toggle parent prod', await api.toggle('checkout', 'co.parent', 'production', true), 200)
  expectStatus('toggle child dev', await api.toggle('checkout', 'co.child', 'development', true), 200)
  expectStatus('toggle search-flag dev', await api.toggle('search', 'search-flag', 'development', true), 200)
  expectStatus('toggle search-flag dev off', await api.toggle('search', 'search-flag', 'development', false), 200)
  expectStatus(
    'stale',
    await api.patchFlag('checkout', 'co.child', [{ op: 'replace', path: '/stale', value: true }]),
    200,
  )
  expectStatus('archive co.old', await api.delete('/api/admin/projects/checkout/features/co.old'), 202)
  const token = await api.createToken({ tokenName: 'ci-bot', type: 'admin', role: 'editor', projects: ['checkout'] })
  expectStatus('token', token, 201)
  return token.body.secret
}

const READS = [
  '/api/admin/projects',
  '/api/admin/projects/default',
  '/api/admin/projects/checkout',
  '/api/admin/projects/search',
  '/api/admin/environments',
  '/api/admin/projects/checkout/features',
  '/api/admin/projects/search/features',
  '/api/admin/projects/default/features',
  '/api/admin/projects/checkout/features/co.parent',
  '/api/admin/projects/checkout/features/co.child',
  '/api/admin/projects/checkout/features/co.old',
  '/api/admin/projects/search/features/search-flag',
  '/api/admin/archive/features',
  '/api/admin/projects/checkout/features/co.parent/environments/staging/strategies',
  '/api/admin/projects/checkout/features/co.parent/environments/production/strategies',
  '/api/admin/projects/checkout/features/co.parent/environments/production/variants',
  '/api/admin/features/co.parent/tags',
  '/api/admin/api-tokens',
  '/api/admin/search/events?limit=1000',
]

async function readEverything(api: Api) {
  const result: Record<string, { status: number; body: unknown }> = {}
  for (const path of READS) {
    const response = await api.get(path)
    result[path] = { status: response.status, body: response.body }
  }
  return result
}

describe('a restart on the same data directory', () => {
  test('every project, environment, flag, strategy, variant, tag, dependency, archive and token reads back equal', async () => {
    const dir = newDir()
    const first = await open(dir)
    await buildScenario(first)
    const before = await readEverything(first)
    for (const [path, response] of Object.entries(before)) {
      expect({ path, status: response.status }).toEqual({ path, status: 200 })
    }
    // The scenario really is in there (guards against comparing two empty answers).
    expect((before['/api/admin/projects/checkout'].body as any).featureNaming).toEqual({
      pattern: 'co\\.[a-z-]+',
      example: 'co.new-flow',
      description: 'Flags start with co.',
    })
    expect((before['/api/admin/archive/features'].body as any).features.map((f: { name: string }) => f.name)).toEqual([
      'co.old',
    ])
    expect((before['/api/admin/features/co.parent/tags'].body as any).tags).toEqual([
      { type: 'simple', value: 'team-a' },
      { type: 'simple', value: 'payments' },
    ])
    const child = before['/api/admin/projects/checkout/features/co.child'].body as any
    expect(child.dependencies).toEqual([{ feature: 'co.parent', enabled: true, variants: ['a'] }])
    expect(child.stale).toBe(true)
    expect((before['/api/admin/projects/checkout/features/co.parent'].body as any).children).toEqual(['co.child'])
    await close(first)

    const second = await open(dir)
    const after = await readEverything(second)
    expect(after).toEqual(before)
  })

  test('the event log reads back with the same ids and contents, and nothing is re-seeded', async () => {
    const dir = newDir()
    const first = await open(dir)
    await buildScenario(first)
    const events = first.events()
    expect(events.length).toBeGreaterThan(20)
    await close(first)

    const second = await open(dir)
    expect(second.events()).toEqual(events)
    expect(second.lastEventId()).toBe(events.length)
    expect(second.services.store.state.lastEventId).toBe(events.length)
    const seeded = (type: string, key: 'project' | 'environment', value: string) =>
      second.events().filter(event => event.type === type && event[key] === value)
    expect(seeded('project-created', 'project', 'default')).toHaveLength(1)
    expect(seeded('environment-created', 'environment', 'development')).toHaveLength(1)
    expect(seeded('environment-created', 'environment', 'production')).toHaveLength(1)
    expect(
      second.events().filter(event => event.type === 'api-token-created' && event.createdBy === 'system'),
    ).toHaveLength(1)
    const search = await second.searchEvents('?type=IS:project-created&limit=1000')
    expect(search.status).toBe(200)
    expect(search.body.events.map(event => event.project).sort()).toEqual(['checkout', 'default', 'search'])
  })

  test('a token created before the restart still authenticates, with its role, projects and user id', async () => {
    const dir = newDir()
    const first = await open(dir)
    const secret = await buildScenario(first)
    const created = first
      .events()
      .find(event => event.type === 'api-token-created' && (event.data as any)?.tokenName === 'ci-bot')!
    expect(created).toBeDefined()
    const userId = first.services.store.state.tokens['ci-bot'].userId
    await close(first)

    const second = await open(dir)
    const projects = await second.get<ProjectListBody>('/api/admin/projects', { token: secret })
    expect(projects.status).toBe(200)
    expect(projects.body.projects.map(project => project.id)).toEqual(['checkout'])
    const sinceId = second.lastEventId()
    const off = await second.toggle('checkout', 'co.parent', 'production', false, { token: secret })
    expect(off.status).toBe(200)
    const added = second.eventsSince(sinceId)
    expect(added.map(event => [event.id, event.type, event.createdBy, event.createdByUserId])).toEqual([
      [sinceId + 1, 'feature-environment-disabled', 'ci-bot', userId],
    ])
    // Still limited to its project, still an editor (no token management).
    expect((await second.toggle('search', 'search-flag', 'development', true, { token: secret })).status).toBe(403)
    expect((await second.get('/api/admin/api-tokens', { token: secret })).status).toBe(403)
    // A wrong secret stays wrong.
    expect(
      (await second.get('/api/admin/projects', { token: secret.slice(0, -1) + (secret.endsWith('0') ? '1' : '0') }))
        .status,
    ).toBe(401)
  })

  test('user ids and event ids continue after a restart instead of starting over', async () => {
    const dir = newDir()
    const first = await open(dir)
    await buildScenario(first)
    const lastId = first.lastEventId()
    const ciBotUserId = first.services.store.state.tokens['ci-bot'].userId
    await close(first)

    const second = await open(dir)
    const token = await second.createToken({ tokenName: 'after-restart', type: 'admin' })
    expect(token.status).toBe(201)
    const userId = second.services.store.state.tokens['after-restart'].userId
    expect(userId).not.toBe(ciBotUserId)
    expect(userId).toBeGreaterThan(ciBotUserId)
    expect(second.eventsSince(lastId).map(event => [event.id, event.type])).toEqual([[lastId + 1, 'api-token-created']])
    await close(second)

    const third = await open(dir)
    expect(third.lastEventId()).toBe(lastId + 1)
    expect(eventLines(dir)).toHaveLength(lastId + 1)
  })

  test('the journal holds one compact line per commit while running; after a clean close state.json holds everything, compact', async () => {
    const dir = newDir()
    const api = await open(dir)
    await buildScenario(api)
    await api.services.store.flush()
    const journal = readFileSync(journalPath(dir), 'utf8').slice(0, -1).split('\n')
    expect(journal.length).toBeGreaterThan(5)
    journal.forEach(line => expect(JSON.stringify(JSON.parse(line))).toBe(line))
    expect(JSON.parse(journal.at(-1)!).lastEventId).toBe(api.lastEventId())
    const events = api.events()
    await close(api)

    expect(readdirSync(dir).sort()).toEqual([EVENTS_FILE, KEY_FILE, JOURNAL_FILE, STATE_FILE])
    expect(readFileSync(journalPath(dir), 'utf8')).toBe('')
    const stateText = readFileSync(statePath(dir), 'utf8')
    expect(stateText).not.toContain('\n')
    expect(stateText).not.toMatch(/^\s|\s$/)
    const state = JSON.parse(stateText)
    expect(JSON.stringify(state)).toBe(stateText)
    expect(state.formatVersion).toBe(1)
    expect(state.lastEventId).toBe(events.length)
    expect(Object.keys(state.projects).sort()).toEqual(['checkout', 'default', 'search'])
    expect(state.flags['co.old'].archived).toBe(true)
    // Only the hash of a secret is stored.
    expect(stateText).not.toContain(ADMIN_SECRET)

    const lines = eventLines(dir)
    expect(lines).toHaveLength(events.length)
    lines.forEach((line, index) => {
      const event = JSON.parse(line) as EventRecord
      expect(JSON.stringify(event)).toBe(line)
      expect(event.id).toBe(index + 1)
    })
    expect(lines.map(line => JSON.parse(line))).toEqual(events)
  })
})

describe('recovery from a crash', () => {
  test('a torn last line of events.jsonl (half a JSON object, no newline) is dropped and cut off the file', async () => {
    const dir = newDir()
    const first = await open(dir)
    await first.createFlag('default', 'kept-flag')
    const count = first.lastEventId()
    await close(first)
    const before = filesOf(dir)
    appendFileSync(eventsPath(dir), `{"id":${count + 1},"createdAt":"2026-01-01T00:00:00.000Z","type":"feature-cre`)

    const second = await open(dir)
    expect(second.lastEventId()).toBe(count)
    expectFilesUnchanged(dir, before)
    expect((await second.getFlag('default', 'kept-flag')).status).toBe(200)

    // The next write continues cleanly after the cut.
    expect((await second.createFlag('default', 'next-flag')).status).toBe(201)
    await second.services.store.flush()
    const lines = eventLines(dir)
    expect(lines.map(line => JSON.parse(line).id)).toEqual(Array.from({ length: lines.length }, (_, i) => i + 1))
    expect(JSON.parse(lines.at(-1)!).featureName).toBe('next-flag')
  })

  test('a complete last event without its newline is treated as torn and dropped', async () => {
    const dir = newDir()
    const first = await open(dir)
    await first.createFlag('default', 'kept-flag')
    const events = first.events()
    await close(first)
    const before = filesOf(dir)
    appendFileSync(eventsPath(dir), JSON.stringify({ ...events.at(-1)!, id: events.length + 1 }))

    const second = await open(dir)
    expect(second.events()).toEqual(events)
    expectFilesUnchanged(dir, before)
  })

  test('events appended after the last journal line (a crash between the two appends) are discarded', async () => {
    const dir = newDir()
    const first = await open(dir)
    expect((await first.createFlag('default', 'kept-flag')).status).toBe(201)
    await first.services.store.flush()
    const acknowledged = filesOf(dir)
    const count = first.lastEventId()
    // One commit: a crash leaves at most the events of the one commit that was in flight.
    expect((await first.createFlag('default', 'lost-flag')).status).toBe(201)
    await close(first)
    expect(eventLines(dir).length).toBeGreaterThan(count)
    // The crash: events.jsonl got the new events, the journal (and so the state) never did.
    writeFileSync(statePath(dir), acknowledged.state)
    writeFileSync(journalPath(dir), acknowledged.journal)

    const second = await open(dir)
    expect(second.lastEventId()).toBe(count)
    expect(second.events().some(event => event.featureName === 'lost-flag')).toBe(false)
    expectFilesUnchanged(dir, acknowledged)
    expect((await second.getFlag('default', 'lost-flag')).status).toBe(404)
    expect((await second.getFlag('default', 'kept-flag')).status).toBe(200)
    const search = await second.searchEvents('?feature=IS:lost-flag')
    expect(search.status).toBe(200)
    expect(search.body.total).toBe(0)

    // The discarded ids are given out again, to the new events.
    expect((await second.createFlag('default', 'lost-flag', { description: 'second try' })).status).toBe(201)
    await second.services.store.flush()
    const created = second.eventsSince(count)
    expect(created.map(event => [event.id, event.type, event.featureName])).toEqual([
      [count + 1, 'feature-created', 'lost-flag'],
    ])
    expect(JSON.parse(eventLines(dir)[count]).id).toBe(count + 1)
    expect(eventLines(dir)).toHaveLength(count + 1)
  })
})

describe('data files that cannot be trusted', () => {
  async function populated(): Promise<{ dir: string; count: number }> {
    const dir = newDir()
    const api = await open(dir)
    await api.createFlag('default', 'flag-one')
    await api.createFlag('default', 'flag-two')
    await api.post('/api/admin/features/flag-one/tags', { value: 'some-tag' })
    const count = api.lastEventId()
    await close(api)
    expect(count).toBeGreaterThanOrEqual(6)
    return { dir, count }
  }

  test.each([
    ['a truncated document', '{"formatVersion":1,'],
    ['garbage', 'garbage'],
    ['an empty file', ''],
  ])(
    'a state.json holding %s stops the start with an error naming the file, and no file is changed',
    async (_label, content) => {
      const { dir } = await populated()
      writeFileSync(statePath(dir), content)
      const before = filesOf(dir)
      const error = await openError(dir)
      expect(error).toBeInstanceOf(StoreLoadError)
      expect(error.message).toContain(statePath(dir))
      expect(error.message).toMatch(/JSON/)
      expectFilesUnchanged(dir, before)
      expect(readdirSync(dir).sort()).toEqual([EVENTS_FILE, KEY_FILE, JOURNAL_FILE, STATE_FILE])
    },
  )

  test.each([
    ['an array', '[]', /not a JSON object/],
    [
      'another format version',
      '{"formatVersion":2,"lastEventId":0,"nextUserId":1,"projects":{},"environments":{},"flags":{},"tokens":{}}',
      /formatVersion/,
    ],
    [
      'no lastEventId',
      '{"formatVersion":1,"nextUserId":1,"projects":{},"environments":{},"flags":{},"tokens":{}}',
      /lastEventId/,
    ],
    [
      'a collection that is not an object',
      '{"formatVersion":1,"lastEventId":0,"nextUserId":1,"projects":[],"environments":{},"flags":{},"tokens":{}}',
      /projects/,
    ],
  ])(
    'a state.json that is valid JSON but %s stops the start with an error naming the file and the problem',
    async (_label, content, problem) => {
      const { dir } = await populated()
      writeFileSync(statePath(dir), content)
      const before = filesOf(dir)
      const error = await openError(dir)
      expect(error).toBeInstanceOf(StoreLoadError)
      expect(error.message).toContain(statePath(dir))
      expect(error.message).toMatch(problem)
      expectFilesUnchanged(dir, before)
    },
  )

  test('a corrupt line in the middle of events.jsonl stops the start with an error naming the file and the line, and no file is changed', async () => {
    const { dir } = await populated()
    const lines = eventLines(dir)
    lines[2] = '{"id":3,"type":"feature-cre'
    writeFileSync(eventsPath(dir), lines.join('\n') + '\n')
    const before = filesOf(dir)
    const error = await openError(dir)
    expect(error).toBeInstanceOf(StoreLoadError)
    expect(error.message).toContain(eventsPath(dir))
    expect(error.message).toMatch(/line 3\b/)
    expectFilesUnchanged(dir, before)
  })

  test('an event line with the wrong id in the middle of events.jsonl stops the start, and no file is changed', async () => {
    const { dir } = await populated()
    const lines = eventLines(dir)
    ;[lines[1], lines[2]] = [lines[2], lines[1]]
    writeFileSync(eventsPath(dir), lines.join('\n') + '\n')
    const before = filesOf(dir)
    const error = await openError(dir)
    expect(error).toBeInstanceOf(StoreLoadError)
    expect(error.message).toContain(eventsPath(dir))
    expect(error.message).toMatch(/line 2\b/)
    expectFilesUnchanged(dir, before)
  })

  test('an events.jsonl holding fewer events than state.json acknowledges stops the start, and no file is changed', async () => {
    const { dir, count } = await populated()
    const lines = eventLines(dir)
    writeFileSync(eventsPath(dir), lines.slice(0, count - 2).join('\n') + '\n')
    const before = filesOf(dir)
    const error = await openError(dir)
    expect(error).toBeInstanceOf(StoreLoadError)
    expect(error.message).toContain(eventsPath(dir))
    expect(error.message).toContain(String(count - 2))
    expect(error.message).toContain(String(count))
    expect(error.message).toMatch(/missing/i)
    expectFilesUnchanged(dir, before)
  })

  test('a missing events.jsonl beside a state.json that acknowledges events stops the start, and nothing is created', async () => {
    const { dir } = await populated()
    rmSync(eventsPath(dir))
    const state = readFileSync(statePath(dir))
    const error = await openError(dir)
    expect(error).toBeInstanceOf(StoreLoadError)
    expect(error.message).toContain(eventsPath(dir))
    expect(existsSync(eventsPath(dir))).toBe(false)
    expect(readFileSync(statePath(dir)).equals(state)).toBe(true)
  })
})

describe('concurrent writes', () => {
  test('50 concurrent tag additions to one flag all succeed and none is lost', async () => {
    const dir = newDir()
    const api = await open(dir)
    expect((await api.createFlag('default', 'busy-flag')).status).toBe(201)
    const sinceId = api.lastEventId()
    const values = Array.from({ length: 50 }, (_, i) => `tag-${String(i).padStart(2, '0')}`)

    const responses = await Promise.all(
      values.map(value => api.post<TagBody>('/api/admin/features/busy-flag/tags', { type: 'simple', value })),
    )
    expect(responses.map(response => response.status)).toEqual(values.map(() => 201))
    expect(responses.map(response => response.body.value)).toEqual(values)

    const tags = await api.get<TagListBody>('/api/admin/features/busy-flag/tags')
    expect(tags.status).toBe(200)
    expect(tags.body.tags.map(tag => tag.value).sort()).toEqual(values)

    const added = api.eventsSince(sinceId)
    expect(added).toHaveLength(50)
    expect(added.map(event => event.id)).toEqual(Array.from({ length: 50 }, (_, i) => sinceId + 1 + i))
    expect(added.every(event => event.type === 'feature-tagged' && event.featureName === 'busy-flag')).toBe(true)
    expect(added.map(event => (event.data as any).value).sort()).toEqual(values)
    // Each event carries the flag's tags at that time: one more each time.
    expect(added.map(event => event.tags.length)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))

    // And all of it is on disk.
    await close(api)
    const reopened = await open(dir)
    expect((await reopened.get<TagListBody>('/api/admin/features/busy-flag/tags')).body.tags).toEqual(tags.body.tags)
    expect(reopened.eventsSince(sinceId)).toEqual(added)
  })

  test('50 concurrent PATCH replaces of the description all answer 200 and each records its own metadata event', async () => {
    const dir = newDir()
    const api = await open(dir)
    expect((await api.createFlag('default', 'patched-flag', { description: 'start' })).status).toBe(201)
    const sinceId = api.lastEventId()
    const values = Array.from({ length: 50 }, (_, i) => `description ${i}`)

    const responses = await Promise.all(
      values.map(value => api.patchFlag('default', 'patched-flag', [{ op: 'replace', path: '/description', value }])),
    )
    expect(responses.map(response => response.status)).toEqual(values.map(() => 200))

    const added = api.eventsSince(sinceId)
    expect(added.map(event => event.type)).toEqual(values.map(() => 'feature-metadata-updated'))
    expect(added.map(event => event.id)).toEqual(Array.from({ length: 50 }, (_, i) => sinceId + 1 + i))
    expect(added.map(event => (event.data as any).description).sort()).toEqual([...values].sort())
    // Serialised: each change starts from the one before it; no update is lost.
    expect((added[0].preData as any).description).toBe('start')
    for (let i = 1; i < added.length; i++) {
      expect((added[i].preData as any).description).toBe((added[i - 1].data as any).description)
    }
    const flag = await api.getFlag('default', 'patched-flag')
    expect(flag.body.description).toBe((added.at(-1)!.data as any).description)

    await close(api)
    const reopened = await open(dir)
    expect((await reopened.getFlag('default', 'patched-flag')).body).toEqual(flag.body)
  })

  test('each of 50 concurrent PATCH responses shows the flag as that patch left it', async () => {
    const api = await open(newDir())
    expect((await api.createFlag('default', 'echo-flag', { description: 'start' })).status).toBe(201)
    const values = Array.from({ length: 50 }, (_, i) => `description ${i}`)
    const responses = await Promise.all(
      values.map(value => api.patchFlag('default', 'echo-flag', [{ op: 'replace', path: '/description', value }])),
    )
    expect(responses.map(response => response.body.description)).toEqual(values)
  })

  test('a committed PATCH answers 200 with its own result even when the next queued write deletes the flag', async () => {
    const api = await open(newDir())
    expect((await api.createFlag('default', 'doomed-flag')).status).toBe(201)
    const sinceId = api.lastEventId()
    const patch = api.patchFlag('default', 'doomed-flag', [{ op: 'replace', path: '/archived', value: true }])
    // Once the archive is applied (and being written to disk), queue the deletion behind it.
    await waitFor(() => api.lastEventId() !== sinceId, 'the archive to be applied', { every: 0 })
    const remove = api.delete('/api/admin/archive/doomed-flag')
    const [patched, removed] = await Promise.all([patch, remove])
    expect(api.eventsSince(sinceId).map(event => event.type)).toEqual([
      'feature-metadata-updated',
      'feature-archived',
      'feature-deleted',
    ])
    expect(removed.status).toBe(200)
    // The archive was committed, so its answer is a success showing the archived flag.
    expect(patched.status).toBe(200)
    expect(patched.body.name).toBe('doomed-flag')
    expect(patched.body.archived).toBe(true)
  })

  test('a write that fails inside a busy batch does not undo or block the writes around it', async () => {
    const api = await open(newDir())
    expect((await api.createFlag('default', 'mixed-flag')).status).toBe(201)
    const sinceId = api.lastEventId()
    const requests = Array.from({ length: 20 }, (_, i) =>
      // Every third request repeats the tag of the request before it (409) or is too short (400).
      i % 3 === 2
        ? api.post('/api/admin/features/mixed-flag/tags', { value: i % 2 === 0 ? `ok-${i - 1}` : 'x' })
        : api.post('/api/admin/features/mixed-flag/tags', { value: `ok-${i}` }),
    )
    const responses = await Promise.all(requests)
    const expected = Array.from({ length: 20 }, (_, i) => (i % 3 === 2 ? (i % 2 === 0 ? 409 : 400) : 201))
    expect(responses.map(response => response.status)).toEqual(expected)
    const good = Array.from({ length: 20 }, (_, i) => i)
      .filter(i => i % 3 !== 2)
      .map(i => `ok-${i}`)
    const tags = await api.get<TagListBody>('/api/admin/features/mixed-flag/tags')
    expect(tags.body.tags.map(tag => tag.value).sort()).toEqual(good.sort())
    const added = api.eventsSince(sinceId)
    expect(added).toHaveLength(good.length)
    expect(added.map(event => event.id)).toEqual(Array.from({ length: good.length }, (_, i) => sinceId + 1 + i))
  })
})

describe('reads hand out copies', () => {
  test('changing a response body object does not change what the next GET returns', async () => {
    const api = await open(newDir())
    await buildScenario(api)
    const first = await api.getFlag('checkout', 'co.parent')
    const snapshot = structuredClone(first.body)
    first.body.description = 'changed'
    first.body.tags.push({ type: 'simple', value: 'injected' })
    first.body.environments[0].enabled = !first.body.environments[0].enabled
    defined(named(first.body.environments, 'staging').strategies)[0].parameters.rollout = '0'
    const again = await api.getFlag('checkout', 'co.parent')
    expect(again.body).toEqual(snapshot)
  })

  test('objects returned by the services are fresh copies: changing them changes no later read', async () => {
    const api = await open(newDir())
    await buildScenario(api)
    const { flags, relations, projects, tokens } = api.services
    const before = await readEverything(api)

    const flag = flags.get('checkout', 'co.parent') as any
    const mutate = (action: () => void) => {
      // Whether the copy may be changed is up to the caller; the store must not see it either way.
      try {
        action()
      } catch {}
    }
    mutate(() => (flag.description = 'changed'))
    mutate(() => flag.tags.push({ type: 'simple', value: 'injected' }))
    mutate(() => (flag.tags[0].value = 'renamed'))
    mutate(() => (flag.dependencies = []))
    mutate(() => (flag.children[0] = 'someone-else'))
    for (const environment of flag.environments) {
      mutate(() => (environment.enabled = !environment.enabled))
      for (const strategy of environment.strategies ?? []) {
        mutate(() => (strategy.parameters.rollout = '0'))
        mutate(() => strategy.constraints[0]?.values.push('android'))
        mutate(() => strategy.variants[0] && (strategy.variants[0].weight = 1))
      }
      for (const variant of environment.variants ?? []) {
        mutate(() => (variant.weight = 1))
        mutate(() => variant.overrides.push({ contextName: 'x', values: ['y'] }))
      }
    }
    const child = flags.get('checkout', 'co.child') as any
    mutate(() => (child.dependencies[0].enabled = false))
    mutate(() => child.dependencies[0].variants.push('b'))
    const tagList = relations.tags('co.parent') as any[]
    mutate(() => (tagList[0].value = 'renamed'))
    const projectList = projects.list(ADMIN_CALLER) as any[]
    for (const project of projectList) {
      mutate(() => project.environments.push('nowhere'))
      mutate(() => project.featureNaming && (project.featureNaming.pattern = '.*'))
    }
    const tokenList = tokens.list() as any[]
    mutate(() => tokenList[0].projects.push('elsewhere'))

    expect(await readEverything(api)).toEqual(before)
  })

  test('records held by the store are frozen, so changing one in place throws and changes nothing', async () => {
    const api = await open(newDir())
    await buildScenario(api)
    const before = await readEverything(api)
    const state = api.services.store.state
    const flag = state.flags['co.parent'] as any
    expect(Object.isFrozen(flag)).toBe(true)
    expect(Object.isFrozen(flag.tags)).toBe(true)
    expect(Object.isFrozen(flag.environments.staging.strategies[0].parameters)).toBe(true)
    expect(() => (flag.description = 'changed')).toThrow(TypeError)
    expect(() => flag.tags.push({ type: 'simple', value: 'injected' })).toThrow(TypeError)
    expect(() => (flag.tags[0].value = 'renamed')).toThrow(TypeError)
    expect(() => (flag.environments.production.enabled = false)).toThrow(TypeError)
    expect(() => (flag.environments.staging.strategies[0].parameters.rollout = '0')).toThrow(TypeError)
    expect(() => (flag.environments.production.variants[0].weight = 1)).toThrow(TypeError)
    const project = state.projects.checkout as any
    expect(() => (project.featureNaming.pattern = '.*')).toThrow(TypeError)
    expect(() => project.environments.push('nowhere')).toThrow(TypeError)
    const token = state.tokens['ci-bot'] as any
    expect(() => (token.role = 'admin')).toThrow(TypeError)
    expect(() => (token.projects[0] = '*')).toThrow(TypeError)
    // Events handed to commit listeners are frozen too.
    const event = api.events().at(-1) as any
    expect(() => (event.type = 'rewritten')).toThrow(TypeError)
    expect(() => ((api.events().at(-1) as any).data.name = 'rewritten')).toThrow(TypeError)

    expect(await readEverything(api)).toEqual(before)
  })

  test('records loaded from disk at start are frozen too', async () => {
    const dir = newDir()
    const first = await open(dir)
    await buildScenario(first)
    await close(first)
    const api = await open(dir)
    const flag = api.services.store.state.flags['co.parent'] as any
    expect(Object.isFrozen(flag)).toBe(true)
    expect(Object.isFrozen(flag.environments.staging.strategies[0].constraints[0].values)).toBe(true)
    expect(() => (flag.stale = true)).toThrow(TypeError)
    expect((await api.getFlag('checkout', 'co.parent')).body.stale).toBe(false)
  })
})

describe('failed writes', () => {
  test('a write answered with an error leaves both files byte-identical and records no event', async () => {
    const dir = newDir()
    const api = await open(dir)
    await buildScenario(api)
    await api.services.store.flush()
    const before = filesOf(dir)
    const lastId = api.lastEventId()

    // The expected status, or the statuses the contract leaves open.
    const failures: [string, () => Promise<{ status: number }>, number | number[]][] = [
      ['flag name breaking the naming pattern', () => api.createFlag('checkout', 'wrong-name'), 400],
      ['flag name already taken', () => api.createFlag('checkout', 'co.parent'), 409],
      ['archived flag name taken', () => api.createFlag('checkout', 'co.old'), 409],
      ['tag value too short', () => api.post('/api/admin/features/co.parent/tags', { value: 'x' }), 400],
      [
        'tag already on the flag',
        () => api.post('/api/admin/features/co.parent/tags', { type: 'simple', value: 'team-a' }),
        409,
      ],
      [
        'failed JSON-Patch test',
        () =>
          api.patchFlag('checkout', 'co.parent', [
            { op: 'replace', path: '/description', value: 'never saved' },
            { op: 'test', path: '/type', value: 'experiment' },
          ]),
        409,
      ],
      [
        'read-only field in a patch',
        () => api.patchFlag('checkout', 'co.parent', [{ op: 'replace', path: '/name', value: 'co.renamed' }]),
        400,
      ],
      [
        'wrongly typed patch value',
        () => api.patchFlag('checkout', 'co.parent', [{ op: 'replace', path: '/stale', value: 'yes' }]),
        400,
      ],
      ['project id taken', () => api.createProject('checkout'), 409],
      [
        'unknown flag in a bulk toggle',
        () => api.bulkToggle('checkout', 'production', ['co.parent', 'co.nope'], false),
        [400, 404],
      ],
      [
        'token without permission',
        () => api.toggle('checkout', 'co.parent', 'production', false, { token: null }),
        401,
      ],
    ]
    for (const [label, request, status] of failures) {
      const response = await request()
      const allowed = Array.isArray(status) ? status : [status]
      expect({ label, status: allowed.includes(response.status) ? allowed : response.status }).toEqual({
        label,
        status: allowed,
      })
      await api.services.store.flush()
      expect({ label, lastEventId: api.lastEventId() }).toEqual({ label, lastEventId: lastId })
      expectFilesUnchanged(dir, before)
    }
    // The store still takes writes afterwards.
    expect((await api.toggle('checkout', 'co.parent', 'production', false)).status).toBe(200)
    expect(api.lastEventId()).toBe(lastId + 1)
  })
})

describe('the state journal and checkpoints', () => {
  test('a write appends its changed records and events only: state.json is not rewritten and other flags are not written', async () => {
    const dir = newDir()
    const api = await open(dir)
    for (let i = 0; i < 30; i++) expect((await api.createFlag('default', `bulk-${i}`)).status).toBe(201)
    await api.services.store.flush()
    const before = filesOf(dir)
    expect(
      (await api.patchFlag('default', 'bulk-7', [{ op: 'replace', path: '/description', value: 'only me' }])).status,
    ).toBe(200)
    await api.services.store.flush()
    const after = filesOf(dir)
    expect(after.state.equals(before.state)).toBe(true)
    const journalAdded = after.journal.subarray(before.journal.length).toString('utf8')
    const eventsAdded = after.events.subarray(before.events.length).toString('utf8')
    expect(after.journal.subarray(0, before.journal.length).equals(before.journal)).toBe(true)
    expect(after.events.subarray(0, before.events.length).equals(before.events)).toBe(true)
    const entry = JSON.parse(journalAdded)
    expect(journalAdded.endsWith('\n') && journalAdded.indexOf('\n') === journalAdded.length - 1).toBe(true)
    expect(entry.changes.map(([collection, key]: [string, string]) => `${collection}/${key}`)).toEqual(['flags/bulk-7'])
    expect(
      eventsAdded
        .trim()
        .split('\n')
        .map(line => JSON.parse(line).type),
    ).toEqual(['feature-metadata-updated'])
  })

  test('once the journal passes its size limit a checkpoint is written and the journal starts afresh; a restart reads everything back', async () => {
    const dir = newDir()
    const api = await makeApi({ dataDir: dir, checkpointAfterBytes: 4000 })
    apis.push(api)
    let smallestJournal = Infinity
    for (let i = 0; i < 40; i++) {
      expect((await api.createFlag('default', `cp-${i}`, { description: 'x'.repeat(50) })).status).toBe(201)
      await api.services.store.flush()
      smallestJournal = Math.min(smallestJournal, readOrEmpty(journalPath(dir)).length)
    }
    expect(smallestJournal).toBeLessThan(4000)
    expect(readOrEmpty(journalPath(dir)).length).toBeLessThan(4000 + 3000)
    const list = (await api.listFlags('default')).body
    const events = api.events()
    // Leave without a clean close, as a crash would.
    apis = apis.filter(a => a !== api)
    api.abandon()

    const again = await open(dir)
    expect((await again.listFlags('default')).body).toEqual(list)
    expect(again.events()).toEqual(events)
  })

  test('a torn last journal line is a commit that was never acknowledged: its changes and its events are dropped', async () => {
    const dir = newDir()
    const first = await open(dir)
    expect((await first.createFlag('default', 'kept-flag')).status).toBe(201)
    await first.services.store.flush()
    const count = first.lastEventId()
    expect((await first.createFlag('default', 'torn-flag')).status).toBe(201)
    await first.services.store.flush()
    const journal = readFileSync(journalPath(dir))
    const state = readFileSync(statePath(dir))
    apis = apis.filter(a => a !== first)
    first.abandon()
    // The crash: the last journal line was only half written.
    writeFileSync(journalPath(dir), journal.subarray(0, journal.length - 20))
    writeFileSync(statePath(dir), state)

    const second = await open(dir)
    expect(second.lastEventId()).toBe(count)
    expect((await second.getFlag('default', 'torn-flag')).status).toBe(404)
    expect((await second.getFlag('default', 'kept-flag')).status).toBe(200)
    expect(eventLines(dir)).toHaveLength(count)
    expect(readFileSync(journalPath(dir), 'utf8').endsWith('\n')).toBe(true)
  })

  test('a journal missing a commit in the middle stops the start with an error naming the journal', async () => {
    const dir = newDir()
    const api = await open(dir)
    await api.createFlag('default', 'one')
    await api.createFlag('default', 'two')
    await api.createFlag('default', 'three')
    await api.services.store.flush()
    apis = apis.filter(a => a !== api)
    api.abandon()
    const lines = readFileSync(journalPath(dir), 'utf8').slice(0, -1).split('\n')
    writeFileSync(journalPath(dir), [...lines.slice(0, 1), ...lines.slice(2)].join('\n') + '\n')
    const before = filesOf(dir)
    const error = await openError(dir)
    expect(error).toBeInstanceOf(StoreLoadError)
    expect(error.message).toContain(journalPath(dir))
    expect(error.message).toMatch(/missing/)
    expectFilesUnchanged(dir, before)
  })

  test('a missing state.json beside a journal and events stops the start instead of starting empty', async () => {
    const dir = newDir()
    const api = await open(dir)
    await api.createFlag('default', 'one')
    await close(api)
    rmSync(statePath(dir))
    const events = readFileSync(eventsPath(dir))
    const error = await openError(dir)
    expect(error).toBeInstanceOf(StoreLoadError)
    expect(error.message).toContain(statePath(dir))
    expect(error.message).toMatch(/missing/)
    expect(readFileSync(eventsPath(dir)).equals(events)).toBe(true)
    expect(existsSync(statePath(dir))).toBe(false)
  })

  test('a crash after a checkpoint but before the journal was emptied replays nothing twice', async () => {
    const dir = newDir()
    const api = await open(dir)
    await api.createFlag('default', 'one')
    await api.post('/api/admin/features/one/tags', { value: 'tagged' })
    await api.services.store.flush()
    const journal = readFileSync(journalPath(dir))
    const flag = (await api.getFlag('default', 'one')).body
    const events = api.events()
    await close(api)
    // The checkpoint holds everything; put the old journal back as if it had not been emptied.
    writeFileSync(journalPath(dir), journal)

    const again = await open(dir)
    expect((await again.getFlag('default', 'one')).body).toEqual(flag)
    expect(again.events()).toEqual(events)
    expect((await again.post('/api/admin/features/one/tags', { value: 'another' })).status).toBe(201)
  })
})

/**
 * Persistence of the data directory across a restart: what one instance writes, the next one reads
 * back exactly, ids continue, and the journal and state.json hold what they should.
 */
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'

import { EVENTS_FILE, JOURNAL_FILE, KEY_FILE, STATE_FILE } from '../../src/services'

import type { EventRecord } from '../../src/storage/records'
import { eventOfLine } from '../../src/storage/event-log'
import { ADMIN_SECRET, type ProjectListBody } from '../helpers'
import {
  closeAfterEach,
  newDir,
  open,
  close,
  statePath,
  journalPath,
  eventLines,
  buildScenario,
  readEverything,
} from './persistence.setup'

closeAfterEach()

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

    // Each line is its event's compact JSON and, last, the number of the commit that wrote it.
    const lines = eventLines(dir)
    expect(lines).toHaveLength(events.length)
    let commit = 0
    lines.forEach((line, index) => {
      const { commitSeq, ...event } = JSON.parse(line) as EventRecord & { commitSeq: number }
      expect(line).toBe(`${JSON.stringify(event).slice(0, -1)},"commitSeq":${commitSeq}}`)
      expect(event.id).toBe(index + 1)
      expect(commitSeq).toBeGreaterThanOrEqual(Math.max(commit, 1))
      commit = commitSeq
    })
    expect(commit).toBe(state.commitSeq)
    expect(lines.map(eventOfLine)).toEqual(events)
    expect(events.filter(event => 'commitSeq' in event)).toEqual([])
  })
})

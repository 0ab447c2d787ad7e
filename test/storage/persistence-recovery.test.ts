/**
 * Persistence of the data directory after a crash: a torn write is recovered from, and files that
 * cannot be trusted stop the start and are left alone.
 */
import { describe, expect, test } from 'bun:test'
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'

import { EVENTS_FILE, JOURNAL_FILE, KEY_FILE, STATE_FILE } from '../../src/services'

import { StoreLoadError } from '../../src/storage/files'

import {
  closeAfterEach,
  newDir,
  open,
  close,
  statePath,
  journalPath,
  eventsPath,
  filesOf,
  expectFilesUnchanged,
  eventLines,
  openError,
} from './persistence.setup'

closeAfterEach()

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

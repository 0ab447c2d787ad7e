/**
 * What start-up may cut and what it must refuse (issue 10, items 3 and 15): only a torn last line
 * and the events of the one commit that was in flight are cut; a missing journal, events of more
 * than one commit past the state, a bad journal line before the last, or a record that does not
 * match its schema stop the start with a StoreLoadError naming the file, and nothing on disk changes.
 */
import { describe, expect, setSystemTime, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { COLLECTIONS } from '../../src/feature-list'
import { named } from '../helpers'
import { closeAfterEach, crash, eventsPath, journalPath, newDir, open, refusal, statePath } from './persistence.setup'
import { Type } from '@sinclair/typebox'
import { Memory } from 'lowdb'
import { MemoryEventLog } from '../../src/storage/event-log'
import { FilesLog } from '../../src/storage/files-log'
import { defineCollection, emptyState, type Collection, type StateDoc } from '../../src/storage/records'
import { MemoryJournal } from '../../src/storage/state-journal'
import { Store } from '../../src/storage/store'

closeAfterEach()

/** The events of the log past event `lastId`, as the file holds them. */
function eventsPast(dir: string, lastId: number): { id: number; createdAt: string; commitSeq?: number }[] {
  return readFileSync(eventsPath(dir), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(line => JSON.parse(line))
    .filter(event => event.id > lastId)
}

describe('a missing or shortened journal', () => {
  test('a deleted journal beside a first-start checkpoint and later events stops the start naming the journal, and re-seeds nothing', async () => {
    const dir = newDir()
    const api = await open(dir)
    for (const name of ['one', 'two', 'three']) expect((await api.createFlag('default', name)).status).toBe(201)
    crash(api)
    rmSync(journalPath(dir))
    const error = await refusal(dir)
    expect(error.message).toContain(journalPath(dir))
    expect(error.message).toMatch(/is missing/)
    expect(existsSync(journalPath(dir))).toBe(false)
  })

  test('a deleted journal after a clean stop (checkpoint at a later commit) stops the start', async () => {
    const dir = newDir()
    const api = await open(dir)
    expect((await api.createFlag('default', 'one')).status).toBe(201)
    await api.close()
    rmSync(journalPath(dir))
    const error = await refusal(dir)
    expect(error.message).toContain(journalPath(dir))
    expect(error.message).toMatch(/checkpoint includes commit \d+/)
  })

  test('a deleted journal after a clean stop and more writes stops the start', async () => {
    const dir = newDir()
    const first = await open(dir)
    expect((await first.createFlag('default', 'one')).status).toBe(201)
    await first.close()
    const second = await open(dir)
    expect((await second.createFlag('default', 'two')).status).toBe(201)
    crash(second)
    rmSync(journalPath(dir))
    expect((await refusal(dir)).message).toContain(journalPath(dir))
  })

  test('a journal missing its last two commits (whole lines), made in the same millisecond, leaves events of two commits past the state: the start stops naming the event log', async () => {
    const dir = newDir()
    const api = await open(dir)
    // One millisecond for every commit: each event line's commit number tells them apart, not its createdAt.
    setSystemTime(new Date('2026-03-01T12:00:00.000Z'))
    try {
      for (const name of ['one', 'two', 'three']) expect((await api.createFlag('default', name)).status).toBe(201)
    } finally {
      setSystemTime()
    }
    crash(api)
    const lines = readFileSync(journalPath(dir), 'utf8').split('\n').filter(Boolean)
    const kept = lines.length > 2 ? JSON.parse(lines.at(-3)!) : JSON.parse(readFileSync(statePath(dir), 'utf8'))
    const past = eventsPast(dir, kept.lastEventId)
    expect(past.length).toBeGreaterThanOrEqual(2)
    expect(new Set(past.map(event => event.createdAt))).toEqual(new Set(['2026-03-01T12:00:00.000Z']))
    writeFileSync(
      journalPath(dir),
      lines
        .slice(0, -2)
        .map(line => line + '\n')
        .join(''),
    )
    const error = await refusal(dir)
    expect(error.message).toContain(eventsPath(dir))
    expect(error.message).toMatch(/more than one commit/)
  })

  test('a bad journal line before the last stops the start naming the line; only a torn last line is ever cut', async () => {
    const dir = newDir()
    const api = await open(dir)
    for (const name of ['one', 'two', 'three']) expect((await api.createFlag('default', name)).status).toBe(201)
    crash(api)
    const lines = readFileSync(journalPath(dir), 'utf8').split('\n').filter(Boolean)
    lines[1] = lines[1].slice(0, 30)
    writeFileSync(journalPath(dir), lines.map(line => line + '\n').join(''))
    const error = await refusal(dir)
    expect(error.message).toContain(journalPath(dir))
    expect(error.message).toMatch(/line 2\b/)
  })

  test('the events of one unacknowledged commit with several events (a bulk toggle) are cut, and only them', async () => {
    const dir = newDir()
    const api = await open(dir)
    for (const name of ['one', 'two', 'three']) expect((await api.createFlag('default', name)).status).toBe(201)
    await api.services.store.flush()
    const acknowledged = {
      state: readFileSync(statePath(dir)),
      journal: readFileSync(journalPath(dir)),
      events: readFileSync(eventsPath(dir)),
    }
    const lastId = api.lastEventId()
    expect((await api.bulkToggle('default', 'development', ['one', 'two', 'three'], true)).status).toBe(200)
    await api.services.store.flush()
    expect(api.lastEventId()).toBeGreaterThanOrEqual(lastId + 3)
    crash(api)
    // The crash: the bulk toggle's events were appended, its journal line never was.
    writeFileSync(journalPath(dir), acknowledged.journal)

    const again = await open(dir)
    expect(again.lastEventId()).toBe(lastId)
    expect(readFileSync(eventsPath(dir)).equals(acknowledged.events)).toBe(true)
    expect(named((await again.getFlag('default', 'one')).body.environments, 'development').enabled).toBe(false)
  })

  test('a data directory from before the journal (no commitSeq, no journal) still loads', async () => {
    const dir = newDir()
    const api = await open(dir)
    expect((await api.createFlag('default', 'old-flag')).status).toBe(201)
    await api.close()
    const state = JSON.parse(readFileSync(statePath(dir), 'utf8'))
    delete state.commitSeq
    writeFileSync(statePath(dir), JSON.stringify(state))
    rmSync(journalPath(dir))
    const again = await open(dir)
    expect((await again.getFlag('default', 'old-flag')).status).toBe(200)
  })
})

describe('records that do not match their schema', () => {
  async function stopped(): Promise<string> {
    const dir = newDir()
    const api = await open(dir)
    expect((await api.createFlag('default', 'x')).status).toBe(201)
    await api.close()
    return dir
  }

  function editState(dir: string, edit: (state: any) => void) {
    const state = JSON.parse(readFileSync(statePath(dir), 'utf8'))
    edit(state)
    writeFileSync(statePath(dir), JSON.stringify(state))
  }

  test.each<[string, (state: any) => void, string]>([
    ['a null flag record', state => (state.flags.x = null), 'flags["x"]'],
    ['a flag missing its project', state => delete state.flags.x.project, 'flags["x"]/project'],
    [
      'an environment of a flag with enabled "yes"',
      state => (state.flags.x.environments.development.enabled = 'yes'),
      'flags["x"]/environments/development/enabled',
    ],
    ['a token of an unknown type', state => ((Object.values(state.tokens)[0] as any).type = 'root'), '/type'],
    [
      'a project with no environments list',
      state => delete state.projects.default.environments,
      'projects["default"]/environments',
    ],
  ])('state.json with %s stops the start with an error naming the file and the record', async (_label, edit, path) => {
    const dir = await stopped()
    editState(dir, edit)
    const error = await refusal(dir)
    expect(error.message).toContain(statePath(dir))
    expect(error.message).toContain(path)
  })

  test('a journal commit that puts a bad record stops the start naming the journal, the commit and the record', async () => {
    const dir = newDir()
    const api = await open(dir)
    expect((await api.createFlag('default', 'x')).status).toBe(201)
    crash(api)
    const lines = readFileSync(journalPath(dir), 'utf8').split('\n').filter(Boolean)
    const last = JSON.parse(lines.at(-1)!)
    const change = last.changes.find(([collection]: [string]) => collection === 'flags')
    change[2] = { ...change[2], stale: null }
    lines[lines.length - 1] = JSON.stringify(last)
    writeFileSync(journalPath(dir), lines.map(line => line + '\n').join(''))
    const error = await refusal(dir)
    expect(error.message).toContain(journalPath(dir))
    expect(error.message).toContain(`commit ${last.seq}`)
    expect(error.message).toContain('flags["x"]/stale')
  })
})

describe('a collection a later version added', () => {
  // Stands for a feature's collection that data directories made before the feature do not hold.
  const later = defineCollection('later' as Collection, Type.Object({ id: Type.String() }) as never, {
    addedLater: true,
  })

  async function openMemory(doc: Record<string, unknown>): Promise<Store> {
    const checkpoint = new Memory<StateDoc>()
    await checkpoint.write(doc as StateDoc)
    return Store.open(new FilesLog({ checkpoint, journal: new MemoryJournal(), events: new MemoryEventLog() }), {
      collections: [...COLLECTIONS, later],
    })
  }

  test('is absent from an older state.json: the store opens with it empty and can write to it', async () => {
    const store = await openMemory({ ...emptyState(COLLECTIONS) })
    expect(store.reader.values(later.name)).toEqual([])
    await store.transact({ name: 'test', userId: null }, tx => tx.put(later.name, 'a', { id: 'a' } as never))
    expect(store.reader.get(later.name, 'a')).toEqual({ id: 'a' } as never)
  })

  test('one of the collections every state.json holds may not be absent: that is damage, and the start stops', async () => {
    const doc: Record<string, unknown> = { ...emptyState(COLLECTIONS) }
    delete doc.flags
    await expect(openMemory(doc)).rejects.toThrow('"flags" is not an object')
  })
})

/**
 * The state journal and its checkpoints: a write appends only what changed, a full journal is folded
 * into state.json, and a journal that cannot be trusted stops the start.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'

import { StoreLoadError } from '../../src/storage/files'
import { makeApi } from '../helpers'
import {
  track,
  untrack,
  closeAfterEach,
  newDir,
  open,
  close,
  statePath,
  journalPath,
  eventsPath,
  readOrEmpty,
  filesOf,
  expectFilesUnchanged,
  eventLines,
  openError,
} from './persistence.setup'

closeAfterEach()

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
    track(api)
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
    untrack(api)
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
    untrack(first)
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
    untrack(api)
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

/**
 * Each line of the event log carries the number of the commit that wrote it, and start-up tells
 * the commits past the state apart by it: only the events of the commit after the state's last may
 * be cut, whatever their `createdAt`. Lines written before they carried it still load, told apart
 * by `createdAt` as before. A refusal names the event log and changes nothing on disk.
 */
import { afterEach, describe, expect, setSystemTime, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { STATE_FILE } from '../../src/services'
import { expectOk, type Api } from '../helpers'
import { closeAfterEach, crash, eventsPath, journalPath, newDir, open, refusal } from './persistence.setup'

closeAfterEach()
afterEach(() => setSystemTime())

const journalLines = (dir: string) => readFileSync(journalPath(dir), 'utf8').split('\n').filter(Boolean)
const eventLines = (dir: string) => readFileSync(eventsPath(dir), 'utf8').split('\n').filter(Boolean)

/** Keeps all but the last `count` commits of the journal (whole lines), as a damaged journal would. */
function dropCommits(dir: string, count: number) {
  const lines = journalLines(dir)
  writeFileSync(
    journalPath(dir),
    lines
      .slice(0, -count)
      .map(line => `${line}\n`)
      .join(''),
  )
}

/** The last event id the state includes once the journal is as it stands. */
function acknowledgedId(dir: string): number {
  const last = journalLines(dir).at(-1)
  return JSON.parse(last ?? readFileSync(join(dir, STATE_FILE), 'utf8')).lastEventId
}

/** Rewrites the event log as a version that wrote no commit numbers would have. */
function asOldLines(dir: string) {
  const lines = eventLines(dir).map(line => {
    const { commitSeq: _, ...event } = JSON.parse(line)
    return JSON.stringify(event)
  })
  writeFileSync(eventsPath(dir), lines.map(line => `${line}\n`).join(''))
}

const flags = async (api: Api, names: string[]) => {
  for (const name of names) expectOk(await api.createFlag('default', name), 201)
}

/** A data directory whose service made flags one and two, each a commit, in the same millisecond, then crashed. */
async function twoCommitsInOneMillisecond(): Promise<string> {
  const dir = newDir()
  const api = await open(dir)
  setSystemTime(new Date('2026-03-01T12:00:00.000Z'))
  await flags(api, ['one', 'two'])
  setSystemTime()
  crash(api)
  return dir
}

describe('commits past the state, told apart by their number', () => {
  test('events of one commit past the state written by a commit other than the next (the journal lost a commit without events too) stop the start', async () => {
    const dir = newDir()
    const api = await open(dir)
    await flags(api, ['one', 'two'])
    // A commit that changes a record and writes no event.
    await api.services.store.transact({ name: 'test', userId: null }, tx =>
      tx.put('flags', 'one', { ...tx.get('flags', 'one')! }),
    )
    await flags(api, ['three'])
    crash(api)
    dropCommits(dir, 2)
    const past = eventLines(dir)
      .map(line => JSON.parse(line))
      .filter(event => event.id > acknowledgedId(dir))
    expect(past.length).toBeGreaterThan(0)
    expect(new Set(past.map(event => event.commitSeq)).size).toBe(1)
    const error = await refusal(dir)
    expect(error.message).toContain(eventsPath(dir))
    expect(error.message).toMatch(/written by commit (\d+), but the state includes commits up to (\d+)/)
    const [, written, included] = /commit (\d+), but the state includes commits up to (\d+)/.exec(error.message)!
    expect(Number(written)).toBe(Number(included) + 2)
  })

  test('the one unacknowledged commit is cut, though its events share their millisecond with the acknowledged one before it', async () => {
    const dir = await twoCommitsInOneMillisecond()
    const kept = { events: eventLines(dir) }
    dropCommits(dir, 1)
    const lastId = acknowledgedId(dir)
    const again = await open(dir)
    expect(again.lastEventId()).toBe(lastId)
    expect(eventLines(dir)).toEqual(kept.events.filter(line => JSON.parse(line).id <= lastId))
    expect((await again.getFlag('default', 'one')).status).toBe(200)
    expect((await again.getFlag('default', 'two')).status).toBe(404)
  })
})

describe('lines written before they carried their commit number', () => {
  test('load as they are, and the lines written after them carry it', async () => {
    const dir = newDir()
    const api = await open(dir)
    await flags(api, ['one', 'two'])
    await api.close()
    asOldLines(dir)
    const old = eventLines(dir)
    const again = await open(dir)
    expect((await again.getFlag('default', 'two')).status).toBe(200)
    await flags(again, ['three'])
    const events = await again.eventsAfter(0)
    expect(events.map(event => event.id)).toEqual(old.map((_, index) => index + 1).concat(again.lastEventId()))
    expect(events.filter(event => 'commitSeq' in event)).toEqual([])
    crash(again)
    const lines = eventLines(dir)
    expect(lines.slice(0, old.length)).toEqual(old)
    expect(lines.slice(old.length).every(line => /,"commitSeq":\d+\}$/.test(line))).toBe(true)
    // Old lines before the state, new ones past it: the one unacknowledged commit is cut.
    dropCommits(dir, 1)
    const third = await open(dir)
    expect(third.lastEventId()).toBe(old.length)
    expect(eventLines(dir)).toEqual(old)
  })

  test('an unacknowledged commit of old lines is cut; two of them (in different milliseconds) stop the start', async () => {
    const dir = newDir()
    const api = await open(dir)
    setSystemTime(new Date('2026-03-01T12:00:00.000Z'))
    await flags(api, ['one'])
    setSystemTime(new Date('2026-03-01T12:00:00.005Z'))
    await flags(api, ['two'])
    setSystemTime(new Date('2026-03-01T12:00:00.010Z'))
    await flags(api, ['three'])
    setSystemTime()
    crash(api)
    asOldLines(dir)
    const journal = readFileSync(journalPath(dir))
    dropCommits(dir, 2)
    const error = await refusal(dir)
    expect(error.message).toContain(eventsPath(dir))
    expect(error.message).toMatch(/more than one commit/)

    writeFileSync(journalPath(dir), journal)
    dropCommits(dir, 1)
    const lastId = acknowledgedId(dir)
    const again = await open(dir)
    expect(again.lastEventId()).toBe(lastId)
    expect(eventLines(dir).map(line => JSON.parse(line).id)).toEqual(eventLines(dir).map((_, index) => index + 1))
    expect(eventLines(dir)).toHaveLength(lastId)
    expect((await again.getFlag('default', 'two')).status).toBe(200)
    expect((await again.getFlag('default', 'three')).status).toBe(404)
  })

  test('old lines and numbered lines past the state are two commits, even in one millisecond: the start stops', async () => {
    const dir = await twoCommitsInOneMillisecond()
    const journal = journalLines(dir)
    // The events of "one" as an older version wrote them, "two"'s as this one does.
    const twoFrom = JSON.parse(journal.at(-2)!).lastEventId
    const lines = eventLines(dir).map(line => {
      const { commitSeq, ...event } = JSON.parse(line)
      return event.id > twoFrom ? line : JSON.stringify(event)
    })
    writeFileSync(eventsPath(dir), lines.map(line => `${line}\n`).join(''))
    dropCommits(dir, 2)
    const error = await refusal(dir)
    expect(error.message).toContain(eventsPath(dir))
    expect(error.message).toMatch(/more than one commit/)
  })
})

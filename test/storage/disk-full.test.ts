/**
 * A full disk, a short write, an I/O error (issue 10, items 1, 4 and 5), through an injected file
 * system so every run exercises them whatever the machine: a commit that cannot be written answers
 * 503 naming the cause, leaves both files byte-identical, is not visible to reads or search, and
 * the next write, once the disk takes bytes again, succeeds with the next ids and no restart. A
 * checkpoint that cannot be written does not fail the commit that is already durable.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EVENTS_FILE, JOURNAL_FILE, STATE_FILE } from '../../src/services'
import { openStore } from '../../src/open-store'
import { DataDirError, realFileSystem, type FileSystem, type WritableFile } from '../../src/storage/files'
import { captureLogLines } from '../../src/log'
import { errorOf, makeApi, type Api, cleanupAfterEach } from '../helpers'

/** What the injected file system does to writes of files whose path matches `path`. */
interface Fault {
  path: RegExp
  /** 'short': writes store at most `budget` bytes, then 0; 'ENOSPC'/'EIO': the write past the budget throws; 'sync': fsync throws EIO. */
  kind: 'short' | 'ENOSPC' | 'EIO' | 'sync'
  /** Bytes a commit may still write before the fault hits (the first write is torn there). */
  budget?: number
  /** Also make truncation fail, so the failed commit cannot be cut back at once. */
  truncate?: boolean
}

function errno(code: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${code}: injected`)
  error.code = code
  return error
}

/** The real file system with a fault switched on and off by the test. */
class FaultyFileSystem implements FileSystem {
  fault: Fault | null = null
  faultsHit = 0

  private hits(path: string): Fault | null {
    return this.fault?.path.test(path) ? this.fault : null
  }

  async open(path: string, flags: 'a' | 'w' | 'r+'): Promise<WritableFile> {
    const handle = await realFileSystem.open(path, flags)
    let written = 0
    const fs = this
    return {
      async write(buffer, offset, length, position) {
        const fault = fs.hits(path)
        if (!fault || fault.kind === 'sync') return handle.write(buffer, offset, length, position)
        const room = Math.max(0, (fault.budget ?? 0) - written)
        if (room >= length) {
          written += length
          return handle.write(buffer, offset, length, position)
        }
        fs.faultsHit++
        // A torn write: what fits goes to the file, as on a real full disk.
        if (room > 0) {
          const result = await handle.write(buffer, offset, room, position)
          written += result.bytesWritten
          if (fault.kind === 'short') return result
        }
        if (fault.kind === 'short') return { bytesWritten: 0 }
        throw errno(fault.kind)
      },
      async datasync() {
        if (fs.hits(path)?.kind === 'sync') {
          fs.faultsHit++
          throw errno('EIO')
        }
        return handle.datasync()
      },
      async sync() {
        if (fs.hits(path)?.kind === 'sync') {
          fs.faultsHit++
          throw errno('EIO')
        }
        return handle.sync()
      },
      stat: () => handle.stat(),
      close: () => handle.close(),
    }
  }

  async truncate(path: string, length: number): Promise<void> {
    if (this.hits(path)?.truncate) throw errno('EIO')
    return realFileSystem.truncate(path, length)
  }

  rename = realFileSystem.rename
  unlink = realFileSystem.unlink
}

const { later, newDir } = cleanupAfterEach()

async function openOn(dir: string, fs: FileSystem, checkpointAfterBytes?: number): Promise<Api> {
  const api = await makeApi({ dataDir: dir, fs, checkpointAfterBytes })
  later(() =>
    api.close().then(
      () => {},
      () => {},
    ),
  )
  return api
}

const files = (dir: string) => ({
  state: readFileSync(join(dir, STATE_FILE), 'utf8'),
  journal: readFileSync(join(dir, JOURNAL_FILE), 'utf8'),
  events: readFileSync(join(dir, EVENTS_FILE), 'utf8'),
})

const EVENTS = /events\.jsonl$/
const JOURNAL = /state\.journal\.jsonl$/

describe('a commit that cannot be written', () => {
  test.each<[string, Fault, RegExp]>([
    [
      'the event log takes no byte (a short write of 0)',
      { path: EVENTS, kind: 'short' },
      /no space left on device \(ENOSPC\)/,
    ],
    [
      'the event log takes half a line, then nothing',
      { path: EVENTS, kind: 'short', budget: 40 },
      /no space left on device \(ENOSPC\)/,
    ],
    [
      'the event log write throws ENOSPC halfway',
      { path: EVENTS, kind: 'ENOSPC', budget: 25 },
      /no space left on device \(ENOSPC\)/,
    ],
    [
      'the events are written but the journal takes no byte',
      { path: JOURNAL, kind: 'short' },
      /no space left on device \(ENOSPC\)/,
    ],
    [
      'the journal line is torn by ENOSPC',
      { path: JOURNAL, kind: 'ENOSPC', budget: 30 },
      /no space left on device \(ENOSPC\)/,
    ],
    ['the journal fsync fails with EIO', { path: JOURNAL, kind: 'sync' }, /input\/output error \(EIO\)/],
    [
      'the event log write fails and cannot even be cut back at once',
      { path: EVENTS, kind: 'EIO', budget: 10, truncate: true },
      /input\/output error \(EIO\)/,
    ],
  ])(
    '%s: 503 naming the cause, files unchanged, nothing visible; the next write succeeds without a restart',
    async (_label, fault, cause) => {
      const dir = newDir('flags-disk-full-')
      const fs = new FaultyFileSystem()
      const api = await openOn(dir, fs)
      expect((await api.createFlag('default', 'kept', { description: 'before' })).status).toBe(201)
      await api.services.store.flush()
      const before = files(dir)
      const lastId = api.lastEventId()
      const list = (await api.listFlags('default')).body
      const kept = (await api.getFlag('default', 'kept')).body

      fs.fault = fault
      // Three writes in one batch: a new flag, a change to an existing one, a tag. All fail together.
      const answers = await Promise.all([
        api.createFlag('default', 'doomed'),
        api.patchFlag('default', 'kept', [{ op: 'replace', path: '/description', value: 'after' }]),
        api.post('/api/admin/features/kept/tags', { value: 'doomed-tag' }),
      ])
      for (const answer of answers) {
        expect(answer.status).toBe(503)
        expect(answer.headers.get('content-type')).toContain('application/json')
        expect(errorOf(answer).name).toBe('ServiceUnavailable')
        expect(errorOf(answer).message).toMatch(/^The write could not be saved: /)
        expect(errorOf(answer).message).toMatch(cause)
      }
      expect(fs.faultsHit).toBeGreaterThan(0)
      if (!fault.truncate) expect(files(dir)).toEqual(before)
      expect(api.lastEventId()).toBe(lastId)
      expect((await api.getFlag('default', 'doomed')).status).toBe(404)
      expect((await api.getFlag('default', 'kept')).body).toEqual(kept)
      expect((await api.listFlags('default')).body).toEqual(list)
      expect((await api.searchEvents('?feature=IS:doomed')).body.total).toBe(0)
      expect((await api.searchEvents('?type=IS:feature-tagged')).body.total).toBe(0)
      expect(api.eventsSince(lastId)).toEqual([])

      fs.fault = null
      expect((await api.createFlag('default', 'doomed')).status).toBe(201)
      expect((await api.post('/api/admin/features/kept/tags', { value: 'later-tag' })).status).toBe(201)
      await api.services.store.flush()
      expect(api.eventsSince(lastId).map(event => [event.id, event.type, event.featureName])).toEqual([
        [lastId + 1, 'feature-created', 'doomed'],
        [lastId + 2, 'feature-tagged', 'kept'],
      ])
      const search = await api.searchEvents('?feature=IS:doomed')
      expect(search.body.events.map((event: { id: number }) => event.id)).toEqual([lastId + 1])
      const listAfter = (await api.listFlags('default')).body
      await api.close()

      // A restart reads back exactly what was acknowledged.
      const again = await openOn(dir, realFileSystem)
      expect((await again.listFlags('default')).body).toEqual(listAfter)
      expect((await again.getFlag('default', 'kept')).body.description).toBe('before')
      expect(again.events().map(event => event.id)).toEqual(Array.from({ length: lastId + 2 }, (_, i) => i + 1))
    },
  )

  test('/ready answers 503 naming the cause while the disk is full, and ready again once it takes writes, without a write', async () => {
    const dir = newDir('flags-disk-full-')
    const fs = new FaultyFileSystem()
    const api = await openOn(dir, fs)
    expect((await api.get('/ready')).status).toBe(200)
    fs.fault = { path: /./, kind: 'ENOSPC' }
    expect((await api.createFlag('default', 'doomed')).status).toBe(503)
    const ready = await api.get('/ready')
    expect(ready.status).toBe(503)
    expect(errorOf(ready).name).toBe('ServiceUnavailable')
    expect(errorOf(ready).message).toBe('Writes cannot be made durable: no space left on device (ENOSPC)')
    // Reads go on meanwhile.
    expect((await api.listFlags('default')).status).toBe(200)
    fs.fault = null
    await Bun.sleep(1100)
    expect((await api.get('/ready')).status).toBe(200)
    expect((await api.createFlag('default', 'doomed')).status).toBe(201)
  })

  test('/ready is ready again as soon as a write succeeds', async () => {
    const dir = newDir('flags-disk-full-')
    const fs = new FaultyFileSystem()
    const api = await openOn(dir, fs)
    fs.fault = { path: /./, kind: 'short' }
    expect((await api.createFlag('default', 'doomed')).status).toBe(503)
    expect((await api.get('/ready')).status).toBe(503)
    fs.fault = null
    expect((await api.createFlag('default', 'doomed')).status).toBe(201)
    expect((await api.get('/ready')).status).toBe(200)
  })

  test('record watchers are told of the undo: derived indexes (children, project lists) show the durable state', async () => {
    const dir = newDir('flags-disk-full-')
    const fs = new FaultyFileSystem()
    const api = await openOn(dir, fs)
    expect((await api.createFlag('default', 'parent')).status).toBe(201)
    expect((await api.createFlag('default', 'child')).status).toBe(201)
    const parentBefore = (await api.getFlag('default', 'parent')).body
    expect(parentBefore.children).toEqual([])
    fs.fault = { path: JOURNAL, kind: 'ENOSPC' }
    const added = await api.post('/api/admin/projects/default/features/child/dependencies', { feature: 'parent' })
    expect(added.status).toBe(503)
    expect((await api.getFlag('default', 'parent')).body).toEqual(parentBefore)
    expect((await api.getFlag('default', 'child')).body.dependencies).toEqual([])
    fs.fault = null
    expect(
      (await api.post('/api/admin/projects/default/features/child/dependencies', { feature: 'parent' })).status,
    ).toBe(200)
    expect((await api.getFlag('default', 'parent')).body.children).toEqual(['child'])
  })
})

describe('a checkpoint that cannot be written', () => {
  test('does not fail the durable commit: 2xx, temp file removed, warning logged, tried again later, and a restart loses nothing', async () => {
    const dir = newDir('flags-disk-full-')
    const fs = new FaultyFileSystem()
    const api = await openOn(dir, fs, 2000)
    const stateBefore = readFileSync(join(dir, STATE_FILE), 'utf8')
    const warnings: string[] = []
    const restore = captureLogLines(line => void warnings.push(line))
    later(restore)
    fs.fault = { path: /\.state\.json\.tmp$/, kind: 'ENOSPC', budget: 100 }
    for (let i = 0; i < 12; i++)
      expect((await api.createFlag('default', `cp-${i}`, { description: 'x'.repeat(100) })).status).toBe(201)
    await api.services.store.flush()
    restore()
    expect(fs.faultsHit).toBeGreaterThan(0)
    expect(warnings.some(line => /checkpoint failed/.test(line) && /ENOSPC/.test(line))).toBe(true)
    // Backs off: not one attempt per commit.
    expect(fs.faultsHit).toBeLessThan(12)
    expect(existsSync(join(dir, '.state.json.tmp'))).toBe(false)
    expect(readFileSync(join(dir, STATE_FILE), 'utf8')).toBe(stateBefore)
    expect(readFileSync(join(dir, JOURNAL_FILE)).length).toBeGreaterThan(2000)
    expect((await api.get('/ready')).status).toBe(200)

    fs.fault = null
    await Bun.sleep(1100)
    expect((await api.createFlag('default', 'after-room')).status).toBe(201)
    await api.services.store.flush()
    expect(readFileSync(join(dir, JOURNAL_FILE)).length).toBe(0)
    expect(readFileSync(join(dir, STATE_FILE), 'utf8')).toContain('after-room')
    const list = (await api.listFlags('default')).body
    api.abandon()

    const again = await openOn(dir, realFileSystem)
    expect((await again.listFlags('default')).body).toEqual(list)
  })

  test('closing with no room for the checkpoint resolves with the reason instead of throwing; the journal keeps everything', async () => {
    const dir = newDir('flags-disk-full-')
    const fs = new FaultyFileSystem()
    const api = await makeApi({ dataDir: dir, fs })
    expect((await api.createFlag('default', 'in-journal')).status).toBe(201)
    const list = (await api.listFlags('default')).body
    fs.fault = { path: /\.state\.json\.tmp$/, kind: 'short' }
    const restore = captureLogLines(() => {})
    const problem = await api.services.store.close().finally(restore)
    api.abandon()
    expect(problem).toBe('no space left on device (ENOSPC)')
    expect(existsSync(join(dir, '.state.json.tmp'))).toBe(false)

    const again = await openOn(dir, realFileSystem)
    expect((await again.listFlags('default')).body).toEqual(list)
  })
})

describe('a data directory that cannot be written', () => {
  test('stops the start with an error naming DATA_DIR and the cause, changing nothing', async () => {
    const dir = newDir('flags-disk-full-')
    const first = await makeApi({ dataDir: dir })
    await first.createFlag('default', 'one')
    await first.close()
    const before = files(dir)
    const fs = new FaultyFileSystem()
    fs.fault = { path: /./, kind: 'EIO' }
    fs.open = async () => {
      throw errno('EROFS')
    }
    let error: unknown
    await openStore(dir, { sync: true, fs }).catch(e => (error = e))
    expect(error).toBeInstanceOf(DataDirError)
    expect((error as Error).message).toBe(`DATA_DIR ${dir} cannot be written: read-only file system (EROFS)`)
    expect(files(dir)).toEqual(before)
  })
})

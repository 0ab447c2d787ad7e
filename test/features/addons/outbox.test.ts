/**
 * The outbox is written with the write: a delivery is in the same journal line (the same commit) as
 * its event, and a write whose commit fails leaves no delivery, so the receiver never hears of a
 * change that was not made.
 */
import { afterEach, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { JOURNAL_FILE } from '../../../src/services'
import { realFileSystem, type FileSystem } from '../../../src/storage/files'
import { cleanupAfterEach, expectOk, makeApi, waitFor, type Api } from '../../helpers'
import { startReceiver, type Receiver } from './receiver'

const { later, newDir } = cleanupAfterEach()
let receiver: Receiver
afterEach(() => receiver?.stop())

/** The real file system, whose journal's fsync fails while `failing.on`. */
function failingJournal(failing: { on: boolean }): FileSystem {
  return {
    ...realFileSystem,
    async open(path, flags) {
      const handle = await realFileSystem.open(path, flags)
      const broken = () => failing.on && path.endsWith(JOURNAL_FILE)
      return {
        write: (buffer, offset, length, position) => handle.write(buffer, offset, length, position),
        datasync: () =>
          broken() ? Promise.reject(Object.assign(new Error('EIO: injected'), { code: 'EIO' })) : handle.datasync(),
        sync: () =>
          broken() ? Promise.reject(Object.assign(new Error('EIO: injected'), { code: 'EIO' })) : handle.sync(),
        stat: () => handle.stat(),
        close: () => handle.close(),
      }
    },
  }
}

async function open(dir: string, fs?: FileSystem): Promise<Api> {
  const api = await makeApi({ dataDir: dir, fs, addons: { retryBaseMs: 20 } })
  later(() => api.close().catch(() => {}))
  receiver = startReceiver()
  expectOk(
    await api.post('/api/admin/addons', {
      provider: 'webhook',
      enabled: true,
      parameters: { url: receiver.url },
      events: ['feature-created'],
    }),
  )
  return api
}

test('a delivery is in the same commit (journal line) as its event', async () => {
  const dir = newDir()
  const api = await open(dir)
  let release = () => {}
  const held = new Promise<void>(resolve => (release = resolve))
  receiver.answer = async () => (await held, new Response(''))
  expectOk(await api.createFlag('default', 'journaled'), 201)
  const eventId = api.lastEventId()
  const entries = readFileSync(join(dir, JOURNAL_FILE), 'utf8')
    .trim()
    .split('\n')
    .map(line => JSON.parse(line))
  const commit = entries.find(entry => entry.lastEventId === eventId)
  const changed = commit.changes.map(([collection, key]: [string, string]) => `${collection} ${key}`)
  expect(changed).toContain(`addonDeliveries 1:${String(eventId).padStart(12, '0')}`)
  expect(changed).toContain('flags journaled')
  release()
  await waitFor(() => receiver.received.length === 1, 'the delivery')
})

test('a write whose commit fails leaves no delivery, and the receiver hears only of the writes made', async () => {
  const failing = { on: false }
  const api = await open(newDir(), failingJournal(failing))
  failing.on = true
  const refused = await api.createFlag('default', 'never-made')
  expect(refused.status).toBe(503)
  failing.on = false
  expect(Object.keys(api.services.store.state.addonDeliveries)).toEqual([])
  expectOk(await api.createFlag('default', 'made'), 201)
  await waitFor(() => receiver.received.length >= 1, 'the delivery')
  await Bun.sleep(200)
  expect(receiver.received.map(request => JSON.parse(request.body).featureName)).toEqual(['made'])
})

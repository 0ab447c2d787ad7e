/**
 * The event log ends each line with the number of the commit that wrote it (storage/event-log.ts).
 * That number is storage's own: no answer of the events API or the event search, and no webhook,
 * holds it, whether the events come from the commit, from the log in memory or on a database, from
 * the file after a restart, or from segments built from it; and it is not searchable text.
 */
import { afterEach, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SEARCH_DIR } from '../../../src/features/events/search/segment-files'
import { EVENTS_FILE } from '../../../src/services'
import { cleanupAfterEach, expectOk, makeApi, waitFor, type Api } from '../../helpers'
import { startReceiver, type Receiver } from '../addons/receiver'

const { later, newDir } = cleanupAfterEach()
let receiver: Receiver | null = null
afterEach(() => receiver?.stop())

async function open(dataDir?: string): Promise<Api> {
  // Segments of 64 events: on a data directory, answers come from segments and from the tail.
  const api = await makeApi({ dataDir, segmentEvents: 64, addons: { retryBaseMs: 10 } })
  later(() => api.close().catch(() => {}))
  return api
}

async function writeSome(api: Api, round: number) {
  for (let i = 0; i < 40; i++) await api.newFlag('default', `numbered-${round}-${i}`)
  expectOk(await api.toggle('default', `numbered-${round}-0`, 'production', true))
}

/** Every answer that shows events, as text: none may hold the log's commit numbers. */
async function answers(api: Api): Promise<string[]> {
  const texts: string[] = []
  for (const path of [
    '/api/admin/search/events?limit=1000',
    '/api/admin/search/events?type=IS:feature-created&limit=3&offset=2',
    '/api/admin/search/events?query=numbered&limit=1000',
    '/api/admin/events',
    '/api/admin/events/numbered-1-0',
  ]) {
    const response = await api.get(path)
    expectOk(response)
    expect(response.text).toContain('"createdAt"')
    texts.push(response.text)
  }
  return texts
}

async function expectNoCommitNumbers(api: Api) {
  for (const text of await answers(api)) expect(text).not.toContain('commitSeq')
  // Not searchable text either: the member's bytes are in every line of the file.
  for (const query of ['commitseq', 'commi', 'seq":'])
    expect((await api.get<{ total: number }>(`/api/admin/search/events?query=${query}`)).body.total).toBe(0)
}

test('the events API and the event search answer without the commit numbers (the run’s store)', async () => {
  const api = await open()
  await writeSome(api, 1)
  await expectNoCommitNumbers(api)
  await writeSome(api, 2)
  await expectNoCommitNumbers(api)
})

test('on a data directory: answers from the file, segments and commits made since hold no commit number', async () => {
  const dir = newDir()
  const first = await open(dir)
  await writeSome(first, 1)
  await expectNoCommitNumbers(first)
  await first.close()
  const lines = readFileSync(join(dir, EVENTS_FILE), 'utf8').split('\n').filter(Boolean)
  expect(lines.every(line => /,"commitSeq":\d+\}$/.test(line))).toBe(true)

  const again = await open(dir)
  await expectNoCommitNumbers(again)
  await writeSome(again, 2)
  await expectNoCommitNumbers(again)
  const found = (await again.get<{ events: unknown[]; total: number }>('/api/admin/search/events?limit=1000')).body
  expect(found.total).toBe(again.lastEventId())
  expect(readdirSync(join(dir, SEARCH_DIR)).filter(name => name.endsWith('.seg')).length).toBeGreaterThan(0)
})

test('a webhook sent after a restart, its event read back from the log, holds no commit number', async () => {
  const dir = newDir()
  const first = await open(dir)
  receiver = startReceiver()
  expectOk(
    await first.post('/api/admin/addons', {
      provider: 'webhook',
      enabled: true,
      parameters: { url: receiver.url },
      events: ['feature-created'],
    }),
  )
  receiver.answer = () => new Response('busy', { status: 503 })
  await first.newFlag('default', 'hooked')
  await waitFor(() => receiver!.received.length > 0, 'a first attempt')
  await first.close()

  receiver.answer = () => new Response('ok')
  const sent = receiver.received.length
  const again = await open(dir)
  await waitFor(() => receiver!.received.length > sent, 'the delivery after the restart')
  for (const { body } of receiver.received) {
    expect(body).not.toContain('commitSeq')
    expect(JSON.parse(body)).toMatchObject({ type: 'feature-created', featureName: 'hooked' })
  }
  expect(again.lastEventId()).toBeGreaterThan(0)
})

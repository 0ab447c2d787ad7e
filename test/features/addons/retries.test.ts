/**
 * Deliveries that fail: retried with backoff under the same delivery id, in order per integration,
 * dead-lettered (at once for a 4xx, after the retry window otherwise), sent again on a retry;
 * Retry-After and deadlines; a hanging receiver holds up no write; and refused targets.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { expectError, expectOk, makeApi, waitFor, type Api } from '../../helpers'
import { refusedAddress } from '../../../src/features/addons/addons.send'
import type { DispatchOptions } from '../../../src/features/addons/addons.dispatcher'
import { startReceiver, type Receiver } from './receiver'

let api: Api
let receiver: Receiver
afterEach(async () => {
  receiver?.stop()
  await api?.close()
})

async function setUp(addons: Partial<DispatchOptions> = {}, events = ['feature-created']) {
  api = await makeApi({ addons: { retryBaseMs: 10, ...addons } })
  receiver = startReceiver()
  const created = await api.post<{ id: number }>('/api/admin/addons', {
    provider: 'webhook',
    enabled: true,
    parameters: { url: receiver.url },
    events,
  })
  expectOk(created)
  return created.body.id
}

interface LogBody {
  events: {
    deliveryId: string
    eventId: number
    attempt: number
    outcome: string
    statusCode: number | null
    error: string | null
  }[]
  waiting: {
    deliveryId: string
    eventId: number
    dead: boolean
    attempts: number
    nextAttemptAt: string | null
    lastError: string | null
  }[]
  waitingCount: number
}
const logOf = async (id: number) => (await api.get<LogBody>(`/api/admin/addons/${id}/events`)).body
const names = () => receiver.received.map(request => JSON.parse(request.body).featureName as string)

describe('retries', () => {
  test('a receiver failing 3 times: 4 attempts with one delivery id, then delivered', async () => {
    const id = await setUp()
    receiver.answer = (_, index) => new Response('busy', { status: index < 3 ? 503 : 200 })
    await api.newFlag('default', 'eventually')
    await waitFor(async () => (await logOf(id)).events.some(e => e.outcome === 'delivered'), 'the delivery')
    expect(new Set(receiver.received.map(r => r.headers['x-flagstore-delivery'])).size).toBe(1)
    expect(receiver.received).toHaveLength(4)
    const log = await logOf(id)
    expect(log.events.map(e => [e.attempt, e.outcome, e.statusCode])).toEqual([
      [4, 'delivered', 200],
      [3, 'retrying', 503],
      [2, 'retrying', 503],
      [1, 'retrying', 503],
    ])
    expect(log.waitingCount).toBe(0)
  })

  test('in order: later events wait behind a failing one, and arrive after it', async () => {
    const id = await setUp()
    receiver.answer = (_, index) => new Response('', { status: index < 2 ? 500 : 200 })
    for (const name of ['first', 'second', 'third']) await api.newFlag('default', name)
    await waitFor(async () => (await logOf(id)).waitingCount === 0, 'every delivery')
    expect(names()).toEqual(['first', 'first', 'first', 'second', 'third'])
  })

  test('a 4xx dead-letters at once, holds up nothing behind it, and a retry sends it again with the same id', async () => {
    const id = await setUp()
    receiver.answer = request =>
      new Response('', { status: JSON.parse(request.body).featureName === 'rejected' ? 400 : 200 })
    await api.newFlag('default', 'rejected')
    await api.newFlag('default', 'accepted')
    await waitFor(async () => names().includes('accepted') && (await logOf(id)).waitingCount === 1, 'the next delivery')
    const log = await logOf(id)
    expect(log.waiting).toHaveLength(1)
    const [dead] = log.waiting
    expect(dead).toMatchObject({ dead: true, attempts: 1, lastError: 'HTTP 400', nextAttemptAt: null })
    expect(log.events.find(e => e.eventId === dead.eventId)?.outcome).toBe('dead')
    expect(names()).toEqual(['rejected', 'accepted'])

    receiver.answer = () => new Response('')
    expectError(await api.post(`/api/admin/addons/${id}/events/999999/retry`), 404, 'NotFoundError')
    expectOk(await api.post(`/api/admin/addons/${id}/events/${dead.eventId}/retry`))
    await waitFor(async () => (await logOf(id)).waitingCount === 0, 'the retried delivery')
    expect(names()).toEqual(['rejected', 'accepted', 'rejected'])
    expect(receiver.received[2].headers['x-flagstore-delivery']).toBe(
      receiver.received[0].headers['x-flagstore-delivery'],
    )
  })

  test('after the retry window a failing delivery is a dead letter', async () => {
    const id = await setUp({ retryForMs: 200 })
    receiver.answer = () => new Response('', { status: 502 })
    await api.newFlag('default', 'never')
    await waitFor(async () => (await logOf(id)).waiting[0]?.dead === true, 'the dead letter')
    const log = await logOf(id)
    expect(log.events[0].outcome).toBe('dead')
    expect(log.events.slice(1).every(e => e.outcome === 'retrying')).toBe(true)
    expect(log.events.length).toBeGreaterThan(2)
  })

  test('Retry-After is honoured: the next attempt is planned no sooner', async () => {
    const id = await setUp({ retryBaseMs: 10 })
    receiver.answer = () => new Response('', { status: 429, headers: { 'retry-after': '120' } })
    await api.newFlag('default', 'later')
    await waitFor(async () => (await logOf(id)).events.length === 1, 'the first attempt')
    const log = await logOf(id)
    const planned = Date.parse(log.waiting[0].nextAttemptAt ?? '')
    // The base (10 ms) caps gaps at 36 s: Retry-After is honoured up to that cap.
    expect(planned - Date.now()).toBeGreaterThan(30_000)
    expect(log.waiting[0].lastError).toBe('HTTP 429')
  })

  test('a receiver that does not answer in time: the attempt ends at the deadline and is retried', async () => {
    const id = await setUp({ timeoutMs: 300 })
    let hang = true
    receiver.answer = async () => {
      if (hang) await Bun.sleep(2000)
      return new Response('')
    }
    await api.newFlag('default', 'slow')
    await waitFor(async () => (await logOf(id)).events.length >= 1, 'the first attempt')
    hang = false
    const [first] = (await logOf(id)).events
    expect(first).toMatchObject({ outcome: 'retrying', statusCode: null, error: 'no answer within 300 ms' })
    await waitFor(async () => (await logOf(id)).waitingCount === 0, 'the delivery')
  })

  test('a hanging receiver holds up no write: 20 writes are answered while it has answered nothing', async () => {
    await setUp({ timeoutMs: 20_000 })
    let release = () => {}
    const held = new Promise<void>(resolve => (release = resolve))
    receiver.answer = async () => {
      await held
      return new Response('')
    }
    for (let i = 0; i < 20; i++) expectOk(await api.createFlag('default', `write-${i}`), 201)
    expect(receiver.received.length).toBeLessThanOrEqual(1)
    release()
  })
})

describe('safe targets', () => {
  test('link-local and cloud metadata addresses are always refused; loopback and private ranges by the setting', () => {
    for (const address of [
      '169.254.169.254',
      '169.254.1.1',
      'fd00:ec2::254',
      'fe80::1',
      '::ffff:169.254.169.254',
      '0.0.0.0',
    ])
      expect(refusedAddress(address, true)).not.toBeNull()
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '::1',
      'fd12::1',
      '::ffff:127.0.0.1',
    ]) {
      expect(refusedAddress(address, true)).toBeNull()
      expect(refusedAddress(address, false)).toContain('ADDONS_ALLOW_PRIVATE_TARGETS')
    }
    for (const address of ['93.184.216.34', '2606:4700::1111', '172.32.0.1'])
      expect(refusedAddress(address, false)).toBeNull()
  })

  test('a metadata target is dead at once, never connected to; a private one too when not allowed', async () => {
    const id = await setUp({ allowPrivate: false })
    const tested = await api.post<{ ok: boolean; error: string }>(`/api/admin/addons/${id}/test`)
    expect(tested.body.ok).toBe(false)
    expect(tested.body.error).toContain('ADDONS_ALLOW_PRIVATE_TARGETS')
    await api.newFlag('default', 'private')
    await waitFor(async () => (await logOf(id)).waiting[0]?.dead === true, 'the dead letter')
    expect(receiver.received).toHaveLength(0)
    expect((await logOf(id)).waiting[0].lastError).toContain('refused')
  })

  test('a redirect to another host is not followed', async () => {
    const id = await setUp()
    const other = startReceiver()
    receiver.answer = () => new Response('', { status: 307, headers: { location: other.url } })
    const tested = await api.post<{ ok: boolean; error: string; statusCode: number }>(`/api/admin/addons/${id}/test`)
    other.stop()
    expect(tested.body).toMatchObject({ ok: false, statusCode: 307 })
    expect(tested.body.error).toContain('not followed')
    expect(other.received).toHaveLength(0)
  })
})

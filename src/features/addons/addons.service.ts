/**
 * Integrations (Unleash's addons, /api/admin/addons): their settings, with sensitive parameters
 * stored but never answered back; each change an event without them. Deliveries are the outbox's
 * (addons.outbox.ts) and the dispatcher's (addons.dispatcher.ts); this reads their log.
 */
import type { Static } from '@sinclair/typebox'
import { events } from '../../domain/events'
import { NotFoundError, ValidationError } from '../../errors'
import type { StateReader, Store, Tx } from '../../storage/store'
import { actorOf, type Caller } from '../tokens/permissions'
import type { Addon, Attempt, CreateAddon, DeliveryLog, Waiting } from './addons.model'
import { PROVIDERS, providerOf } from './addons.providers'
import {
  ADDON_SEQUENCE_KEY,
  attemptKey,
  deliveryKey,
  padded,
  type AddonRecord,
  type AttemptRecord,
  type DeliveryRecord,
} from './addons.records'
import type { Outbox } from './addons.outbox'

export type AddonView = Static<typeof Addon>
export type AddonInput = Static<typeof CreateAddon>

/** What a sensitive parameter is answered as; sent back in a PUT, it keeps the stored value. */
export const MASK = '*****'
/** Attempts an integration's delivery log keeps. */
export const LOG_ENTRIES = 100

export function viewOf(record: AddonRecord, hideSensitive = true): AddonView {
  const sensitive = new Set(
    providerOf(record.provider)
      ?.parameters.filter(p => p.sensitive)
      .map(p => p.name),
  )
  const parameters: Record<string, string> = {}
  for (const [name, value] of Object.entries(record.parameters)) {
    if (!sensitive.has(name)) parameters[name] = value
    else if (hideSensitive) parameters[name] = MASK
  }
  return {
    id: record.id,
    provider: record.provider,
    enabled: record.enabled,
    description: record.description || null,
    parameters,
    events: [...record.events],
    projects: [...record.projects],
    environments: [...record.environments],
    createdAt: record.createdAt,
  }
}

/** What the integration's events hold: its settings without the sensitive parameters. */
const eventDataOf = (record: AddonRecord) => viewOf(record, false)

function checkInput(input: AddonInput, before: AddonRecord | undefined): Record<string, string> {
  const provider = providerOf(input.provider)
  if (!provider)
    throw ValidationError.at(
      '/provider',
      `There is no provider "${input.provider}"; use one of ${PROVIDERS.map(p => p.name).join(', ')}`,
    )
  if (before && before.provider !== input.provider)
    throw ValidationError.at('/provider', 'An integration’s provider cannot change; make a new integration instead')
  const parameters: Record<string, string> = {}
  for (const [name, value] of Object.entries(input.parameters)) {
    const definition = provider.parameters.find(p => p.name === name)
    if (!definition)
      throw ValidationError.at(
        `/parameters/${name}`,
        `${provider.displayName} takes no parameter "${name}"; it takes ${provider.parameters.map(p => p.name).join(', ')}`,
      )
    if (value === MASK && definition.sensitive) {
      const kept = before?.parameters[name]
      if (kept !== undefined) parameters[name] = kept
      continue
    }
    if (value.trim() !== '') parameters[name] = value
  }
  for (const definition of provider.parameters) {
    const value = parameters[definition.name]
    if (definition.required && value === undefined)
      throw ValidationError.at(`/parameters/${definition.name}`, `${definition.displayName} is required`)
    if (value !== undefined && definition.type === 'url') checkUrl(value, `/parameters/${definition.name}`)
  }
  if (parameters.customHeaders !== undefined) checkHeaders(parameters.customHeaders)
  input.events.forEach((type, index) => {
    if (!provider.events.includes(type))
      throw ValidationError.at(`/events/${index}`, `"${type}" is not an event type ${provider.displayName} can deliver`)
  })
  return parameters
}

function checkUrl(value: string, path: string) {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw ValidationError.at(path, `"${value.slice(0, 200)}" is not a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw ValidationError.at(path, `An integration sends over http or https, not ${url.protocol}`)
}

function checkHeaders(text: string) {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw ValidationError.at('/parameters/customHeaders', 'Extra HTTP headers must be a JSON object')
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw ValidationError.at('/parameters/customHeaders', 'Extra HTTP headers must be a JSON object')
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw ValidationError.at(
        '/parameters/customHeaders',
        `Header "${name}" must be a header name with a string value`,
      )
  }
}

export function foundAddon(tx: Pick<StateReader, 'get'>, id: string | number): AddonRecord {
  const record = tx.get('addons', String(id))
  if (!record) throw new NotFoundError(`No integration with id ${id}`)
  return record
}

/** Removes an integration's deliveries, sending state and log (its id is never reused). */
function forget(tx: Tx, id: number) {
  const prefix = `${id}:`
  for (const delivery of tx.values('addonDeliveries'))
    if (delivery.addonId === id) tx.delete('addonDeliveries', deliveryKey(id, delivery.eventId))
  for (const attempt of tx.values('addonAttempts'))
    if (attempt.addonId === id) tx.delete('addonAttempts', `${prefix}${padded(attempt.seq)}`)
  if (tx.get('addonStates', String(id))) tx.delete('addonStates', String(id))
}

function attemptView(record: AttemptRecord): Static<typeof Attempt> {
  return {
    deliveryId: record.deliveryId,
    eventId: record.eventId,
    attempt: record.attempt,
    createdAt: record.at,
    statusCode: record.statusCode,
    error: record.error,
    durationMs: record.durationMs,
    outcome: record.outcome,
  }
}

export function waitingView(record: DeliveryRecord): Static<typeof Waiting> {
  return {
    deliveryId: record.id,
    eventId: record.eventId,
    attempts: record.attempts,
    dead: record.dead,
    nextAttemptAt: record.dead ? null : new Date(record.nextAt).toISOString(),
    lastError: record.lastError,
  }
}

export class AddonsService {
  constructor(
    private readonly store: Pick<Store, 'state' | 'reader' | 'transact'>,
    private readonly outbox: Outbox,
  ) {}

  list(): AddonView[] {
    return Object.values(this.store.state.addons)
      .sort((a, b) => a.id - b.id)
      .map(record => viewOf(record))
  }

  get(id: string): AddonView {
    return viewOf(foundAddon(this.store.reader, id))
  }

  /** The record with its secrets, for sending. */
  record(id: string): AddonRecord {
    return foundAddon(this.store.reader, id)
  }

  create(input: AddonInput, caller: Caller): Promise<AddonView> {
    return this.store.transact(actorOf(caller), tx => {
      const parameters = checkInput(input, undefined)
      const id = tx.nextId('addonSequence', ADDON_SEQUENCE_KEY)
      const record: AddonRecord = {
        id,
        provider: input.provider,
        enabled: input.enabled,
        description: input.description ?? '',
        parameters,
        events: [...new Set(input.events)],
        projects: [...new Set(input.projects ?? [])],
        environments: [...new Set(input.environments ?? [])],
        createdAt: tx.now,
      }
      tx.put('addons', String(id), record)
      tx.appendEvent(events.addonCreated(eventDataOf(record)))
      return viewOf(record)
    })
  }

  update(id: string, input: AddonInput, caller: Caller): Promise<AddonView> {
    return this.store.transact(actorOf(caller), tx => {
      const before = foundAddon(tx, id)
      const record: AddonRecord = {
        ...before,
        enabled: input.enabled,
        description: input.description ?? '',
        parameters: checkInput(input, before),
        events: [...new Set(input.events)],
        projects: [...new Set(input.projects ?? [])],
        environments: [...new Set(input.environments ?? [])],
      }
      tx.put('addons', id, record)
      tx.appendEvent(events.addonUpdated(eventDataOf(record), eventDataOf(before)))
      return viewOf(record)
    })
  }

  /** Deletes the integration with its waiting deliveries and its log. */
  delete(id: string, caller: Caller): Promise<void> {
    return this.store.transact(actorOf(caller), tx => {
      const before = foundAddon(tx, id)
      tx.delete('addons', id)
      forget(tx, before.id)
      tx.appendEvent(events.addonDeleted(eventDataOf(before)))
    })
  }

  deliveryLog(id: string): Static<typeof DeliveryLog> {
    const addon = foundAddon(this.store.reader, id)
    const state = this.store.state.addonStates[String(addon.id)]
    const entries: AttemptRecord[] = []
    const last = state?.logSeq ?? 0
    for (let seq = last; seq > Math.max(0, last - LOG_ENTRIES); seq--) {
      const entry = this.store.state.addonAttempts[attemptKey(addon.id, seq)]
      if (entry) entries.push(entry)
    }
    return {
      events: entries.map(attemptView),
      waiting: this.outbox.waiting(addon.id, 50).map(waitingView),
      waitingCount: this.outbox.waitingCount(addon.id),
      dropped: state?.dropped ?? 0,
    }
  }

  /** Sends a dead letter (or a delivery waiting for its next attempt) again now, as a new series of attempts. */
  retry(id: string, eventId: string, caller: Caller): Promise<Static<typeof Waiting>> {
    return this.store.transact(actorOf(caller), tx => {
      const addon = foundAddon(tx, id)
      const key = deliveryKey(addon.id, Number(eventId))
      const delivery = tx.get('addonDeliveries', key)
      if (!delivery)
        throw new NotFoundError(
          `Integration ${id} has no delivery of event ${eventId} waiting: it was delivered, or never due`,
        )
      const again: DeliveryRecord = {
        ...delivery,
        dead: false,
        attempts: 0,
        nextAt: Date.parse(tx.now),
        firstAttemptAt: null,
      }
      tx.put('addonDeliveries', key, again)
      return waitingView(again)
    })
  }
}

/**
 * What each provider sends for an event: the generic webhook's JSON (or its Mustache template),
 * and messages in Slack's, Microsoft Teams' and Datadog's documented formats naming the flag, the
 * environment, the person and what changed, with a link to the flag's console page when the
 * service's public URL (`UNLEASH_URL`) is known. Every request carries its delivery id, and, with a
 * signing secret, its signature.
 */
import { createHmac } from 'node:crypto'
import Mustache from 'mustache'
import type { EventRecord } from '../../storage/records'
import { DATADOG_URL } from './addons.providers'
import type { AddonRecord } from './addons.records'

export interface OutgoingRequest {
  url: string
  headers: Record<string, string>
  body: string
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`. */
export function signature(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')
  return `t=${unixSeconds},v1=${mac}`
}

const short = (value: unknown) => {
  const text = value === undefined ? '(none)' : JSON.stringify(value)
  return text.length > 80 ? `${text.slice(0, 77)}…` : text
}

/** The fields the event changed, `name: before → after`, at most `limit`. */
export function changesOf(event: Pick<EventRecord, 'data' | 'preData'>, limit = 6): string[] {
  const before = event.preData ?? {}
  const after = event.data ?? {}
  if (!event.preData || !event.data) return []
  const lines: string[] = []
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[key]) === JSON.stringify(after[key])) continue
    lines.push(`${key}: ${short(before[key])} → ${short(after[key])}`)
  }
  return lines.length > limit ? [...lines.slice(0, limit), `and ${lines.length - limit} more`] : lines
}

export function consoleLink(
  event: Pick<EventRecord, 'project' | 'featureName'>,
  publicUrl: string | null,
): string | null {
  if (!publicUrl || !event.featureName || !event.project) return null
  const enc = encodeURIComponent
  return `${publicUrl.replace(/\/+$/, '')}/#/projects/${enc(event.project)}/features/${enc(event.featureName)}`
}

/** One line naming who did what to which flag where. */
export function headline(event: EventRecord): string {
  const subject = event.featureName
    ? `flag ${event.featureName}`
    : event.project
      ? `project ${event.project}`
      : 'the service'
  const where = [
    event.environment ? `in ${event.environment}` : '',
    event.project && event.featureName ? `(project ${event.project})` : '',
  ]
    .filter(Boolean)
    .join(' ')
  return `${event.createdBy}: ${event.type} on ${subject}${where ? ` ${where}` : ''}`
}

function headersOf(addon: AddonRecord): Record<string, string> {
  return addon.parameters.customHeaders ? (JSON.parse(addon.parameters.customHeaders) as Record<string, string>) : {}
}

function webhook(addon: AddonRecord, event: EventRecord): Pick<OutgoingRequest, 'headers' | 'body'> {
  const template = addon.parameters.bodyTemplate
  const body = template ? Mustache.render(template, { event, eventJson: JSON.stringify(event) }) : JSON.stringify(event)
  const headers: Record<string, string> = { 'content-type': addon.parameters.contentType || 'application/json' }
  if (addon.parameters.authorization) headers.authorization = addon.parameters.authorization
  return { headers, body }
}

function slack(addon: AddonRecord, event: EventRecord, link: string | null) {
  const changes = changesOf(event)
  const text = [`*${headline(event)}*`, ...changes.map(line => `• ${line}`)].join('\n')
  const message: Record<string, unknown> = {
    username: addon.parameters.username || 'flagstore',
    icon_emoji: addon.parameters.emojiIcon || ':triangular_flag_on_post:',
    text,
  }
  if (addon.parameters.defaultChannel) message.channel = addon.parameters.defaultChannel
  if (link)
    message.attachments = [{ fallback: link, actions: [{ type: 'button', text: 'Open in the console', url: link }] }]
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) }
}

function teams(event: EventRecord, link: string | null) {
  const facts = [
    { title: 'Flag', value: event.featureName ?? '—' },
    { title: 'Environment', value: event.environment ?? '—' },
    { title: 'Project', value: event.project ?? '—' },
    { title: 'By', value: event.createdBy },
  ]
  const card = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.4',
    body: [
      { type: 'TextBlock', text: headline(event), weight: 'Bolder', wrap: true },
      { type: 'FactSet', facts },
      ...changesOf(event).map(line => ({ type: 'TextBlock', text: line, wrap: true, spacing: 'Small' })),
    ],
    actions: link ? [{ type: 'Action.OpenUrl', title: 'Open in the console', url: link }] : [],
  }
  const message = {
    type: 'message',
    attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: card }],
  }
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) }
}

function datadog(addon: AddonRecord, event: EventRecord, link: string | null) {
  const template = addon.parameters.bodyTemplate
  const lines = template
    ? [Mustache.render(template, { event, eventJson: JSON.stringify(event) })]
    : [headline(event), ...changesOf(event), ...(link ? [link] : [])]
  const message: Record<string, unknown> = {
    title: headline(event),
    text: `%%% \n${lines.join('\n')}\n %%% `,
    tags: [
      `type:${event.type}`,
      ...(event.featureName ? [`flag:${event.featureName}`] : []),
      ...(event.project ? [`project:${event.project}`] : []),
      ...(event.environment ? [`env:${event.environment}`] : []),
    ],
  }
  if (addon.parameters.sourceTypeName) message.source_type_name = addon.parameters.sourceTypeName
  return {
    headers: { 'content-type': 'application/json', 'dd-api-key': addon.parameters.apiKey ?? '' },
    body: JSON.stringify(message),
  }
}

/** The request a delivery of `event` to `addon` makes, at `now` (ms; the signature's time). */
export function requestFor(
  addon: AddonRecord,
  event: EventRecord,
  deliveryId: string,
  publicUrl: string | null,
  now: number,
): OutgoingRequest {
  const link = consoleLink(event, publicUrl)
  const made =
    addon.provider === 'slack'
      ? slack(addon, event, link)
      : addon.provider === 'teams'
        ? teams(event, link)
        : addon.provider === 'datadog'
          ? datadog(addon, event, link)
          : webhook(addon, event)
  const headers: Record<string, string> = {
    ...headersOf(addon),
    ...made.headers,
    'user-agent': 'flagstore-integrations',
    'x-flagstore-delivery': deliveryId,
    'x-flagstore-event': event.type,
  }
  if (addon.parameters.signingSecret)
    headers['x-flagstore-signature'] = signature(addon.parameters.signingSecret, made.body, Math.floor(now / 1000))
  const url = addon.provider === 'datadog' ? addon.parameters.url || DATADOG_URL : addon.parameters.url
  return { url, headers, body: made.body }
}

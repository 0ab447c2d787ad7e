/** The kinds of integration (Unleash's addon providers) and the parameters each takes. */
import { EVENT_TYPES } from '../../domain/events'

export interface ProviderParameter {
  name: string
  displayName: string
  type: 'url' | 'text' | 'textfield'
  description: string
  placeholder?: string
  required: boolean
  /** Stored but never answered back: `*****` in its place. */
  sensitive: boolean
}

export interface Provider {
  name: string
  displayName: string
  description: string
  documentationUrl: string
  parameters: ProviderParameter[]
  events: string[]
}

const param = (
  name: string,
  displayName: string,
  type: ProviderParameter['type'],
  description: string,
  options: { required?: boolean; sensitive?: boolean; placeholder?: string } = {},
): ProviderParameter => ({
  name,
  displayName,
  type,
  description,
  required: options.required ?? false,
  sensitive: options.sensitive ?? false,
  ...(options.placeholder === undefined ? {} : { placeholder: options.placeholder }),
})

/** What an integration hears of: every event the service records. */
export const ADDON_EVENTS: string[] = [...EVENT_TYPES]

const customHeaders = param(
  'customHeaders',
  'Extra HTTP headers',
  'textfield',
  'A JSON object of header names and values sent with every request',
  { sensitive: true, placeholder: '{ "X-Team": "flags" }' },
)
const signingSecret = param(
  'signingSecret',
  'Signing secret',
  'text',
  'Signs every request: X-Flagstore-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">',
  { sensitive: true },
)
const bodyTemplate = (what: string) =>
  param('bodyTemplate', 'Body template', 'textfield', `A Mustache template for ${what}, over {{event.*}}`, {
    placeholder: '{ "flag": "{{event.featureName}}", "by": "{{event.createdBy}}" }',
  })

export const PROVIDERS: Provider[] = [
  {
    name: 'webhook',
    displayName: 'Webhook',
    description: 'Sends every chosen event to a URL, signed, retried and in order.',
    documentationUrl: 'docs/integrations.md#webhook',
    parameters: [
      param('url', 'Webhook URL', 'url', 'Where each event is POSTed', { required: true }),
      param('contentType', 'Content-Type', 'text', 'The body’s media type (application/json by default)'),
      param('authorization', 'Authorization header', 'text', 'Sent as the Authorization header', { sensitive: true }),
      customHeaders,
      bodyTemplate('the body; without one the body is the event as JSON'),
      signingSecret,
    ],
    events: ADDON_EVENTS,
  },
  {
    name: 'slack',
    displayName: 'Slack',
    description: 'Posts a message for each chosen event to a Slack channel through an incoming webhook.',
    documentationUrl: 'docs/integrations.md#slack',
    parameters: [
      param('url', 'Slack webhook URL', 'url', 'The incoming webhook’s URL', { required: true, sensitive: true }),
      param('defaultChannel', 'Channel', 'text', 'A channel to post in instead of the webhook’s own'),
      param('username', 'Username', 'text', 'The name messages are posted under (flagstore by default)'),
      param('emojiIcon', 'Emoji icon', 'text', 'The emoji messages are posted with (:triangular_flag_on_post:)'),
      customHeaders,
    ],
    events: ADDON_EVENTS,
  },
  {
    name: 'teams',
    displayName: 'Microsoft Teams',
    description: 'Posts an Adaptive Card for each chosen event to a Teams channel through a workflow webhook.',
    documentationUrl: 'docs/integrations.md#microsoft-teams',
    parameters: [
      param('url', 'Teams webhook URL', 'url', 'The workflow’s (or incoming webhook’s) URL', {
        required: true,
        sensitive: true,
      }),
      customHeaders,
    ],
    events: ADDON_EVENTS,
  },
  {
    name: 'datadog',
    displayName: 'Datadog',
    description: 'Records each chosen event as a Datadog event.',
    documentationUrl: 'docs/integrations.md#datadog',
    parameters: [
      param('url', 'Datadog events URL', 'url', 'The events API of your Datadog site', {
        placeholder: 'https://api.datadoghq.com/api/v1/events',
      }),
      param('apiKey', 'Datadog API key', 'text', 'Sent as DD-API-KEY', { required: true, sensitive: true }),
      param('sourceTypeName', 'Source type name', 'text', 'The event’s source_type_name'),
      customHeaders,
      bodyTemplate('the event’s text'),
    ],
    events: ADDON_EVENTS,
  },
]

export const DATADOG_URL = 'https://api.datadoghq.com/api/v1/events'

export function providerOf(name: string): Provider | undefined {
  return PROVIDERS.find(provider => provider.name === name)
}

/** Schemas of the frontend API (sdk-api-contract §2): what `unleash-proxy-client` and its wrappers read and send. */
import { t } from 'elysia'
import { KEYS_ARE_NAMES } from '../../http/lenient-bodies'

const Scalar = t.Union([t.String(), t.Number(), t.Boolean(), t.Null()])
const field = (description: string) =>
  t.Optional(t.Union([t.String(), t.Number(), t.Boolean(), t.Null()], { description }))

export const FrontendContext = t.Object(
  {
    userId: field('The user'),
    sessionId: field('The session; a random one when missing'),
    remoteAddress: field("The client's address; the caller's address when missing"),
    appName: field('The application'),
    environment: field('The environment the application says it runs in (the token decides which flags are read)'),
    currentTime: field('The time DATE_* constraints compare with (ISO 8601); now when missing'),
    properties: t.Optional(
      t.Record(t.String(), Scalar, { description: 'Further fields, read by constraints and stickiness' }),
    ),
  },
  {
    additionalProperties: Scalar,
    description: 'The context flags are evaluated for; any other field is moved into properties',
    // Context field names are the user's (a field may be called constructor, as in the query form);
    // evaluation/context.ts reads them into objects without a prototype. Values are scalars only.
    [KEYS_ARE_NAMES]: true,
  },
)

export const FrontendContextBody = t.Object(
  { context: t.Optional(FrontendContext) },
  {
    additionalProperties: true,
    description: 'The context, as unleash-proxy-client sends it with usePOSTrequests',
    examples: [
      { context: { userId: 'user-42', sessionId: 'session-1', appName: 'web-shop', properties: { plan: 'premium' } } },
    ],
  },
)

const Payload = t.Object(
  {
    type: t.String({ description: 'json, csv, string or number' }),
    value: t.String({ description: 'The payload, as text' }),
  },
  { description: 'A payload the variant carries' },
)

export const FrontendToggles = t.Object(
  {
    toggles: t.Array(
      t.Object(
        {
          name: t.String({ description: 'Flag name' }),
          enabled: t.Boolean({ description: 'Always true: only enabled flags are listed' }),
          variant: t.Object(
            {
              name: t.String({ description: "The variant chosen for the context; 'disabled' when the flag has none" }),
              enabled: t.Boolean({ description: 'false for the disabled variant' }),
              payload: t.Optional(Payload),
              feature_enabled: t.Boolean({ description: 'Always true here (the older name)' }),
              featureEnabled: t.Boolean({ description: 'Always true here' }),
            },
            { description: 'The variant' },
          ),
          impressionData: t.Boolean({ description: 'Whether SDKs emit impression events' }),
        },
        { description: 'An enabled flag' },
      ),
      { description: 'The flags of the token scope that are enabled for the context, by name' },
    ),
  },
  {
    description:
      'The flags enabled for the context, with an ETag header made from the answer; 304 without a body when If-None-Match matches',
    examples: [
      {
        toggles: [
          {
            name: 'checkout',
            enabled: true,
            variant: { name: 'disabled', enabled: false, feature_enabled: true, featureEnabled: true },
            impressionData: false,
          },
        ],
      },
    ],
  },
)

export const frontendModels = {
  frontendApiFeaturesSchema: FrontendToggles,
  frontendContextBodySchema: FrontendContextBody,
}

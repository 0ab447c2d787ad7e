/** Schemas of OFREP (open-feature/protocol service/openapi.yaml), as this service answers it (docs/ofrep.md). */
import { t } from 'elysia'
import { KEYS_ARE_NAMES } from '../../http/lenient-bodies'
import { DOCUMENTED_AS } from '../../http/schemas'

const Scalar = t.Union([t.String(), t.Number(), t.Boolean(), t.Null()])

const OfrepContext = t.Object(
  {
    targetingKey: t.Optional(
      t.String({
        description: 'Who the flags are evaluated for: the userId of strategies, constraints and stickiness',
      }),
    ),
    properties: t.Optional(
      t.Record(t.String(), Scalar, { description: 'Further fields, as the frontend API reads them' }),
    ),
  },
  {
    additionalProperties: Scalar,
    description:
      "The evaluation context. Fields are read as the frontend API's (sessionId, remoteAddress, appName, environment, currentTime at the root, " +
      "any other field as a property); remoteAddress defaults to the caller's address. Values are text, numbers or booleans",
  },
)

const requestExample = { context: { targetingKey: 'user-42', sessionId: 'session-1', plan: 'premium' } }

/** Validated loosely (the context is checked by ofrep.context.ts, so that its problems are INVALID_CONTEXT); documented as sent. */
export const OfrepRequest = t.Object(
  {
    context: t.Optional(t.Unknown({ description: 'The evaluation context', [KEYS_ARE_NAMES]: true })),
  },
  {
    additionalProperties: true,
    description: 'An evaluation request',
    [DOCUMENTED_AS]: t.Object(
      { context: OfrepContext },
      { description: 'An evaluation request', examples: [requestExample] },
    ),
    examples: [requestExample],
  },
)

const REASONS =
  'STATIC (on for every context), TARGETING_MATCH (the context decided), SPLIT (a percentage decided), DISABLED (off in the environment), DEFAULT (on there, but not for this context)'

export const OfrepEvaluation = t.Object(
  {
    key: t.String({ description: 'Flag name' }),
    value: t.Union([t.Boolean(), t.String(), t.Number(), t.Unknown()], {
      description:
        "A flag without variants: true or false. A flag with variants: the chosen variant's payload (text for string and csv, a number for number, " +
        'the parsed JSON for json); true when the variant has no payload or none is chosen, false when the flag is off. A value of another type ' +
        "than the application's default is TYPE_MISMATCH to OpenFeature providers, which then answer that default",
    }),
    reason: t.String({ description: `Why: ${REASONS}` }),
    variant: t.String({
      description:
        "The variant's name; on or off for a flag without variants; disabled for a flag with variants and none chosen",
    }),
    metadata: t.Object({ project: t.String({ description: "The flag's project" }) }, { description: 'About the flag' }),
  },
  {
    description: 'One flag evaluated for the context',
    examples: [{ key: 'checkout', value: 'blue', reason: 'SPLIT', variant: 'blue', metadata: { project: 'default' } }],
  },
)

const errorCode = (codes: string) => t.String({ description: `OpenFeature's error code: ${codes}` })

export const OfrepFailure = t.Object(
  {
    key: t.String({ description: 'The flag the request named' }),
    errorCode: errorCode(
      'FLAG_NOT_FOUND (404), PARSE_ERROR (the body is not JSON, not an object, or not application/json), TARGETING_KEY_MISSING, INVALID_CONTEXT, GENERAL',
    ),
    errorDetails: t.String({ description: 'What went wrong, in words meant for a person' }),
  },
  {
    description: 'The flag could not be evaluated',
    examples: [
      {
        key: 'no-such-flag',
        errorCode: 'FLAG_NOT_FOUND',
        errorDetails: 'No flag "no-such-flag" in the token\'s projects',
      },
    ],
  },
)

export const OfrepBulkFailure = t.Object(
  {
    errorCode: errorCode('PARSE_ERROR, TARGETING_KEY_MISSING, INVALID_CONTEXT, GENERAL'),
    errorDetails: t.String({ description: 'What went wrong, in words meant for a person' }),
  },
  { description: 'No flag could be evaluated' },
)

const EventStream = t.Object(
  {
    type: t.Literal('sse', { description: 'Server-Sent Events' }),
    endpoint: t.Object(
      {
        requestUri: t.String({
          description:
            "The path of this token's channel (getOfrepEvents), to put after the origin of the provider's base URL",
        }),
      },
      { description: 'Where the SSE stream is' },
    ),
  },
  { description: 'An SSE stream that sends refetchEvaluation when a flag changes (OFREP ADR-0008)' },
)

export const OfrepBulk = t.Object(
  {
    flags: t.Array(OfrepEvaluation, {
      description: "Every flag of the token's projects (archived ones aside), on or off, by name",
    }),
    eventStreams: t.Optional(
      t.Array(EventStream, { description: 'Where web providers learn of changes instead of polling' }),
    ),
  },
  {
    description:
      'Every flag evaluated for the context, with an ETag; If-None-Match with it answers 304 while neither the flags nor the context changed',
  },
)

export const OfrepGeneralError = t.Object(
  { errorDetails: t.String({ description: 'What went wrong, with the id the log has it under' }) },
  { description: 'An error on our side' },
)

export const ofrepModels = {
  ofrepEvaluationRequest: OfrepRequest,
  ofrepEvaluationSuccess: OfrepEvaluation,
  ofrepEvaluationFailure: OfrepFailure,
  ofrepBulkEvaluationSuccess: OfrepBulk,
  ofrepBulkEvaluationFailure: OfrepBulkFailure,
  ofrepGeneralError: OfrepGeneralError,
}

/** The JSON-Patch request bodies: the flag's metadata and a variant list. */
import { t } from 'elysia'
import { DOCUMENTED_AS, literals } from '../../http/schemas'
import { PATCH_OPS } from './flag-patch'

/**
 * A JSON-Patch body, as validated before the handler: only an array of objects. The operations
 * themselves are checked by the service, so that an unknown flag (404) and a /variants path (403)
 * answer before a malformed operation (400), as the contract orders them (§5). The OpenAPI document
 * shows the operations' own schema in its place (http/openapi.ts).
 */
export function jsonPatchBody(target: { path: string; operation: string; description: string; example: unknown[] }) {
  const documented = t.Array(
    t.Object(
      {
        op: literals(PATCH_OPS, 'The JSON-Patch operation'),
        path: t.String({ description: target.path, maxLength: 200 }),
        from: t.Optional(t.String({ description: 'Source pointer, for copy and move', maxLength: 200 })),
        value: t.Optional(t.Unknown({ description: 'Value for add, replace and test' })),
      },
      { description: target.operation, additionalProperties: false },
    ),
    { maxItems: 1000, description: target.description, examples: [target.example] },
  )
  return t.Array(t.Record(t.String(), t.Unknown(), { description: 'One JSON-Patch (RFC 6902) operation' }), {
    maxItems: 1000,
    description: target.description,
    [DOCUMENTED_AS]: documented,
  })
}

export const PatchOperations = jsonPatchBody({
  path: 'JSON pointer into the flag metadata, e.g. /description',
  operation:
    'One JSON-Patch (RFC 6902) operation: value only for add, replace and test, from only for copy and move; any other member is refused (400)',
  description:
    'Operations applied in order, all or nothing. Patchable: /description, /type, /stale, /impressionData, /archived',
  example: [{ op: 'replace', path: '/stale', value: true }],
})

/**
 * TypeBox writes JSON Schema 2020; the document is OpenAPI 3.0, which Swagger UI reads by 3.0's
 * rules: a `const` it does not know (an enumeration written as anyOf of consts showed as "string"
 * with the error "'string', 'string', …"), no `type: 'null'` (3.0 says `nullable: true`), and one
 * `example` per schema instead of a list of `examples`. Every schema of the document is rewritten.
 */
type Json = Record<string, any>

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The schema `$ref` points to within `document`, or the schema itself. */
export function resolveRef(schema: Json | undefined, document: Json): Json | undefined {
  let current = schema
  for (let hops = 0; current && typeof current.$ref === 'string' && hops < 20; hops++) {
    const name = current.$ref.replace(/^#\/components\/schemas\//, '')
    current = document.components?.schemas?.[name]
  }
  return current
}

/** The example a body schema carries (`examples: [first, …]` as TypeBox writes it, or 3.0's `example`). */
export function bodyExampleOf(schema: Json | undefined, document: Json): unknown {
  const target = resolveRef(schema, document)
  if (!target) return undefined
  if (Array.isArray(target.examples) && target.examples.length > 0) return target.examples[0]
  return target.example
}

function rewriteSchema(schema: unknown): void {
  if (!isObject(schema)) return
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
    if (Array.isArray(schema[key])) schema[key].forEach(rewriteSchema)
  for (const inner of Object.values<unknown>(schema.properties ?? {})) rewriteSchema(inner)
  for (const inner of Object.values<unknown>(schema.patternProperties ?? {})) rewriteSchema(inner)
  if (Array.isArray(schema.items)) schema.items.forEach(rewriteSchema)
  else rewriteSchema(schema.items)
  rewriteSchema(schema.additionalProperties)
  rewriteSchema(schema.not)

  if ('const' in schema) {
    schema.enum = [schema.const]
    delete schema.const
  }
  const members: Json[] | undefined = schema.anyOf
  if (members) {
    const withoutNull = members.filter(member => member.type !== 'null')
    if (withoutNull.length < members.length) schema.nullable = true
    if (
      withoutNull.length > 0 &&
      withoutNull.every(member => Array.isArray(member.enum) && member.type === withoutNull[0].type)
    ) {
      // An enumeration: one schema listing the values.
      delete schema.anyOf
      schema.type = withoutNull[0].type
      schema.enum = withoutNull.flatMap(member => member.enum)
    } else if (withoutNull.length === 1) {
      // Nullable: the one remaining schema, its own keywords kept where the outer one says nothing.
      delete schema.anyOf
      for (const [key, value] of Object.entries(withoutNull[0])) if (!(key in schema)) schema[key] = value
    } else {
      schema.anyOf = withoutNull
    }
  }
  if (Array.isArray(schema.examples)) {
    if (schema.examples.length > 0 && !('example' in schema)) schema.example = schema.examples[0]
    delete schema.examples
  }
}

/** Rewrites, in place, every schema of `document`: components, parameters, request and response bodies. */
export function toOpenApi30(document: Json): Json {
  for (const schema of Object.values<unknown>(document.components?.schemas ?? {})) rewriteSchema(schema)
  for (const operations of Object.values<Json>(document.paths ?? {})) {
    for (const operation of Object.values<Json>(operations)) {
      if (!isObject(operation)) continue
      for (const parameter of operation.parameters ?? []) {
        rewriteSchema(parameter.schema)
        // A parameter's `examples` is a map of Example Objects in 3.0; the mapping copies the schema's list there.
        if (Array.isArray(parameter.examples)) {
          if (parameter.examples.length > 0 && !('example' in parameter)) parameter.example = parameter.examples[0]
          delete parameter.examples
        }
      }
      for (const media of Object.values<Json>(operation.requestBody?.content ?? {})) rewriteSchema(media.schema)
      for (const response of Object.values<Json>(operation.responses ?? {})) {
        for (const media of Object.values<Json>(response?.content ?? {})) rewriteSchema(media.schema)
        // The mapping copies a response schema's examples onto the response, where 3.0 has no such field.
        if (Array.isArray(response?.examples)) {
          const media = response.content?.['application/json']
          if (media && response.examples.length > 0 && !('example' in media)) media.example = response.examples[0]
          delete response.examples
        }
      }
    }
  }
  return document
}

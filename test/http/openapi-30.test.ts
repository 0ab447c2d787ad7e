/**
 * The document is OpenAPI 3.0 as Swagger UI reads it (issue 14, item 10): no JSON Schema 2020
 * keywords 3.0 lacks (`const`, `type: 'null'`, lists of `examples`), enumerations as `enum`, numbers
 * that are numbers (not "string or integer"), and the properties readers saw wrong shown right.
 */
import { describe, expect, test } from 'bun:test'
import { BUILT_IN_STRATEGIES } from '../../src/features/strategy-types/built-in-strategies'
import { FLAG_TYPES, openApiSpec } from '../helpers'

type Json = Record<string, any>

const spec: Json = await openApiSpec()
const schemas: Record<string, Json> = spec.components.schemas

/** Every schema object of the document with where it is: components, parameters, bodies, and what they nest. */
function allSchemas(): { where: string; schema: Json }[] {
  const found: { where: string; schema: Json }[] = []
  const visit = (schema: unknown, where: string) => {
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return
    const object = schema as Json
    found.push({ where, schema: object })
    for (const [name, inner] of Object.entries<unknown>(object.properties ?? {})) visit(inner, `${where}.${name}`)
    for (const [pattern, inner] of Object.entries<unknown>(object.patternProperties ?? {}))
      visit(inner, `${where}[${pattern}]`)
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
      (object[key] ?? []).forEach((inner: unknown, index: number) => visit(inner, `${where}.${key}[${index}]`))
    visit(object.items, `${where}[]`)
    visit(object.additionalProperties, `${where}{}`)
    visit(object.not, `${where}!`)
  }
  for (const [name, schema] of Object.entries(schemas)) visit(schema, name)
  for (const [path, item] of Object.entries<Json>(spec.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      const label = `${method.toUpperCase()} ${path}`
      for (const parameter of operation.parameters ?? []) visit(parameter.schema, `${label} ${parameter.name}`)
      for (const media of Object.values<Json>(operation.requestBody?.content ?? {}))
        visit(media.schema, `${label} body`)
      for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
        for (const media of Object.values<Json>(response.content ?? {})) visit(media.schema, `${label} ${status}`)
      }
    }
  }
  return found
}

describe('OpenAPI 3.0 keywords only', () => {
  test('no const, no type null or type lists, no lists of examples: enumerations are enum, nullable is nullable', () => {
    const problems: string[] = []
    for (const { where, schema } of allSchemas()) {
      if ('const' in schema) problems.push(`${where}: const`)
      if (schema.type === 'null' || Array.isArray(schema.type))
        problems.push(`${where}: type ${JSON.stringify(schema.type)}`)
      if ('examples' in schema) problems.push(`${where}: examples (3.0 has example)`)
      if (
        Array.isArray(schema.anyOf) &&
        schema.anyOf.length > 0 &&
        schema.anyOf.every((member: Json) => Array.isArray(member.enum))
      )
        problems.push(`${where}: an enumeration written as anyOf`)
    }
    for (const [path, item] of Object.entries<Json>(spec.paths)) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        for (const parameter of operation.parameters ?? [])
          if ('examples' in parameter) problems.push(`${method} ${path} ${parameter.name}: examples`)
        for (const [status, response] of Object.entries<Json>(operation.responses ?? {}))
          if ('examples' in response) problems.push(`${method} ${path} ${status}: examples`)
      }
    }
    expect(problems).toEqual([])
  })

  test('no property takes a number written as a string: integers are integers (Elysia t.Integer is not used)', () => {
    const stringNumbers = allSchemas().filter(
      ({ schema }) => schema.type === 'string' && ['integer', 'numeric', 'number'].includes(schema.format),
    )
    expect(stringNumbers.map(({ where }) => where)).toEqual([])
  })

  test('a nullable property is one schema with nullable: true', () => {
    expect(schemas.createFeatureSchema.properties.description).toMatchObject({
      type: 'string',
      nullable: true,
      maxLength: 2000,
    })
    expect(schemas.createFeatureStrategySchema.properties.disabled).toMatchObject({ type: 'boolean', nullable: true })
  })
})

describe('the properties readers saw wrong', () => {
  test('the flag type is an enumeration of the flag types, in the create and update bodies', () => {
    for (const name of ['createFeatureSchema', 'updateFeatureSchema']) {
      expect({ name, type: schemas[name].properties.type.type, values: schemas[name].properties.type.enum }).toEqual({
        name,
        type: 'string',
        values: FLAG_TYPES,
      })
    }
  })

  test('the strategy name is a plain string with an example, its description naming every built-in type (user-defined ones exist too)', () => {
    const name = schemas.createFeatureStrategySchema.properties.name
    expect(name).toMatchObject({ type: 'string', example: 'flexibleRollout' })
    expect(name.enum).toBeUndefined()
    expect(name.anyOf).toBeUndefined()
    for (const strategy of BUILT_IN_STRATEGIES) expect(name.description).toContain(strategy.name)
  })

  test('enumerated request properties are enums: constraint operators, weight types, JSON-Patch ops, lifecycle status', () => {
    const strategy = schemas.createFeatureStrategySchema.properties
    expect(strategy.constraints.items.properties.operator).toMatchObject({
      type: 'string',
      enum: expect.arrayContaining(['IN', 'NOT_IN', 'SEMVER_EQ']),
    })
    expect(strategy.variants.items.properties.weightType).toMatchObject({ type: 'string', enum: ['variable', 'fix'] })
    expect(schemas.patchesSchema.items.properties.op).toMatchObject({
      type: 'string',
      enum: ['add', 'remove', 'replace', 'copy', 'move', 'test'],
    })
    expect(schemas.completeFeatureSchema.properties.status).toMatchObject({
      type: 'string',
      enum: ['kept', 'discarded'],
    })
  })

  test('sortOrder, weight and segment ids are integers; the segments example is a list of integers', () => {
    const strategy = schemas.createFeatureStrategySchema.properties
    expect(strategy.sortOrder.type).toBe('integer')
    expect(schemas.createEnvironmentSchema.properties.sortOrder.type).toBe('integer')
    expect(strategy.variants.items.properties.weight.type).toBe('integer')
    expect(schemas.variantSchema.properties.weight.type).toBe('integer')
    expect(strategy.segments.items.type).toBe('integer')
    expect(strategy.segments.example.length).toBeGreaterThan(0)
    expect(strategy.segments.example.every(Number.isInteger)).toBe(true)
  })

  test('the security scheme shows the admin token format as code, so Markdown does not read *:* as emphasis', () => {
    const description: string = spec.components.securitySchemes.apiKey.description
    expect(description).toMatch(/`\*:\*\.[^`]*`/)
    expect(description.replace(/`[^`]*`/g, '')).not.toContain('*')
  })

  test('every request body shows its example where Swagger UI takes the body of "Try it out" from', () => {
    const missing: string[] = []
    for (const [path, item] of Object.entries<Json>(spec.paths)) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        const media = operation.requestBody?.content?.['application/json']
        if (media && media.example === undefined) missing.push(`${method.toUpperCase()} ${path}`)
      }
    }
    expect(missing).toEqual([])
    expect(
      spec.paths['/api/admin/projects/{projectId}/features'].post.requestBody.content['application/json'].example,
    ).toMatchObject({ name: expect.any(String), type: 'release' })
  })
})

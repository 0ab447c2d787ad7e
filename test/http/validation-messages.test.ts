/**
 * Issue 18 item 11: every validation message names the field's path and the rule broken, in
 * plain words. For every operation of the OpenAPI document that takes a JSON body, each rule its
 * schema states (required, type, maxLength, minLength, pattern, enumerations, minimum, maximum,
 * format, array sizes) is broken once in an otherwise valid body; the 400 must have a detail at
 * the offending place naming that rule, every detail a path, and no TypeBox text anywhere.
 */
// Store-independent: about the 400s of broken bodies, answered before a handler runs.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { validationDetails } from '../../src/http/validation-messages'
import { PATTERN_RULE } from '../../src/http/schemas'
import { ADMIN_SECRET, errorOf, expectOk, makeApi, openApiSpec, type Api } from '../helpers'

type Schema = Record<string, any>
let document: Record<string, any>
let api: Api
let client = ''
let frontend = ''
const fixtures: Record<string, string> = {
  projectId: 'default',
  featureName: 'f',
  parent: 'parent',
  environment: 'development',
  type: 'simple',
  value: 'beta',
  tokenName: 'tok',
  contextField: 'plan',
  legalValue: 'pro',
  appName: 'web',
}

beforeAll(async () => {
  document = await openApiSpec()
  // Large enough for a list one item over its maxItems.
  api = await makeApi({ bodyLimit: 10_000_000 })
  await api.newFlag('default', 'f')
  await api.newFlag('default', 'parent')
  expectOk(await api.post('/api/admin/context', { name: 'plan', legalValues: [{ value: 'pro' }] }), 201)
  expectOk(await api.post('/api/admin/strategies', { name: 'custom', parameters: [] }), 201)
  const strategy = await api.post<{ id: string }>(
    '/api/admin/projects/default/features/f/environments/development/strategies',
    { name: 'default' },
  )
  fixtures.strategyId = strategy.body.id
  const segment = await api.post<{ id: number }>('/api/admin/segments', { name: 's', constraints: [] })
  fixtures.segmentId = String(segment.body.id)
  const token = await api.createToken({ tokenName: 'tok', type: 'client', environment: 'development' })
  client = token.body.secret
  frontend = (await api.createToken({ tokenName: 'front', type: 'frontend', environment: 'development' })).body.secret
})

/**
 * JSON Patch bodies are checked by the service, operation by operation, in RFC 6902's order (the
 * document shows the stricter schema clients should follow): its details name the rule in its own
 * words, at the same place.
 */
const SERVICE_CHECKED = new Set(['patchFeature', 'patchEnvironmentsFeatureVariants', 'patchFeatureVariants'])
afterAll(async () => api.close())

/** Raw texts of TypeBox and Elysia that must never reach a client. */
const RAW_TEXTS =
  /Expected (union|object|array|string|property|boolean|number|integer|kind)|should be one of|Property '|union value|to be string but found|\bfound: /

function resolve(schema: Schema | undefined): Schema {
  let current = schema ?? {}
  while (typeof current.$ref === 'string') current = document.components.schemas[current.$ref.split('/').at(-1)!]
  return current
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

const pointer = (path: string[]) => path.map(key => `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')

interface Violation {
  /** The JSON pointer broken, and what must be said of it. */
  at: string
  rule: RegExp
  /** Replaces the value at `at` (undefined removes it). */
  value: unknown
  what: string
}

/** The violations of one schema (a value at `path`), each a replacement of that value. */
function violations(schema: Schema, path: string[], value: unknown): Violation[] {
  const s = resolve(schema)
  const at = pointer(path)
  const found: Violation[] = []
  const members = Array.isArray(s.anyOf) ? (s.anyOf as Schema[]).map(resolve) : undefined
  if (Array.isArray(s.enum) || (members && members.length > 0 && members.every(member => member.const !== undefined))) {
    found.push({ at, rule: /must be one of /, value: '~not-one-of-them~', what: 'enumeration' })
    return found
  }
  // The member that the valid value is of: its rules are the ones to break.
  const own = members ? members.find(member => kindFits(member, value)) : s
  if (!own) return found
  if (members) {
    const other = members.some(member => member.type === 'boolean') ? { probe: 1 } : true
    if (!members.some(member => kindFits(member, other)))
      found.push({ at, rule: /must be .* or |must be /, value: other, what: 'type of a union' })
  }
  switch (own.type) {
    case 'string':
      found.push({ at, rule: /must be a string|must be .*(date|UUID)/, value: 12345, what: 'type string' })
      if (own.maxLength !== undefined)
        found.push({
          at,
          rule: new RegExp(`must be at most ${own.maxLength} characters? long`),
          value: 'x'.repeat(own.maxLength + 1),
          what: 'maxLength',
        })
      if (own.minLength !== undefined && own.minLength > 0)
        found.push({
          at,
          rule: own.minLength === 1 ? /must not be empty/ : new RegExp(`at least ${own.minLength} characters`),
          value: '',
          what: 'minLength',
        })
      if (own.pattern !== undefined)
        found.push({
          at,
          rule: new RegExp(`^must be ${escapeRegExp(own[PATTERN_RULE])}, got `),
          value: '\u0000 !',
          what: 'pattern',
        })
      if (own.format === 'date-time')
        found.push({ at, rule: /must be a date and time/, value: 'not a date', what: 'format date-time' })
      if (own.format === 'uuid') found.push({ at, rule: /must be a UUID/, value: 'not-a-uuid', what: 'format uuid' })
      break
    case 'integer':
    case 'number':
      found.push({ at, rule: /must be a (whole )?number/, value: 'seven', what: `type ${own.type}` })
      if (own.maximum !== undefined)
        found.push({ at, rule: new RegExp(`must be at most ${own.maximum}`), value: own.maximum + 1, what: 'maximum' })
      if (own.minimum !== undefined)
        found.push({ at, rule: new RegExp(`must be at least ${own.minimum}`), value: own.minimum - 1, what: 'minimum' })
      if (own.type === 'integer') found.push({ at, rule: /must be a whole number/, value: 1.5, what: 'integer' })
      break
    case 'boolean':
      found.push({ at, rule: /must be true or false/, value: 'yes', what: 'type boolean' })
      break
    case 'array': {
      found.push({ at, rule: /must be an array/, value: { not: 'an array' }, what: 'type array' })
      const list = Array.isArray(value) ? value : []
      if (own.maxItems !== undefined && list.length > 0 && own.maxItems < 2000)
        found.push({
          at,
          rule: new RegExp(`must have at most ${own.maxItems} items?`),
          value: Array.from({ length: own.maxItems + 1 }, () => list[0]),
          what: 'maxItems',
        })
      if (own.minItems !== undefined && own.minItems > 0)
        found.push({
          at,
          rule: own.minItems === 1 ? /must not be empty/ : new RegExp(`at least ${own.minItems} items`),
          value: [],
          what: 'minItems',
        })
      if (list.length > 0)
        for (const violation of violations(own.items ?? {}, [...path, '0'], list[0])) found.push(violation)
      break
    }
    case 'object': {
      found.push({ at, rule: /must be a JSON object/, value: ['not', 'an object'], what: 'type object' })
      if (value === null || typeof value !== 'object') break
      for (const key of own.required ?? []) {
        if (key in (value as object))
          found.push({ at: pointer([...path, key]), rule: /is required/, value: undefined, what: `required ${key}` })
      }
      for (const [key, property] of Object.entries<Schema>(own.properties ?? {})) {
        if (key in (value as object))
          found.push(...violations(property, [...path, key], (value as Record<string, unknown>)[key]))
      }
      break
    }
  }
  // A value of another kind that the schema still takes (a number where a string or a number is) breaks nothing.
  return found.filter(
    violation => !violation.what.startsWith('type ') || violation.at !== at || !kindFits(s, violation.value),
  )
}

function kindFits(schema: Schema, value: unknown): boolean {
  const s = resolve(schema)
  if (s.const !== undefined) return s.const === value
  if (Array.isArray(s.anyOf)) return s.anyOf.some((member: Schema) => kindFits(member, value))
  switch (s.type) {
    case 'string':
      return typeof value === 'string'
    case 'integer':
    case 'number':
      return typeof value === 'number'
    case 'boolean':
      return typeof value === 'boolean'
    case 'null':
      return value === null
    case 'array':
      return Array.isArray(value)
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value)
    default:
      return true
  }
}

/** `body` with the value at pointer `at` replaced (removed when undefined). */
function replaced(body: unknown, at: string, value: unknown): unknown {
  if (at === '') return value
  const copy = structuredClone(body) as Record<string, any>
  const keys = at
    .slice(1)
    .split('/')
    .map(key => key.replaceAll('~1', '/').replaceAll('~0', '~'))
  let parent: any = copy
  for (const key of keys.slice(0, -1)) parent = parent[key]
  const last = keys.at(-1)!
  if (value === undefined) delete parent[last]
  else parent[last] = value
  return copy
}

function operationsWithBodies() {
  return Object.entries<Record<string, any>>(document.paths).flatMap(([template, methods]) =>
    Object.entries<any>(methods).flatMap(([method, operation]) => {
      const content = operation.requestBody?.content?.['application/json']
      if (!content) return []
      const schema = content.schema
      const example = content.example ?? resolve(schema).examples?.[0] ?? schema?.examples?.[0]
      return example === undefined
        ? []
        : [{ method: method.toUpperCase(), template, schema, example, id: operation.operationId as string }]
    }),
  )
}

function pathOf(template: string): string {
  return template.replace(/\{([^}]+)\}/g, (_, param: string) => {
    if (param === 'id') return template.startsWith('/api/admin/feature-types/') ? 'release' : fixtures.segmentId
    if (param === 'name') return template.startsWith('/api/admin/tag-types/') ? 'simple' : 'custom'
    return encodeURIComponent(fixtures[param])
  })
}

describe('every rule of every request body of the OpenAPI document, broken once', () => {
  test('answers 400 with a detail at the broken place that names the rule; every detail has a path; no TypeBox text', async () => {
    const missed: string[] = []
    let checked = 0
    // OFREP's bodies are the protocol's: it reads the context itself and answers PARSE_ERROR or
    // INVALID_CONTEXT in its own shape, naming the field (test/features/ofrep/ofrep.test.ts).
    for (const operation of operationsWithBodies().filter(candidate => !candidate.template.startsWith('/ofrep/'))) {
      for (const violation of violations(operation.schema, [], operation.example)) {
        const body = replaced(operation.example, violation.at, violation.value)
        const token = operation.template.startsWith('/api/client')
          ? client
          : operation.template.startsWith('/api/frontend')
            ? frontend
            : ADMIN_SECRET
        const response = await api.request(operation.method, pathOf(operation.template), { token, body })
        const where = `${operation.id} ${violation.what} at ${violation.at || '(body)'}`
        if (response.status !== 400) {
          missed.push(`${where}: ${response.status}`)
          continue
        }
        const error = errorOf(response)
        expect({ where, message: error.message }).not.toEqual({ where, message: expect.stringMatching(RAW_TEXTS) })
        expect({ where, message: error.message }).not.toEqual({ where, message: expect.stringContaining('  ') })
        for (const detail of error.details ?? []) {
          expect({ where, detail }).toEqual({
            where,
            detail: { path: expect.any(String), message: expect.any(String) },
          })
          expect({ where, message: detail.message }).not.toEqual({ where, message: expect.stringMatching(RAW_TEXTS) })
        }
        const rule = SERVICE_CHECKED.has(operation.id) ? /^(must|is) / : violation.rule
        const named = (error.details ?? []).some(detail => detail.path === violation.at && rule.test(detail.message))
        if (!named) missed.push(`${where}: ${JSON.stringify(error.details)}`)
        checked++
      }
    }
    expect(missed).toEqual([])
    expect(checked).toBeGreaterThan(200)
  }, 120_000)
})

describe('the messages of issue 18', () => {
  test('a description one character too long names the limit, not the types of a union', async () => {
    const response = await api.post('/api/admin/projects/default/features', {
      name: 'long-description',
      description: 'd'.repeat(2001),
    })
    expect(errorOf(response)).toMatchObject({
      name: 'ValidationError',
      message:
        'The request body does not match the schema: /description must be at most 2000 characters long, got 2001',
      details: [{ path: '/description', message: 'must be at most 2000 characters long, got 2001' }],
    })
  })

  test('a body of the wrong kind says what it must be, at the path of the whole body', async () => {
    const response = await api.post('/api/admin/projects/default/features', ['not', 'an object'])
    expect(errorOf(response)).toMatchObject({
      message: 'The request body must be a JSON object, got an array of 2 items',
      details: [{ path: '', message: 'must be a JSON object, got an array of 2 items' }],
    })
  })

  test('a missing property is said once, as required', async () => {
    const response = await api.post('/api/admin/projects/default/features', {})
    expect(errorOf(response).details).toEqual([{ path: '/name', message: 'is required' }])
  })
})

test('every kind of schema rule, also those no body uses today, has its plain sentence', () => {
  const schema = Type.Object(
    {
      text: Type.String({ minLength: 2, maxLength: 3, pattern: '^[a-z]+$' }),
      worded: Type.String({ pattern: '^[a-z]+$', [PATTERN_RULE]: 'lower-case letters' }),
      when: Type.String({ format: 'date-time' }),
      id: Type.String({ format: 'uuid' }),
      count: Type.Integer({ minimum: 1, maximum: 9, multipleOf: 2 }),
      ratio: Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }),
      list: Type.Array(Type.String(), { minItems: 2, maxItems: 3, uniqueItems: true }),
      kind: Type.Union([Type.Literal('a'), Type.Literal('b')]),
      maybe: Type.Union([Type.String({ maxLength: 1 }), Type.Null()]),
      flag: Type.Boolean(),
      nested: Type.Object({ inner: Type.String() }, { additionalProperties: false }),
      props: Type.Object({}, { minProperties: 1 }),
    },
    { additionalProperties: false },
  )
  const cases: [string, unknown, RegExp][] = [
    ['/text', 'x', /^must be at least 2 characters long, got 1$/],
    ['/text', 'abcd', /^must be at most 3 characters long, got 4$/],
    ['/text', 'AB', /^must be a string matching the pattern \^\[a-z\]\+\$, got the string "AB"$/],
    ['/worded', 'AB', /^must be lower-case letters, got the string "AB"$/],
    ['/when', 'soon', /^must be a date and time in RFC 3339 form/],
    ['/id', 'x', /^must be a UUID, got the string "x"$/],
    ['/count', 0, /^must be at least 1, got 0$/],
    ['/count', 10, /^must be at most 9, got 10$/],
    ['/count', 3, /^must be a multiple of 2, got 3$/],
    ['/count', 2.5, /^must be a whole number, got the number 2.5$/],
    ['/ratio', 0, /^must be greater than 0, got 0$/],
    ['/ratio', 1, /^must be less than 1, got 1$/],
    ['/list', ['a'], /^must have at least 2 items, got 1$/],
    ['/list', ['a', 'b', 'c', 'd'], /^must have at most 3 items, got 4$/],
    ['/list', ['a', 'a'], /^must not hold the same item twice$/],
    ['/kind', 'c', /^must be one of "a", "b", got the string "c"$/],
    ['/maybe', 'xy', /^must be at most 1 character long, got 2$/],
    ['/maybe', 5, /^must be a string or null, got the number 5$/],
    ['/flag', 'yes', /^must be true or false, got the string "yes"$/],
    ['/nested', [], /^must be a JSON object, got an array of 0 items$/],
    ['/props', {}, /^must have at least 1 property$/],
  ]
  const valid = {
    text: 'ab',
    worded: 'ab',
    when: '2026-01-01T00:00:00Z',
    id: '00000000-0000-4000-8000-000000000000',
    count: 2,
    ratio: 0.5,
    list: ['a', 'b'],
    kind: 'a',
    maybe: null,
    flag: true,
    nested: { inner: 'x' },
    props: { a: 1 },
  }
  expect(validationDetails(Value.Errors(schema, valid))).toEqual([])
  for (const [path, value, rule] of cases) {
    const details = validationDetails(Value.Errors(schema, { ...valid, [path.slice(1)]: value }))
    expect({ path, value, details }).toEqual({ path, value, details: [{ path, message: expect.stringMatching(rule) }] })
  }
  const { text: _, ...missing } = valid
  expect(validationDetails(Value.Errors(schema, missing))).toEqual([{ path: '/text', message: 'is required' }])
  expect(validationDetails(Value.Errors(schema, { ...valid, extra: 1 }))).toEqual([
    { path: '/extra', message: 'is not a property this accepts' },
  ])
  expect(validationDetails(Value.Errors(schema, { ...valid, nested: { inner: 'x', more: 1 } }))).toEqual([
    { path: '/nested/more', message: 'is not a property this accepts' },
  ])
})

test('every pattern in the OpenAPI document (bodies, path parameters, query strings) says in words what it asks for', () => {
  const unworded: string[] = []
  const walk = (node: unknown, where: string) => {
    if (Array.isArray(node)) return node.forEach((item, index) => walk(item, `${where}/${index}`))
    if (node === null || typeof node !== 'object') return
    const schema = node as Record<string, unknown>
    if (typeof schema.pattern === 'string' && typeof schema[PATTERN_RULE] !== 'string') unworded.push(where)
    // Examples are values, not schemas (a project's naming pattern is a property called pattern).
    for (const [key, value] of Object.entries(schema))
      if (key !== 'examples' && key !== 'example') walk(value, `${where}/${key}`)
  }
  walk(document, '')
  expect(unworded).toEqual([])
})

/**
 * Query strings (contract §1, step 6; issue 10, items 14 and 15): every malformed query is a 400
 * ValidationError naming the parameter, after authentication, never a 500; a parameter given twice
 * is refused unless it is repeatable, and a repeatable one keeps each value whole.
 */
// Store-independent: malformed queries are refused before a handler runs; the reads it makes answer from
// memory, the same on either store.
import { describe, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { errorHandling } from '../../src/http/errors'
import { ELYSIA_CONFIG } from '../../src/http/plugins'
import { Logger } from '../../src/log'
import { errorOf, expectError, expectOk, tokenFor, type Api, type ApiResponse, freshApiPerTest } from '../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

function expectNamed(response: ApiResponse, parameter: string) {
  expectError(response, 400, 'ValidationError', [parameter])
  expect(errorOf(response).details?.[0]?.path).toMatch(new RegExp(`^/${parameter.replace(/[[\]]/g, '\\$&')}(/|$)`))
}

async function names(project: string, query: string, token?: string) {
  const response = await api.listFlags(project, query, token === undefined ? undefined : { token })
  expectOk(response)
  return (response.body.features as { name: string }[]).map(flag => flag.name)
}

describe('getFeatures: tag', () => {
  test('a malformed tag answers 400 naming tag for any project id, existing, unknown or odd, and whatever the token sees', async () => {
    expectOk(await api.createProject('q-project'), 201)
    const scoped = await tokenFor(api, 'q-scoped', { projects: ['q-project'] })
    const malformed = [
      'a'.repeat(300), // was a 500: longer than 200, checked only after Elysia's own validation
      'a,'.repeat(150), // was a 500: split at commas into more than 100 values
      `simple:${'v'.repeat(250)}`,
      '',
      ':',
      ':a',
      'no-colon',
      '%zz',
      '%',
      '%ED%A0%80',
      '%C0%AF',
    ]
    for (const project of ['default', 'q-project', 'no-such-project', '__proto__', '%00', 'x'.repeat(300)]) {
      for (const value of malformed) {
        for (const token of [undefined, scoped]) {
          const response = await api.listFlags(project, `?tag=${value}`, token === undefined ? undefined : { token })
          expectNamed(response, 'tag')
        }
      }
      expectNamed(
        await api.listFlags(project, `?${Array.from({ length: 101 }, () => 'tag=simple:x').join('&')}`),
        'tag',
      )
    }
  })

  test('a tag value holding commas is one value, not a list', async () => {
    expectOk(await api.createFlag('default', 'comma-tagged'), 201)
    expectOk(await api.createFlag('default', 'b-tagged'), 201)
    expectOk(await api.post('/api/admin/features/comma-tagged/tags', { type: 'simple', value: 'a,b' }), 201)
    expectOk(await api.post('/api/admin/features/b-tagged/tags', { type: 'simple', value: 'bb' }), 201)
    expect(await names('default', '?tag=simple:a,b')).toEqual(['comma-tagged'])
    expect(await names('default', `?tag=${encodeURIComponent('simple:a,b')}`)).toEqual(['comma-tagged'])
    expect((await names('default', '?tag=simple:a,b&tag=simple:bb')).sort()).toEqual(['b-tagged', 'comma-tagged'])
    // A value in brackets is a value too (type "[simple"), not a list holding simple:bb.
    expect(await names('default', '?tag=[simple:bb]')).toEqual([])
  })

  test('shapes other parsers give meaning to (tag[], tag[0]) are unknown parameters, named', async () => {
    for (const key of ['tag[]', 'tag[0]', 'tag.x']) {
      expectNamed(await api.listFlags('default', `?${key}=simple:x`), key)
    }
  })
})

describe('getFeatures: namePrefix', () => {
  test('namePrefix given twice answers 400 naming it, even when both values agree', async () => {
    expectOk(await api.createFlag('default', 'prefixed-one'), 201)
    for (const query of [
      '?namePrefix=pre&namePrefix=x',
      '?namePrefix=pre&namePrefix=pre',
      '?namePrefix=&namePrefix=',
      '?namePrefix=pre&tag=simple:x&namePrefix=x',
    ]) {
      const response = await api.listFlags('default', query)
      expectNamed(response, 'namePrefix')
      expect(errorOf(response).message).toContain('2 times')
    }
    expect(await names('default', '?namePrefix=pre')).toEqual(['prefixed-one'])
  })

  test('authentication answers before the query is judged', async () => {
    const response = await api.listFlags('default', '?namePrefix=a&namePrefix=b&tag=%zz', { token: null })
    expectError(response, 401, 'AuthenticationRequired')
  })

  test('a broken escape or text that is not UTF-8 answers 400 naming the parameter', async () => {
    for (const value of ['%zz', '%', '%4', '%ED%A0%80', '%FF', '%C0%AF']) {
      expectNamed(await api.listFlags('default', `?namePrefix=${value}`), 'namePrefix')
    }
  })

  test('+ is a space and %2B a plus, as in any form-encoded query', async () => {
    expectOk(await api.createFlag('default', 'plus-flag'), 201)
    expect(await names('default', '?namePrefix=plus%2B')).toEqual([])
    expect(await names('default', '?namePrefix=plus+')).toEqual([])
    expect(await names('default', '?namePrefix=plus-')).toEqual(['plus-flag'])
  })
})

describe('searchEvents', () => {
  test('a repeated or undecodable parameter answers 400 naming it before the search runs', async () => {
    expectNamed(await api.searchEvents('?type=IS:feature-created&type=IS:feature-archived'), 'type')
    expectNamed(await api.searchEvents('?query=%zz'), 'query')
    expectNamed(await api.searchEvents('?feature=IS:%ED%A0%80'), 'feature')
    expectNamed(await api.searchEvents('?unknown=1'), 'unknown')
  })
})

describe('the error handler', () => {
  test('a value that fails an Elysia transform after validation is a 400, not a 500', async () => {
    // Elysia's own array coercion, as the flag list used it before: the pieces are checked only
    // when decoded, and TypeBox's error escapes the validation step.
    const lines: string[] = []
    const app = new Elysia(ELYSIA_CONFIG)
      .use(errorHandling(new Logger('error', line => lines.push(line))))
      .get('/coerced', ({ query }) => query, {
        query: t.Object({ tag: t.Optional(t.Array(t.String({ maxLength: 5 }), { maxItems: 2 })) }),
      })
    for (const query of ['tag=aaaaaaaaaa', 'tag=a,b,c']) {
      const response = await app.handle(new Request(`http://localhost/coerced?${query}`))
      const body = await response.json()
      expect({ status: response.status, name: body.name }).toEqual({ status: 400, name: 'ValidationError' })
      expect(body.message).toContain('does not match the schema')
    }
    expect(lines).toEqual([])
  })
})

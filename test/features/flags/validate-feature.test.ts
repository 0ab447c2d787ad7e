/**
 * POST /api/admin/features/validate (seed 4.5, 7; contract §1, §2, §5 incl. project naming patterns).
 */
// Store-independent: validation answers from the in-memory state and writes nothing; the flags and patterns
// it is checked against are made through the one commit path that the feature tests run again on PostgreSQL.
import { describe, expect, test } from 'bun:test'
import { errorOf, tokenFor, type Api, expectOk, expectError, freshApiPerTest } from '../../helpers'

/** Hang detection, not a speed target: a backtracking match of these names would take minutes, an answer takes well under a second. */

let api: Api
freshApiPerTest(fresh => (api = fresh))

/** 200 with no body, and no event written (validation changes nothing). */
async function expectValid(body: unknown) {
  const since = api.lastEventId()
  const response = await api.validateName(body)
  expectOk(response)
  expect(response.text).toBe('')
  expect(api.eventsSince(since)).toEqual([])
}

async function expectInvalid(body: unknown, status: number, name: string, mentions: (string | RegExp)[] = []) {
  const since = api.lastEventId()
  const response = await api.validateName(body)
  expectError(response, status, name, mentions)
  expect(api.eventsSince(since)).toEqual([])
  return response
}

describe('validate: name rules', () => {
  test('validate: a compliant unused name answers 200 with an empty body', async () => {
    await expectValid({ name: 'new-checkout' })
    await expectValid({ name: "All_the.URL-safe~chars!*'()0123" })
  })

  test('validate: an empty name answers 400 ValidationError', async () => {
    await expectInvalid({ name: '' }, 400, 'ValidationError', [/empty/i])
  })

  test('validate: a name of 100 characters is accepted, 101 characters answers 400', async () => {
    await expectValid({ name: 'a'.repeat(100) })
    await expectInvalid({ name: 'a'.repeat(101) }, 400, 'ValidationError', ['100'])
  })

  test('validate: a name that is not URL-safe answers 400 ValidationError', async () => {
    for (const name of [
      'a b',
      'ä',
      'flag/one',
      'what?',
      'a#b',
      'x%20y',
      'emoji🎉',
      'tab\tname',
      'a&b',
      'a+b',
      'a=b',
      'a:b',
      'a@b',
      'a,b',
      'a;b',
    ]) {
      await expectInvalid({ name }, 400, 'ValidationError', [/URL/i])
    }
  })

  test('validate: "." and ".." answer 400 ValidationError', async () => {
    await expectInvalid({ name: '.' }, 400, 'ValidationError')
    await expectInvalid({ name: '..' }, 400, 'ValidationError')
    await expectValid({ name: '...' })
    await expectValid({ name: '.hidden' })
  })

  test('validate: a name that is not a string, or no name, answers 400 ValidationError', async () => {
    await expectInvalid({ name: 42 }, 400, 'ValidationError')
    await expectInvalid({ name: null }, 400, 'ValidationError')
    await expectInvalid({}, 400, 'ValidationError')
    await expectInvalid({ projectId: 'default' }, 400, 'ValidationError')
  })

  test('validate: name rules answer 400 before the 409 for a taken name', async () => {
    await expectInvalid({ name: 'a'.repeat(101) }, 400, 'ValidationError')
  })
})

describe('validate: names in use', () => {
  test('validate: the name of a live flag answers 409 NameExistsError "A flag with that name already exists"', async () => {
    await api.newFlag('default', 'taken-name')
    const response = await expectInvalid({ name: 'taken-name' }, 409, 'NameExistsError')
    expect(errorOf(response).message).toBe('A flag with that name already exists')
  })

  test('validate: the name of an archived flag answers 409 "An archived flag with that name already exists"', async () => {
    await api.newFlag('default', 'archived-name')
    expect((await api.delete('/api/admin/projects/default/features/archived-name')).status).toBe(202)
    const response = await expectInvalid({ name: 'archived-name' }, 409, 'NameExistsError')
    expect(errorOf(response).message).toBe('An archived flag with that name already exists')
  })

  test('validate: a flag archived through PATCH also counts as an archived flag', async () => {
    await api.newFlag('default', 'patched-archived')
    expectOk(await api.patchFlag('default', 'patched-archived', [{ op: 'replace', path: '/archived', value: true }]))
    const response = await expectInvalid({ name: 'patched-archived' }, 409, 'NameExistsError')
    expect(errorOf(response).message).toBe('An archived flag with that name already exists')
  })

  test('validate: a name used in any project answers 409, whatever projectId is given', async () => {
    expectOk(await api.createProject('other-proj'), 201)
    await api.newFlag('other-proj', 'used-elsewhere')
    await expectInvalid({ name: 'used-elsewhere', projectId: 'default' }, 409, 'NameExistsError')
    await expectInvalid({ name: 'used-elsewhere', projectId: null }, 409, 'NameExistsError')
    await expectInvalid({ name: 'used-elsewhere' }, 409, 'NameExistsError')
  })

  test('validate: names are compared exactly, so another case is a different name', async () => {
    await api.newFlag('default', 'case-name')
    await expectValid({ name: 'Case-Name' })
  })

  test('validate: a deleted archived flag frees its name', async () => {
    await api.newFlag('default', 'freed-name')
    expect((await api.delete('/api/admin/projects/default/features/freed-name')).status).toBe(202)
    expectOk(await api.delete('/api/admin/archive/freed-name'))
    await expectValid({ name: 'freed-name' })
  })

  test('validate: names that are Object.prototype properties are not mistaken for existing flags', async () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'])
      await expectValid({ name })
  })
})

describe('validate: project naming patterns', () => {
  async function patterned(id: string, featureNaming: Record<string, unknown>) {
    const response = await api.createProject(id, { featureNaming })
    expectOk(response, 201)
  }

  test('validate: with a projectId, the name must match the naming pattern anchored at both ends (pattern abc refuses xabcx)', async () => {
    await patterned('anchored', { pattern: 'abc' })
    await expectValid({ name: 'abc', projectId: 'anchored' })
    await expectInvalid({ name: 'xabcx', projectId: 'anchored' }, 400, 'ValidationError', ['abc'])
    await expectInvalid({ name: 'xabc', projectId: 'anchored' }, 400, 'ValidationError')
    await expectInvalid({ name: 'abcx', projectId: 'anchored' }, 400, 'ValidationError')
  })

  test('validate: an alternation in the pattern is anchored as a whole', async () => {
    await patterned('alternation', { pattern: 'a+|b+' })
    await expectValid({ name: 'aaa', projectId: 'alternation' })
    await expectValid({ name: 'bb', projectId: 'alternation' })
    await expectInvalid({ name: 'aab', projectId: 'alternation' }, 400, 'ValidationError')
    await expectInvalid({ name: 'baa', projectId: 'alternation' }, 400, 'ValidationError')
  })

  test('validate: the message of a pattern mismatch includes the pattern, its example and its description', async () => {
    await patterned('described', {
      pattern: 'team-[a-z]+-\\d{3}',
      example: 'team-web-001',
      description: 'Team prefix and three digits',
    })
    const response = await expectInvalid({ name: 'web-1', projectId: 'described' }, 400, 'ValidationError')
    expect(errorOf(response).message).toContain('team-[a-z]+-\\d{3}')
    expect(errorOf(response).message).toContain('team-web-001')
    expect(errorOf(response).message).toContain('Team prefix and three digits')
    await expectValid({ name: 'team-web-001', projectId: 'described' })
  })

  test('validate: the pattern applies only when that project is named', async () => {
    await patterned('strict', { pattern: 'abc' })
    await expectValid({ name: 'xabcx' })
    await expectValid({ name: 'xabcx', projectId: 'default' })
    await expectValid({ name: 'xabcx', projectId: null })
  })

  test('validate: a taken name answers 409 even when it does not match the pattern', async () => {
    await patterned('pattern-409', { pattern: 'abc' })
    await api.newFlag('default', 'zzz-taken')
    await expectInvalid({ name: 'zzz-taken', projectId: 'pattern-409' }, 409, 'NameExistsError')
  })

  test('validate: a name breaking the name rules answers 400 even when the pattern would accept it', async () => {
    await patterned('loose', { pattern: '.*' })
    await expectInvalid({ name: 'a b', projectId: 'loose' }, 400, 'ValidationError', [/URL/i])
  })

  test('validate: an unknown projectId answers 200 (no pattern to check)', async () => {
    await expectValid({ name: 'any-name', projectId: 'no-such-project' })
  })

  test('validate: a null or missing projectId answers 200', async () => {
    await expectValid({ name: 'nullable', projectId: null })
    await expectValid({ name: 'nullable' })
  })

  test('validate: a project whose pattern was removed no longer checks names', async () => {
    await patterned('was-strict', { pattern: 'abc' })
    await expectInvalid({ name: 'other', projectId: 'was-strict' }, 400, 'ValidationError')
    expectOk(await api.put('/api/admin/projects/was-strict', { name: 'was-strict', featureNaming: null }))
    await expectValid({ name: 'other', projectId: 'was-strict' })
  })

  test('validate: a pattern changed through PUT applies from then on', async () => {
    await patterned('changing', { pattern: 'abc' })
    expectOk(await api.put('/api/admin/projects/changing', { name: 'changing', featureNaming: { pattern: 'x-.*' } }))
    await expectValid({ name: 'x-new', projectId: 'changing' })
    await expectInvalid({ name: 'abc', projectId: 'changing' }, 400, 'ValidationError', ['x-.*'])
  })
})

describe('validate: patterns that backtrack catastrophically elsewhere are matched in linear time', () => {
  /**
   * The pattern is accepted, and a long name that fails at its end answers the plain mismatch. A
   * backtracking engine would take longer than the test's timeout on each of these names.
   */
  async function linear(id: string, pattern: string, evil: string, good: string) {
    expectOk(await api.createProject(id, { featureNaming: { pattern } }), 201)
    for (let round = 0; round < 2; round++) {
      await expectInvalid({ name: evil + '-'.repeat(round), projectId: id }, 400, 'ValidationError', [
        'does not match the naming pattern',
      ])
    }
    await expectValid({ name: good, projectId: id })
    await expectValid({ name: 'still-alive' })
  }

  test("validate: (a|a)*b against 60 a's (2^60 paths for a backtracking engine) answers 400 at once", async () => {
    await linear('evil-alt-a', '(a|a)*b', 'a'.repeat(60), 'a'.repeat(60) + 'b')
  })

  test('validate: (ab|ab)+c, which passed the old save-time probe, answers at once', async () => {
    await linear('evil-ab', '(ab|ab)+c', 'ab'.repeat(45), 'ab'.repeat(45) + 'c')
  })

  test('validate: (a+)+$ answers at once', async () => {
    await linear('evil-nested', '(a+)+$', 'a'.repeat(98) + '!', 'a'.repeat(100))
  })

  test('validate: a backtracking pattern on characters a probe may miss answers at once', async () => {
    await linear('evil-x', '(x+x+)+y', 'x'.repeat(60), 'x'.repeat(60) + 'y')
  })

  test('validate: a catastrophic pattern set through PUT answers at once', async () => {
    expectOk(await api.createProject('evil-put'), 201)
    expectOk(
      await api.put('/api/admin/projects/evil-put', { name: 'evil-put', featureNaming: { pattern: '(k*k*)*w' } }),
    )
    await expectInvalid({ name: 'k'.repeat(60), projectId: 'evil-put' }, 400, 'ValidationError', ['does not match'])
    await expectValid({ name: 'k'.repeat(60) + 'w', projectId: 'evil-put' })
  })

  test('validate: many concurrent validations against catastrophic patterns each answer, and an ordinary one is not held up', async () => {
    expectOk(await api.createProject('evil-crowd', { featureNaming: { pattern: '(w+w+)+y' } }), 201)
    expectOk(await api.createProject('benign', { featureNaming: { pattern: 'ok-[a-z]+' } }), 201)
    const evil = Array.from({ length: 20 }, (_, i) =>
      api.validateName({ name: 'w'.repeat(60 + i), projectId: 'evil-crowd' }),
    )
    const benign = await api.validateName({ name: 'ok-fine', projectId: 'benign' })
    for (const response of await Promise.all(evil)) expectError(response, 400, 'ValidationError', ['does not match'])
    expectOk(benign)
  })
})

describe('validate: pipeline', () => {
  test('validate: a text/plain body answers 415 ContentTypeerror', async () => {
    const response = await api.request('POST', '/api/admin/features/validate', {
      raw: JSON.stringify({ name: 'x' }),
      headers: { 'content-type': 'text/plain' },
    })
    expectError(response, 415, 'ContentTypeerror', [/application\/json/])
  })

  test('validate: without a token it answers 401 AuthenticationRequired', async () => {
    expectError(await api.validateName({ name: 'x' }, { token: null }), 401, 'AuthenticationRequired')
    expectError(await api.validateName({ name: 'x' }, { token: '*:*.nope' }), 401, 'AuthenticationRequired')
  })

  test('validate: a viewer token may validate names', async () => {
    const viewer = await tokenFor(api, 'viewer', { role: 'viewer' })
    const response = await api.validateName({ name: 'viewer-check' }, { token: viewer })
    expectOk(response)
    expect(response.text).toBe('')
  })

  test('validate: a client (SDK) token answers 403 NoAccessError', async () => {
    const client = await tokenFor(api, 'sdk', { type: 'client', project: 'default', environment: 'development' })
    expectError(await api.validateName({ name: 'sdk-check' }, { token: client }), 403, 'NoAccessError')
  })

  test('validate: invalid JSON answers 400 ValidationError', async () => {
    const response = await api.request('POST', '/api/admin/features/validate', {
      raw: '{"name":',
      headers: { 'content-type': 'application/json' },
    })
    expectError(response, 400, 'ValidationError')
  })
})

/**
 * Issue 18 item 11: messages that say what is wrong. A flag asked for in a project that does not
 * exist says the project does not exist (and a project outside the token's scope answers the
 * same); sentences built around a word get its article right.
 */
// Store-independent: it is about the wording of answers, made above the store.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_SECRET, errorOf, expectError, expectOk, makeApi, openApiSpec, tokenFor, type Api } from '../helpers'

let api: Api
let document: Record<string, any>
beforeAll(async () => {
  document = await openApiSpec()
  api = await makeApi()
  await api.newFlag('default', 'f')
  await api.newProject('elsewhere')
  await api.newFlag('elsewhere', 'g')
})
afterAll(async () => api.close())

test('every operation under a project that does not exist answers that the project does not exist, whatever flag it names; a hidden project answers the same', async () => {
  const scoped = await tokenFor(api, 'only-default', { projects: ['default'] })
  let checked = 0
  for (const [template, methods] of Object.entries<Record<string, any>>(document.paths)) {
    if (!template.includes('{projectId}')) continue
    for (const [method, operation] of Object.entries<any>(methods)) {
      const body =
        operation.requestBody?.content?.['application/json']?.example ??
        operation.requestBody?.content?.['application/json']?.schema?.examples?.[0]
      const fill = (project: string, flag: string) =>
        template
          .replace('{projectId}', project)
          .replace('{featureName}', flag)
          .replace(/\{[^}]+\}/g, 'development')
      const unknown = await api.request(method.toUpperCase(), fill('nope', 'f'), { body })
      if (unknown.status === 404) {
        expect({ template, method, message: errorOf(unknown).message }).toEqual({
          template,
          method,
          message: 'Project "nope" does not exist',
        })
        checked++
      }
      // Read-only for the scoped token: what it may not see is absent, in the same words.
      if (method !== 'get') continue
      const hidden = await api.request('GET', fill('elsewhere', 'g'), { token: scoped })
      const never = await api.request('GET', fill('nowhere', 'g'), { token: scoped })
      expect({ template, status: hidden.status, message: errorOf(hidden).message?.replace('elsewhere', 'P') }).toEqual({
        template,
        status: never.status,
        message: errorOf(never).message?.replace('nowhere', 'P'),
      })
    }
  }
  expect(checked).toBeGreaterThan(15)
  // And a flag missing from a project that exists is named with the project.
  expectError(await api.get('/api/admin/projects/default/features/none'), 404, 'NotFoundError', [
    'Could not find flag "none" in project "default"',
  ])
})

test('names and token types get "a" or "an" as they begin', async () => {
  expectError(await api.post('/api/admin/environments', { name: '', type: 'test' }), 400, 'ValidationError', [
    'An environment name must not be empty',
  ])
  expectError(await api.post('/api/admin/projects/default/features', { name: '..' }), 400, 'ValidationError', [
    'A flag name must not be',
  ])
  expectError(await api.get('/api/client/features', { token: ADMIN_SECRET }), 403, 'NoAccessError', [
    'is an admin token',
  ])
  const client = (await api.createToken({ tokenName: 'c', type: 'client', environment: 'development' })).body.secret
  expectError(await api.get('/api/frontend', { token: client }), 403, 'NoAccessError', ['is a client token'])
  expectOk(await api.get('/api/client/features', { token: client }))
})

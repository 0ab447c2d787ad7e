/** What every controller needs from the HTTP layer: the named models and the `auth` macro. */
import { Elysia } from 'elysia'
import type { authorization } from './auth'
import { models } from './models'

export type Authorization = ReturnType<typeof authorization>

export function controllerBase(auth: Authorization) {
  return new Elysia().use(models).use(auth)
}

/** A 200 answer without a body, as the seed asks for bulk toggles and validate. */
export function noContent(status = 200): Response {
  return new Response(null, { status })
}

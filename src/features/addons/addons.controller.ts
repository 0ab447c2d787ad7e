import { t } from 'elysia'
import { authErrors, bodyErrors } from '../../http/schemas'
import { controllerBase, noContent } from '../../http/plugins'
import type { Authorization } from '../tokens/auth'
import { addonModels, addonParams, deliveryParams } from './addons.model'
import { PROVIDERS } from './addons.providers'
import type { AddonsService } from './addons.service'
import type { Dispatcher } from './addons.dispatcher'
import { testEvent } from './addons.test-event'

const tags = ['Addons']

export function addonsController(addons: AddonsService, dispatcher: Dispatcher, auth: Authorization) {
  return controllerBase(auth, addonModels)
    .get('/api/admin/addons', () => ({ addons: addons.list(), providers: PROVIDERS }), {
      auth: 'ADMIN',
      response: { 200: 'addonsSchema', ...authErrors() },
      detail: {
        operationId: 'getAddons',
        summary: 'Get every integration and the providers',
        tags,
        description: 'Sensitive parameters are answered as *****.',
      },
    })
    .post('/api/admin/addons', ({ body, caller }) => addons.create(body, caller), {
      auth: 'ADMIN',
      body: 'addonCreateUpdateSchema',
      response: { 200: 'addonSchema', ...bodyErrors() },
      detail: {
        operationId: 'createAddon',
        summary: 'Make an integration',
        tags,
        description:
          'From then on, each chosen event is delivered (an outbox written with the event). Records addon-config-created, without sensitive parameters.',
      },
    })
    .get('/api/admin/addons/:id', ({ params }) => addons.get(params.id), {
      auth: 'ADMIN',
      params: addonParams,
      response: { 200: 'addonSchema', ...authErrors(404) },
      detail: { operationId: 'getAddon', summary: 'Get an integration', tags },
    })
    .put('/api/admin/addons/:id', ({ params, body, caller }) => addons.update(params.id, body, caller), {
      auth: 'ADMIN',
      params: addonParams,
      body: 'addonUpdateSchema',
      response: { 200: 'addonSchema', ...bodyErrors(404) },
      detail: {
        operationId: 'updateAddon',
        summary: 'Change an integration',
        tags,
        description:
          'Replaces the settings; a sensitive parameter sent as ***** keeps its stored value, and one left out is removed. The provider cannot change. Records addon-config-updated.',
      },
    })
    .delete(
      '/api/admin/addons/:id',
      async ({ params, caller }) => {
        await addons.delete(params.id, caller)
        return noContent()
      },
      {
        auth: 'ADMIN',
        params: addonParams,
        response: { 200: t.Void({ description: 'Deleted' }), ...authErrors(404) },
        detail: {
          operationId: 'deleteAddon',
          summary: 'Delete an integration',
          tags,
          description: 'Its waiting deliveries and its log go with it. Records addon-config-deleted.',
        },
      },
    )
    .get('/api/admin/addons/:id/events', ({ params }) => addons.deliveryLog(params.id), {
      auth: 'ADMIN',
      params: addonParams,
      response: { 200: 'addonDeliveryLogSchema', ...authErrors(404) },
      detail: {
        operationId: 'getAddonDeliveries',
        summary: 'Get an integration’s delivery log',
        tags,
        description: 'The last 100 attempts, newest first, and the deliveries waiting, dead letters first.',
      },
    })
    .post(
      '/api/admin/addons/:id/events/:eventId/retry',
      ({ params, caller }) => addons.retry(params.id, params.eventId, caller),
      {
        auth: 'ADMIN',
        params: deliveryParams,
        response: { 200: 'addonWaitingSchema', ...authErrors(404) },
        detail: {
          operationId: 'retryAddonDelivery',
          summary: 'Send a delivery again',
          tags,
          description:
            'A dead letter (or a delivery waiting for its next attempt) is tried again now, with the same delivery id.',
        },
      },
    )
    .post(
      '/api/admin/addons/:id/test',
      async ({ params }) => {
        const addon = addons.record(params.id)
        const sent = await dispatcher.sendOne(addon, testEvent(addon), { id: `test-${crypto.randomUUID()}` })
        return { ok: sent.error === null, statusCode: sent.statusCode, error: sent.error, durationMs: sent.durationMs }
      },
      {
        auth: 'ADMIN',
        params: addonParams,
        response: { 200: 'addonTestResultSchema', ...authErrors(404) },
        detail: {
          operationId: 'testAddon',
          summary: 'Send a test event',
          tags,
          description:
            'Sends a made-up feature-environment-enabled event once, not retried and not logged, and says how it was received.',
        },
      },
    )
}

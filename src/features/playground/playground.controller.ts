import { bodyErrors } from '../../http/schemas'
import { controllerBase } from '../../http/plugins'
import type { Authorization } from '../tokens/auth'
import { MAX_EVALUATIONS, playgroundModels } from './playground.model'
import type { PlaygroundService } from './playground.service'

const tags = ['Playground']

const LIMIT = MAX_EVALUATIONS.toLocaleString('en-US')

const READS =
  'A read: any admin token or signed-in user may call it, viewers included; a token limited to some projects evaluates ' +
  'only their flags. Records no event.'

const EXPLAINED =
  "Results are the official Node SDK's for the same flags and context (its operators, segments, parents, rollouts and " +
  "variants), with every strategy's outcome, constraint by constraint and segment by segment. Beyond Unleash: a rollout " +
  "strategy carries `rollout` (its percentage) and `bucket` (the context's bucket, 1 to 100), a weighted variant the " +
  '`bucket` that chose it. Unlike an SDK, the playground gives the context no sessionId or remoteAddress of its own.'

export function playgroundController(playground: PlaygroundService, auth: Authorization) {
  return controllerBase(auth, playgroundModels)
    .post('/api/admin/playground', ({ body, caller }) => playground.evaluate(body, caller), {
      auth: 'NONE',
      body: 'playgroundRequestSchema',
      response: { 200: 'playgroundResponseSchema', ...bodyErrors(404) },
      detail: {
        operationId: 'getPlayground',
        summary: 'Evaluate all flags for a context',
        tags,
        description:
          `Every live flag of \`projects\` in \`environment\`, evaluated for \`context\`, by name. ${EXPLAINED} ` +
          `At most ${LIMIT} flags in one answer (400 past that). A top-level context field that is not text is a 400; ` +
          `an unknown environment a 404. ${READS}`,
      },
    })
    .post('/api/admin/playground/advanced', ({ body, caller }) => playground.evaluateAdvanced(body, caller), {
      auth: 'NONE',
      body: 'advancedPlaygroundRequestSchema',
      response: { 200: 'advancedPlaygroundResponseSchema', ...bodyErrors(404) },
      detail: {
        operationId: 'getAdvancedPlayground',
        summary: 'Evaluate all flags in several environments and contexts',
        tags,
        description:
          `Every live flag of \`projects\`, evaluated in each of \`environments\` for each context: a value with commas ` +
          `stands for one context per value, and every combination is evaluated, as in Unleash. ${EXPLAINED} ` +
          `At most ${LIMIT} evaluations in one answer (flags × environments × contexts; 400 past that). Top-level context ` +
          `fields that are not text are left out and named in \`warnings.invalidContextProperties\`; an unknown ` +
          `environment is a 404. ${READS}`,
      },
    })
}

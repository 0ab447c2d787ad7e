/**
 * The evaluator's outcomes (src/features/evaluation/outcome.ts), read through the compiled scopes
 * the frontend API and OFREP share (and other features may read): which strategy applied, the
 * variant, what decided it, and why a flag is off. The protocols' answers made from them are
 * tested through HTTP (frontend-evaluation, ofrep-evaluation); what no protocol shows is here.
 */
// Store-independent: it is about the evaluator's outcomes, computed from the in-memory state.
import { expect, test } from 'bun:test'
import { describe as spell, Off, onOutcome, Basis } from '../../../src/features/evaluation/outcome'
import type { EvalContext } from '../../../src/features/evaluation/scope'
import { expectOk, freshApiPerTest, paths, type Api } from '../../helpers'

let api: Api
freshApiPerTest(fresh => (api = fresh))

const context = (userId: string): EvalContext => ({ userId, properties: Object.create(null) })
const scope = () => api.services.scopes.get({ projects: ['default'], environment: 'development' })
const outcome = (flag: string, userId: string) => {
  const compiled = scope()
  return spell(compiled.outcome(compiled.indexOf(flag), context(userId)))
}

test('an outcome names the strategy that applied, among the served ones in order, and what decided it', async () => {
  await api.flagOn('checkout', { name: 'flexibleRollout', parameters: { rollout: '0', groupId: 'checkout' } })
  expectOk(await api.post(paths.strategies('checkout'), { name: 'userWithId', parameters: { userIds: 'u1' } }))
  expectOk(await api.post(paths.strategies('checkout'), { name: 'default' }))
  expect(outcome('checkout', 'u1')).toEqual({
    enabled: true,
    off: null,
    variant: 0,
    basis: Basis.CONTEXT,
    strategy: 1,
  })
  expect(outcome('checkout', 'u2')).toEqual({ enabled: true, off: null, variant: 0, basis: Basis.FIXED, strategy: 2 })
  // No context can change it: the default strategy comes first once the others are gone.
  await api.flagOn('plain')
  const compiled = scope()
  expect(compiled.flags[compiled.indexOf('plain')].fixed).toBe(onOutcome(0, 0, Basis.FIXED))
  expect(compiled.flags[compiled.indexOf('checkout')].fixed).toBeNull()
  expect(compiled.indexOf('missing')).toBe(-1)
})

test('the variant slot names the variant among the flag facts; an override is decided by the context', async () => {
  await api.flagOn('coloured')
  const variant = (name: string, overrides: { contextName: string; values: string[] }[] = []) => ({
    name,
    weight: 500,
    weightType: 'variable',
    stickiness: 'default',
    overrides,
  })
  expectOk(
    await api.put(paths.variants('coloured'), [
      variant('blue'),
      variant('red', [{ contextName: 'userId', values: ['vip'] }]),
    ]),
  )
  const facts = scope().flags[scope().indexOf('coloured')]
  expect(facts.variants.map(v => v.name)).toEqual(['blue', 'red'])
  const vip = outcome('coloured', 'vip')
  expect({ variant: facts.variants[vip.variant - 1].name, basis: vip.basis }).toEqual({
    variant: 'red',
    basis: Basis.CONTEXT,
  })
  // Two weighted variants: a percentage decides.
  expect(outcome('coloured', 'u1').basis).toBe(Basis.PERCENTAGE)
})

test('off says why: off in the environment, no strategy for the context, or a parent not satisfied', async () => {
  expectOk(await api.createFlag('default', 'dark'), 201)
  await api.flagOn('beta', { name: 'userWithId', parameters: { userIds: 'u1' } })
  await api.flagOn('child')
  expectOk(await api.post(`${paths.flag('child')}/dependencies`, { feature: 'beta', enabled: true }))
  expect(outcome('dark', 'u1')).toEqual({ enabled: false, off: 'disabled', variant: 0, basis: null, strategy: -1 })
  expect(outcome('beta', 'u2').off).toBe('no-match')
  expect(outcome('child', 'u2').off).toBe('parent')
  expect(scope().outcome(scope().indexOf('child'), context('u2'))).toBe(Off.PARENT)
  // The parent on: the child is decided by the context (its parent's).
  expect(outcome('child', 'u1')).toEqual({ enabled: true, off: null, variant: 0, basis: Basis.CONTEXT, strategy: 0 })
})

/**
 * The request examples of the flag routes, as the OpenAPI document shows them and "Try it out" sends
 * them. They fit together on a fresh service: the flag `new-checkout` of the create example is the
 * one the other examples name (test/http/openapi-examples.test.ts sends each of them).
 */
export const CREATE_FLAG_EXAMPLE = {
  name: 'new-checkout',
  type: 'release',
  description: 'The new checkout flow',
  impressionData: false,
  tags: [{ type: 'simple', value: 'checkout' }],
}

export const UPDATE_FLAG_EXAMPLE = {
  description: 'The new checkout flow, for every user',
  type: 'release',
  stale: false,
  impressionData: true,
}

export const STRATEGY_EXAMPLE = {
  name: 'flexibleRollout',
  title: 'Half of the users',
  disabled: false,
  constraints: [{ contextName: 'userId', operator: 'NOT_IN', values: ['42'] }],
  parameters: { rollout: '50', stickiness: 'default', groupId: 'new-checkout' },
  variants: [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' }],
}

/** A variant list as clients send it. */
export const VARIANTS_EXAMPLE = [
  {
    name: 'blue',
    weight: 500,
    weightType: 'variable',
    stickiness: 'default',
    payload: { type: 'string', value: 'blue' },
  },
  {
    name: 'green',
    weight: 500,
    weightType: 'variable',
    stickiness: 'default',
    overrides: [{ contextName: 'userId', values: ['42'] }],
  },
]

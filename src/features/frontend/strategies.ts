/**
 * The strategies' own tests (without their constraints and segments), as the official Node SDK's
 * (unleash-client 6.12, lib/strategy/*) decide them; evaluation.ts adds the constraints.
 */
import { hostname } from 'node:os'
import type { StrategyRecord } from '../flags/flags.records'
import { ipv4Matcher, resolver, type EvalContext, type Predicate } from './constraints'
import { rolloutBucket } from './rollout'

const randomRolloutId = () => `${Math.round(Math.random() * 10000) + 1}`
const splitList = (text: string) => text.split(/\s*,\s*/)
/** The applicationHostname strategy compares with this host's name, as the SDK in this process would. */
const HOSTNAME = (process.env.HOSTNAME || hostname() || 'undefined').toLowerCase()

/**
 * What a rollout strategy hashes (with rolloutBucket): its group, its percentage as written, and
 * the context's id, undefined when the context has none; `random`: a context without an id then
 * gets a random one (flexibleRollout's `default` and `random` stickiness), else it is never in.
 * The admin playground reads it to show a context's bucket beside the percentage.
 */
export interface Rollout {
  groupId: string
  percentage: string | undefined
  id: (context: EvalContext) => string | undefined
  random: boolean
}

/** The rollout of flexibleRollout, gradualRolloutUserId and gradualRolloutSessionId; null for other types. */
export function rolloutOf(strategy: StrategyRecord): Rollout | null {
  const parameters = strategy.parameters
  const groupId = parameters.groupId || ''
  switch (strategy.name) {
    case 'flexibleRollout': {
      const stickiness = parameters.stickiness || 'default'
      const id: (context: EvalContext) => string | undefined =
        stickiness === 'default'
          ? context => context.userId || context.sessionId || undefined
          : stickiness === 'random'
            ? () => undefined
            : resolver(stickiness)
      return {
        groupId,
        percentage: parameters.rollout,
        id,
        random: stickiness === 'default' || stickiness === 'random',
      }
    }
    case 'gradualRolloutUserId':
      return { groupId, percentage: parameters.percentage, id: context => context.userId, random: false }
    case 'gradualRolloutSessionId':
      return { groupId, percentage: parameters.percentage, id: context => context.sessionId, random: false }
    default:
      return null
  }
}

function rolloutTest({ groupId, percentage: percentageText, id: given, random }: Rollout): Predicate {
  const id = random ? (context: EvalContext) => given(context) || randomRolloutId() : given
  const percentage = Number(percentageText)
  // Buckets run from 1 to 100: at 100 % or more any id is in, at 0 % or less none is (nor is a missing id).
  if (percentage >= 100) return context => !!id(context)
  if (!(percentage > 0)) return () => false
  const bucket = rolloutBucket(groupId)
  return context => {
    const value = id(context)
    return !!value && percentage > 0 && bucket(value) <= percentage
  }
}

/** The strategy's own test, without its constraints; null for a type the SDK does not know. */
export function strategyTest(strategy: StrategyRecord): Predicate | null {
  const parameters = strategy.parameters
  switch (strategy.name) {
    case 'default':
      return () => true
    case 'flexibleRollout':
    case 'gradualRolloutUserId':
    case 'gradualRolloutSessionId':
      return rolloutTest(rolloutOf(strategy)!)
    case 'gradualRolloutRandom': {
      const percentage = Number(parameters.percentage)
      return () => percentage >= Math.floor(Math.random() * 100) + 1
    }
    case 'userWithId': {
      const ids = new Set(parameters.userIds ? splitList(parameters.userIds) : [])
      return context => context.userId !== undefined && ids.has(context.userId)
    }
    case 'remoteAddress': {
      if (!parameters.IPs) return () => false
      return ipv4Matcher(splitList(parameters.IPs))
    }
    case 'applicationHostname': {
      const on = !!parameters.hostNames && splitList(parameters.hostNames.toLowerCase()).includes(HOSTNAME)
      return () => on
    }
    default:
      return null
  }
}

/**
 * The strategy types every Unleash knows (sdk-api-contract §4): the five the admin UI offers, then
 * the three older ones the SDKs still evaluate. They cannot be defined, changed or deprecated.
 */
import type { StrategyParameterRecord } from './strategy-types.records'

export interface BuiltInStrategy {
  name: string
  displayName: string
  description: string
  parameters: StrategyParameterRecord[]
}

const parameter = (
  name: string,
  type: StrategyParameterRecord['type'],
  description: string,
  required = false,
): StrategyParameterRecord => ({
  name,
  type,
  description,
  required,
})

const percentage = parameter('percentage', 'percentage', 'Share of the users, 0 to 100', false)
const groupId = parameter(
  'groupId',
  'string',
  'Bucketing group; flags with the same group give a user the same bucket',
  true,
)

export const BUILT_IN_STRATEGIES: readonly BuiltInStrategy[] = [
  {
    name: 'default',
    displayName: 'Standard',
    description: 'On for everyone the constraints let through.',
    parameters: [],
  },
  {
    name: 'flexibleRollout',
    displayName: 'Gradual rollout',
    description: 'On for a share of the users, kept stable by a stickiness field.',
    parameters: [
      parameter('rollout', 'percentage', 'Share of the users, 0 to 100'),
      parameter(
        'stickiness',
        'string',
        'Context field hashed to place a user: default, userId, sessionId, random or a custom field',
      ),
      parameter('groupId', 'string', 'Bucketing group; defaults to the flag name'),
    ],
  },
  {
    name: 'userWithId',
    displayName: 'UserIDs',
    description: 'On for the listed user ids.',
    parameters: [parameter('userIds', 'list', 'Comma-separated user ids')],
  },
  {
    name: 'remoteAddress',
    displayName: 'IPs',
    description: 'On for the listed client addresses.',
    parameters: [parameter('IPs', 'list', 'Comma-separated IP addresses or CIDR ranges', true)],
  },
  {
    name: 'applicationHostname',
    displayName: 'Hosts',
    description: 'On for applications running on the listed host names.',
    parameters: [parameter('hostNames', 'list', 'Comma-separated host names')],
  },
  {
    name: 'gradualRolloutUserId',
    displayName: 'Gradual rollout by user id',
    description: 'On for a share of the users by user id (older form of flexibleRollout).',
    parameters: [percentage, groupId],
  },
  {
    name: 'gradualRolloutSessionId',
    displayName: 'Gradual rollout by session id',
    description: 'On for a share of the sessions (older form of flexibleRollout).',
    parameters: [percentage, groupId],
  },
  {
    name: 'gradualRolloutRandom',
    displayName: 'Random gradual rollout',
    description: 'On for a random share of the requests (older form of flexibleRollout).',
    parameters: [percentage],
  },
]

export function builtInStrategy(name: string): BuiltInStrategy | undefined {
  return BUILT_IN_STRATEGIES.find(strategy => strategy.name === name)
}

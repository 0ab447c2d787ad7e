/**
 * The path parameters of the admin API, declared once so that every route names and describes
 * them alike (features/tokens/auth.ts reads `projectId` and `featureName` to find a request's project).
 */
import { t } from 'elysia'

const projectId = t.String({ description: 'Project id' })
const featureName = t.String({ description: 'Flag name' })
const environment = t.String({ description: 'Environment name' })

export const projectParams = t.Object({ projectId })
export const featureParams = t.Object({ featureName })
export const flagParams = t.Object({ projectId, featureName })
export const projectEnvironmentParams = t.Object({ projectId, environment })
export const flagEnvironmentParams = t.Object({ projectId, featureName, environment })
export const strategyParams = t.Object({
  projectId,
  featureName,
  environment,
  strategyId: t.String({ description: 'Strategy id' }),
})
export const tokenParams = t.Object({ tokenName: t.String({ description: 'Token name' }) })

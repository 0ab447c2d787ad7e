/** The made-up event "Send test event" delivers: recorded nowhere, id 0. */
import type { EventRecord } from '../../storage/records'
import type { AddonRecord } from './addons.records'

export function testEvent(addon: AddonRecord): EventRecord {
  const environment = addon.environments.find(name => name !== '*') ?? 'development'
  const project = addon.projects.find(name => name !== '*') ?? 'default'
  return {
    id: 0,
    createdAt: new Date().toISOString(),
    type: 'feature-environment-enabled',
    createdBy: 'flagstore test',
    createdByUserId: null,
    environment,
    project,
    featureName: 'test-flag',
    data: { name: 'test-flag', enabled: true },
    preData: { name: 'test-flag', enabled: false },
    tags: [],
  }
}

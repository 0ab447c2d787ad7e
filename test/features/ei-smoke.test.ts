import { test, expect } from 'bun:test'
import { makeApi } from '../helpers'
import { exportImportModels } from '../../src/features/export-import/export-import.model'

test('smoke', async () => {
  const a = await makeApi()
  const ex = (exportImportModels.importTogglesSchema as any).examples[0]
  const v = await a.post('/api/admin/features-batch/validate', ex)
  console.log(v.status, JSON.stringify(v.body))
  const r = await a.post('/api/admin/features-batch/import', ex)
  console.log(r.status, r.text)
  const e = await a.post('/api/admin/features-batch/export', { environment: 'development', project: 'default' })
  console.log(e.status, JSON.stringify(e.body, null, 1))
  console.log(a.events().slice(-12).map((x) => x.type + ' ' + x.featureName + ' ' + x.environment))
  await a.close()
})

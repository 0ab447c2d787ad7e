import { test } from 'bun:test'
import { makeApi } from './helpers'
test('probe', async () => {
  const api = await makeApi()
  const show = async (p: Promise<any>) => { const r = await p; console.log(r.status, r.text.slice(0, 400)) }
  await show(api.post('/api/admin/projects/default/features', { name: 'x', description: 'd'.repeat(2001) }))
  await show(api.post('/api/admin/projects/default/features', { name: 5 }))
  await show(api.post('/api/admin/projects/default/features', { }))
  await show(api.post('/api/admin/projects/default/features', { name: 'x', type: 'nope' }))
  await show(api.post('/api/admin/projects/default/features', { name: 'x', impressionData: 'yes' }))
  await show(api.post('/api/admin/projects/default/features', [1]))
  await show(api.post('/api/admin/projects/default/features', 'str'))
  await show(api.patch('/api/admin/projects/default/features/x', { op: 'x' }))
  await show(api.post('/api/admin/api-tokens', { tokenName: 'x', type: 'admin', projects: ['a'] }))
  await show(api.get('/api/admin/projects/nope/features/x'))
  await show(api.get('/api/admin/search/events?limit=abc'))
  await show(api.post('/api/admin/segments', { name: 's', constraints: [{ contextName: 'a', operator: 'NOPE', values: [] }] }))
  await api.close()
})

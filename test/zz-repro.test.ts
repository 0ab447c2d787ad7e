import { test } from 'bun:test'
import { makeApi } from './helpers'
test('repro', async () => {
  const api = await makeApi()
  const doc = (await api.get('/swagger/json')).body
  console.log(JSON.stringify(doc.paths['/api/admin/projects/{projectId}/features'].get.parameters))
  for (const q of ['?tag=' + 'a'.repeat(300), '?tag=a,b', '?namePrefix=a&namePrefix=b', '?namePrefix=%zz', '?tag[]=a', '?x=1', '?namePrefix=%ED%A0%80', '?tag=' + 'simple:a,'.repeat(101)]) {
    const r = await api.get('/api/admin/projects/default/features' + q)
    console.log(q.slice(0, 30), r.status, r.text.slice(0, 250))
  }
  console.log((await api.get('/api/admin/projects/default/features?namePrefix=a&namePrefix=b', { token: null })).status)
  await api.close()
})

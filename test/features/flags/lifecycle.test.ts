/**
 * The lifecycle, read side: GET .../features/:featureName/lifecycle (the stages a flag went
 * through, from its own writes and from SDK metrics, as Unleash derives them), the stage in the
 * flag views, and GET /api/admin/lifecycle/count.
 */
import { describe, expect, setSystemTime, test } from 'bun:test'
import { type Api, expectError, expectOk, freshApiPerTest, makeApi, paths, tokenFor, waitFor } from '../../helpers'
import { freshDatabase, ON_POSTGRES } from '../../test-store'

let api: Api
freshApiPerTest(fresh => (api = fresh))

interface Stage {
  stage: string
  enteredStageAt: string
  status?: string
}
interface Count {
  initial: number
  preLive: number
  live: number
  completed: number
  archived: number
}

const START = Date.parse('2026-03-01T10:00:00.000Z')
const at = (minutes: number) => {
  setSystemTime(new Date(START + minutes * 60_000))
  return new Date(START + minutes * 60_000).toISOString()
}
const lifecycle = (flag: string, project = 'default', on = api, token?: string) =>
  on.get<Stage[]>(`${paths.flag(flag, project)}/lifecycle`, token ? { token } : {})
const count = (on = api, token?: string) => on.get<Count>('/api/admin/lifecycle/count', token ? { token } : {})

async function reported(flag: string, environment: string, on = api) {
  const token = await tokenFor(on, `sdk-${environment}-${Math.random().toString(36).slice(2, 8)}`, {
    type: 'client',
    environment,
  })
  const body = { appName: 'web', bucket: { start: 0, stop: 0, toggles: { [flag]: { yes: 1, no: 0 } } } }
  expectOk(await on.post('/api/client/metrics', body, { token }), 202)
  await on.services.metrics.flush()
}

describe('stages', () => {
  test('initial when made; pre-live at the first metrics; live when on in production; completed; archived; revived starts over', async () => {
    const created = at(0)
    await api.newFlag('default', 'alpha')
    expect((await lifecycle('alpha')).body).toEqual([{ stage: 'initial', enteredStageAt: created }])

    const firstReport = at(10)
    await reported('alpha', 'development')
    expect((await lifecycle('alpha')).body).toEqual([
      { stage: 'initial', enteredStageAt: created },
      { stage: 'pre-live', enteredStageAt: firstReport },
    ])
    expect((await api.getFlag('default', 'alpha')).body.lifecycle).toEqual({
      stage: 'pre-live',
      enteredStageAt: firstReport,
    })
    expect((await api.listFlags('default')).body.features.find(flag => flag.name === 'alpha')?.lifecycle.stage).toBe(
      'pre-live',
    )

    // Metrics from production while the flag is off there: not live.
    at(20)
    await reported('alpha', 'production')
    expect((await lifecycle('alpha')).body.map(stage => stage.stage)).toEqual(['initial', 'pre-live'])

    const enabled = at(30)
    expectOk(await api.toggle('default', 'alpha', 'production', true))
    at(40)
    await reported('alpha', 'production')
    const live = [
      { stage: 'initial', enteredStageAt: created },
      { stage: 'pre-live', enteredStageAt: firstReport },
      { stage: 'live', enteredStageAt: enabled },
    ]
    expect((await lifecycle('alpha')).body).toEqual(live)

    const completed = at(50)
    expectOk(await api.post(`${paths.flag('alpha')}/lifecycle/complete`, { status: 'kept' }))
    expect((await lifecycle('alpha')).body).toEqual([
      ...live,
      { stage: 'completed', enteredStageAt: completed, status: 'kept' },
    ])
    expect((await count()).body).toEqual({ initial: 0, preLive: 0, live: 0, completed: 1, archived: 0 })

    const archived = at(60)
    expectOk(await api.delete(paths.flag('alpha')), 202)
    expect((await lifecycle('alpha')).body).toEqual([...live, { stage: 'archived', enteredStageAt: archived }])
    expect((await count()).body.archived).toBe(1)

    const revived = at(70)
    expectOk(await api.post('/api/admin/projects/default/revive', { features: ['alpha'] }))
    expect((await lifecycle('alpha')).body).toEqual([{ stage: 'initial', enteredStageAt: revived }])
    const again = at(80)
    await reported('alpha', 'development')
    expect((await lifecycle('alpha')).body).toEqual([
      { stage: 'initial', enteredStageAt: revived },
      { stage: 'pre-live', enteredStageAt: again },
    ])
  })

  test('enabled in a development environment without metrics: pre-live; in production: live, pre-live with it', async () => {
    const created = at(0)
    await api.newFlag('default', 'alpha')
    await api.newFlag('default', 'beta')
    const devOn = at(5)
    expectOk(await api.toggle('default', 'alpha', 'development', true))
    const prodOn = at(6)
    expectOk(await api.toggle('default', 'beta', 'production', true))
    expect((await lifecycle('alpha')).body).toEqual([
      { stage: 'initial', enteredStageAt: created },
      { stage: 'pre-live', enteredStageAt: devOn },
    ])
    expect((await lifecycle('beta')).body).toEqual([
      { stage: 'initial', enteredStageAt: created },
      { stage: 'pre-live', enteredStageAt: prodOn },
      { stage: 'live', enteredStageAt: prodOn },
    ])
    expect((await count()).body).toEqual({ initial: 0, preLive: 1, live: 1, completed: 0, archived: 0 })
  })
})

describe('reads', () => {
  test('404 for an unknown flag, a flag of another project, and for a token that cannot see the project; counts per scope', async () => {
    await api.newProject('other')
    await api.newFlag('default', 'alpha')
    await api.newFlag('other', 'beta')
    expectError(await lifecycle('nope'), 404, 'NotFoundError', ['nope'])
    expectError(await lifecycle('alpha', 'other'), 404, 'NotFoundError', ['alpha'])
    const scoped = await tokenFor(api, 'other-admin', { projects: ['other'] })
    expectError(await lifecycle('alpha', 'default', api, scoped), 404, 'NotFoundError')
    expectOk(await lifecycle('beta', 'other', api, scoped))
    expect((await count(api, scoped)).body).toEqual({ initial: 1, preLive: 0, live: 0, completed: 0, archived: 0 })
    expect((await count()).body.initial).toBe(2)
  })

  test.skipIf(!ON_POSTGRES)(
    'on PostgreSQL, metrics flushed by one instance move the stage on every instance',
    async () => {
      const database = await freshDatabase()
      const a = await makeApi({ database })
      const b = await makeApi({ database })
      await a.newFlag('default', 'alpha')
      await waitFor(() => b.services.store.state.flags.alpha !== undefined, 'the flag on b')
      await reported('alpha', 'development', b)
      await waitFor(
        async () => (await lifecycle('alpha', 'default', a)).body.at(-1)?.stage === 'pre-live',
        'pre-live on a',
      )
    },
  )
})

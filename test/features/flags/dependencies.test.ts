/**
 * Flag dependencies and the flag lifecycle (complete, uncomplete). The setup shared with
 * relations.test.ts is relations.setup.ts.
 */
import { beforeEach, describe, expect, setSystemTime, test } from 'bun:test'
import { errorOf, defined, paths } from '../../helpers'
import { api, useFreshApi, PROJECT, dependenciesPath, lifecyclePath, flag, listed } from './relations.setup'

useFreshApi()

describe('dependencies', () => {
  test("adding a dependency shows it on the child and in the parent's children, and records feature-dependency-added", async () => {
    await api.newFlag(PROJECT, 'dep-parent')
    await api.newFlag(PROJECT, 'dep-child')
    const before = api.lastEventId()
    const response = await api.post(dependenciesPath('dep-child'), { feature: 'dep-parent' })
    expect(response.status).toBe(200)

    const child = await flag('dep-child')
    expect(child.dependencies).toEqual([{ feature: 'dep-parent', enabled: true, variants: [] }])
    expect(child.children).toEqual([])
    const parent = await flag('dep-parent')
    expect(parent.children).toEqual(['dep-child'])
    expect(parent.dependencies).toEqual([])
    expect((await listed('dep-child')).dependencies).toEqual([{ feature: 'dep-parent', enabled: true, variants: [] }])
    expect((await listed('dep-parent')).children).toEqual(['dep-child'])

    const events = api.eventsSince(before)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      type: 'feature-dependency-added',
      project: PROJECT,
      featureName: 'dep-child',
      data: { feature: 'dep-parent', enabled: true, variants: [] },
    })
  })

  test('a dependency may require the parent enabled with some variants, or require it disabled', async () => {
    await api.newFlag(PROJECT, 'dep-p1')
    await api.newFlag(PROJECT, 'dep-p2')
    await api.newFlag(PROJECT, 'dep-multi')
    expect(
      (await api.post(dependenciesPath('dep-multi'), { feature: 'dep-p1', enabled: true, variants: ['blue', 'green'] }))
        .status,
    ).toBe(200)
    expect((await api.post(dependenciesPath('dep-multi'), { feature: 'dep-p2', enabled: false })).status).toBe(200)
    const child = await flag('dep-multi')
    expect(child.dependencies).toEqual([
      { feature: 'dep-p1', enabled: true, variants: ['blue', 'green'] },
      { feature: 'dep-p2', enabled: false, variants: [] },
    ])
    expect((await flag('dep-p1')).children).toEqual(['dep-multi'])
    expect((await flag('dep-p2')).children).toEqual(['dep-multi'])
  })

  test('adding a dependency on the same parent again replaces it', async () => {
    await api.newFlag(PROJECT, 'dep-again-parent')
    await api.newFlag(PROJECT, 'dep-again-child')
    await api.post(dependenciesPath('dep-again-child'), { feature: 'dep-again-parent' })
    const before = api.lastEventId()
    expect(
      (await api.post(dependenciesPath('dep-again-child'), { feature: 'dep-again-parent', enabled: false })).status,
    ).toBe(200)
    expect((await flag('dep-again-child')).dependencies).toEqual([
      { feature: 'dep-again-parent', enabled: false, variants: [] },
    ])
    expect((await flag('dep-again-parent')).children).toEqual(['dep-again-child'])
    const events = api.eventsSince(before)
    expect(events.map(e => e.type)).toEqual(['feature-dependency-added'])
    expect(events[0].data).toEqual({ feature: 'dep-again-parent', enabled: false, variants: [] })
  })

  /** Sends a dependency that must be refused with 400 and checks that nothing changed. */
  async function expectDependencyRejected(child: string, body: Record<string, unknown>) {
    const before = api.lastEventId()
    const dependencies = (await flag(child)).dependencies
    const response = await api.post(dependenciesPath(child), body)
    expect({ body, status: response.status }).toEqual({ body, status: 400 })
    expect(errorOf(response).name).toBe('ValidationError')
    expect((await flag(child)).dependencies).toEqual(dependencies)
    expect(api.eventsSince(before)).toEqual([])
  }

  test('variants can be required only when the parent must be enabled', async () => {
    await api.newFlag(PROJECT, 'dep-var-parent')
    await api.newFlag(PROJECT, 'dep-var-child')
    await expectDependencyRejected('dep-var-child', { feature: 'dep-var-parent', enabled: false, variants: ['blue'] })
    expect((await flag('dep-var-parent')).children).toEqual([])
  })

  test('a flag cannot depend on itself', async () => {
    await api.newFlag(PROJECT, 'dep-self')
    await expectDependencyRejected('dep-self', { feature: 'dep-self' })
    expect((await flag('dep-self')).children).toEqual([])
  })

  test('the parent must be a live flag of the same project', async () => {
    await api.newFlag(PROJECT, 'dep-local-child')
    await expectDependencyRejected('dep-local-child', { feature: 'no-such-parent' })

    await api.newFlag(PROJECT, 'dep-archived-parent')
    expect((await api.delete(paths.flag('dep-archived-parent'))).status).toBe(202)
    await expectDependencyRejected('dep-local-child', { feature: 'dep-archived-parent' })
  })

  test('a parent in another project is refused with 400', async () => {
    const project = await api.createProject('elsewhere')
    expect(project.status).toBe(201)
    await api.newFlag('elsewhere', 'dep-foreign-parent')
    await api.newFlag(PROJECT, 'dep-home-child')
    await expectDependencyRejected('dep-home-child', { feature: 'dep-foreign-parent' })
    expect((await flag('dep-foreign-parent', 'elsewhere')).children).toEqual([])
  })

  test('a parent cannot have parents of its own', async () => {
    await api.newFlag(PROJECT, 'dep-grandparent')
    await api.newFlag(PROJECT, 'dep-middle')
    await api.newFlag(PROJECT, 'dep-grandchild')
    expect((await api.post(dependenciesPath('dep-middle'), { feature: 'dep-grandparent' })).status).toBe(200)
    await expectDependencyRejected('dep-grandchild', { feature: 'dep-middle' })
    expect((await flag('dep-middle')).children).toEqual([])
  })

  test('a flag with children cannot get a parent, which also rules out cycles', async () => {
    await api.newFlag(PROJECT, 'dep-top')
    await api.newFlag(PROJECT, 'dep-bottom')
    await api.newFlag(PROJECT, 'dep-new-top')
    expect((await api.post(dependenciesPath('dep-bottom'), { feature: 'dep-top' })).status).toBe(200)
    await expectDependencyRejected('dep-top', { feature: 'dep-new-top' })
    await expectDependencyRejected('dep-top', { feature: 'dep-bottom' })
    expect((await flag('dep-top')).dependencies).toEqual([])
    expect((await flag('dep-top')).children).toEqual(['dep-bottom'])
  })

  test('adding a dependency to an unknown child answers 404', async () => {
    await api.newFlag(PROJECT, 'dep-lonely-parent')
    const before = api.lastEventId()
    const unknown = await api.post(dependenciesPath('no-such-child'), { feature: 'dep-lonely-parent' })
    expect(unknown.status).toBe(404)
    expect(errorOf(unknown).name).toBe('NotFoundError')
    await api.newFlag(PROJECT, 'dep-misplaced-child')
    const misplaced = await api.post(dependenciesPath('dep-misplaced-child', 'not-its-project'), {
      feature: 'dep-lonely-parent',
    })
    expect(misplaced.status).toBe(404)
    expect((await flag('dep-lonely-parent')).children).toEqual([])
    expect(api.eventsSince(before).filter(e => e.type.startsWith('feature-dependency'))).toEqual([])
  })

  test('removing one dependency answers 200, updates both flags and records feature-dependency-removed', async () => {
    await api.newFlag(PROJECT, 'dep-rm-p1')
    await api.newFlag(PROJECT, 'dep-rm-p2')
    await api.newFlag(PROJECT, 'dep-rm-child')
    await api.post(dependenciesPath('dep-rm-child'), { feature: 'dep-rm-p1' })
    await api.post(dependenciesPath('dep-rm-child'), { feature: 'dep-rm-p2', enabled: false })
    const before = api.lastEventId()
    const response = await api.delete(`${dependenciesPath('dep-rm-child')}/dep-rm-p1`)
    expect(response.status).toBe(200)
    expect((await flag('dep-rm-child')).dependencies).toEqual([{ feature: 'dep-rm-p2', enabled: false, variants: [] }])
    expect((await flag('dep-rm-p1')).children).toEqual([])
    expect((await flag('dep-rm-p2')).children).toEqual(['dep-rm-child'])
    const events = api.eventsSince(before)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      type: 'feature-dependency-removed',
      project: PROJECT,
      featureName: 'dep-rm-child',
      preData: { feature: 'dep-rm-p1' },
    })
  })

  test('removing a dependency the flag does not have answers 404 and records nothing', async () => {
    await api.newFlag(PROJECT, 'dep-none-parent')
    await api.newFlag(PROJECT, 'dep-none-child')
    const before = api.lastEventId()
    expect((await api.delete(`${dependenciesPath('dep-none-child')}/dep-none-parent`)).status).toBe(404)
    expect((await api.delete(`${dependenciesPath('no-such-child')}/dep-none-parent`)).status).toBe(404)
    expect(api.eventsSince(before)).toEqual([])
  })

  test("removing all dependencies clears them, empties the parents' children and records feature-dependencies-removed", async () => {
    await api.newFlag(PROJECT, 'dep-all-p1')
    await api.newFlag(PROJECT, 'dep-all-p2')
    await api.newFlag(PROJECT, 'dep-all-child')
    await api.post(dependenciesPath('dep-all-child'), { feature: 'dep-all-p1' })
    await api.post(dependenciesPath('dep-all-child'), { feature: 'dep-all-p2' })
    const before = api.lastEventId()
    const response = await api.delete(dependenciesPath('dep-all-child'))
    expect(response.status).toBe(200)
    expect((await flag('dep-all-child')).dependencies).toEqual([])
    expect((await flag('dep-all-p1')).children).toEqual([])
    expect((await flag('dep-all-p2')).children).toEqual([])
    const events = api.eventsSince(before)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      type: 'feature-dependencies-removed',
      project: PROJECT,
      featureName: 'dep-all-child',
    })
    expect(JSON.stringify(events[0].preData)).toContain('dep-all-p1')
    expect(JSON.stringify(events[0].preData)).toContain('dep-all-p2')
  })

  test('removing all dependencies of an unknown flag answers 404', async () => {
    expect((await api.delete(dependenciesPath('no-such-child'))).status).toBe(404)
  })

  test('archiving a parent of a live child answers 400 and leaves the parent live', async () => {
    await api.newFlag(PROJECT, 'dep-arch-parent')
    await api.newFlag(PROJECT, 'dep-arch-child')
    await api.post(dependenciesPath('dep-arch-child'), { feature: 'dep-arch-parent' })
    const before = api.lastEventId()
    const deleted = await api.delete(paths.flag('dep-arch-parent'))
    expect(deleted.status).toBe(400)
    expect(errorOf(deleted).name).toBe('ValidationError')
    const patched = await api.patchFlag(PROJECT, 'dep-arch-parent', [{ op: 'replace', path: '/archived', value: true }])
    expect(patched.status).toBe(400)
    const parent = await flag('dep-arch-parent')
    expect(parent.archived).toBe(false)
    expect(parent.children).toEqual(['dep-arch-child'])
    expect(api.eventsSince(before)).toEqual([])

    expect((await api.delete(paths.flag('dep-arch-child'))).status).toBe(202)
    expect((await api.delete(paths.flag('dep-arch-parent'))).status).toBe(202)
    expect((await flag('dep-arch-parent')).archived).toBe(true)
  })
})

describe('lifecycle', () => {
  let clock = 0
  /** Moves the clock on by a minute, so that a new stage has a visibly new enteredStageAt. */
  function tick(): string {
    clock += 60_000
    const now = new Date(clock)
    setSystemTime(now)
    return now.toISOString()
  }
  beforeEach(() => {
    clock = Date.parse('2031-03-01T08:00:00.000Z')
    setSystemTime(new Date(clock))
  })

  async function lifecycle(name: string) {
    const body = await flag(name)
    return body.lifecycle
  }

  test('a new flag is in stage initial, entered when it was created', async () => {
    const created = await api.newFlag(PROJECT, 'life-new')
    const createdAt = defined(created.createdAt)
    expect(created.lifecycle).toEqual({ stage: 'initial', enteredStageAt: createdAt })
    expect(await lifecycle('life-new')).toEqual({ stage: 'initial', enteredStageAt: createdAt })
    expect((await listed('life-new')).lifecycle).toEqual({ stage: 'initial', enteredStageAt: createdAt })
  })

  test('enabling in development moves the flag to pre-live, and enabling in production to live, each with a new enteredStageAt', async () => {
    const created = await api.newFlag(PROJECT, 'life-path')
    const devAt = tick()
    expect((await api.toggle(PROJECT, 'life-path', 'development', true)).status).toBe(200)
    expect(await lifecycle('life-path')).toEqual({ stage: 'pre-live', enteredStageAt: devAt })
    expect(devAt).not.toBe(created.createdAt)

    const prodAt = tick()
    expect((await api.toggle(PROJECT, 'life-path', 'production', true)).status).toBe(200)
    expect(await lifecycle('life-path')).toEqual({ stage: 'live', enteredStageAt: prodAt })
    expect((await listed('life-path')).lifecycle).toEqual({ stage: 'live', enteredStageAt: prodAt })
  })

  test('enabling in production straight from initial moves the flag to live', async () => {
    await api.newFlag(PROJECT, 'life-straight')
    const at = tick()
    await api.toggle(PROJECT, 'life-straight', 'production', true)
    expect(await lifecycle('life-straight')).toEqual({ stage: 'live', enteredStageAt: at })
  })

  test('toggling again without a change of stage keeps the stage and its enteredStageAt', async () => {
    await api.newFlag(PROJECT, 'life-steady')
    const devAt = tick()
    await api.toggle(PROJECT, 'life-steady', 'development', true)
    tick()
    await api.toggle(PROJECT, 'life-steady', 'development', false)
    tick()
    await api.toggle(PROJECT, 'life-steady', 'development', true)
    expect(await lifecycle('life-steady')).toEqual({ stage: 'pre-live', enteredStageAt: devAt })

    const liveAt = tick()
    await api.toggle(PROJECT, 'life-steady', 'production', true)
    tick()
    await api.toggle(PROJECT, 'life-steady', 'production', false)
    tick()
    await api.toggle(PROJECT, 'life-steady', 'development', false)
    tick()
    await api.toggle(PROJECT, 'life-steady', 'development', true)
    expect(await lifecycle('life-steady')).toEqual({ stage: 'live', enteredStageAt: liveAt })
  })

  test('complete moves the flag to completed and records feature-completed', async () => {
    await api.newFlag(PROJECT, 'life-complete')
    await api.toggle(PROJECT, 'life-complete', 'production', true)
    const at = tick()
    const before = api.lastEventId()
    const response = await api.post(lifecyclePath('life-complete', 'complete'), { status: 'kept', statusValue: 'blue' })
    expect(response.status).toBe(200)
    expect(await lifecycle('life-complete')).toEqual({ stage: 'completed', enteredStageAt: at })
    const events = api.eventsSince(before)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      type: 'feature-completed',
      project: PROJECT,
      featureName: 'life-complete',
      data: { status: 'kept', statusValue: 'blue' },
    })
  })

  test('complete accepts status discarded without a statusValue', async () => {
    await api.newFlag(PROJECT, 'life-discard')
    const response = await api.post(lifecyclePath('life-discard', 'complete'), { status: 'discarded' })
    expect(response.status).toBe(200)
    expect((await lifecycle('life-discard')).stage).toBe('completed')
    expect(api.events().at(-1)).toMatchObject({
      type: 'feature-completed',
      featureName: 'life-discard',
      data: { status: 'discarded' },
    })
  })

  test('complete with a status other than kept or discarded answers 400 and changes nothing', async () => {
    await api.newFlag(PROJECT, 'life-bad-status')
    const before = api.lastEventId()
    for (const body of [{ status: 'done' }, { status: 'KEPT' }, { status: 'kept', statusValue: 7 }]) {
      const response = await api.post(lifecyclePath('life-bad-status', 'complete'), body)
      expect({ body, status: response.status }).toEqual({ body, status: 400 })
    }
    expect((await lifecycle('life-bad-status')).stage).toBe('initial')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('complete without a status answers 400 and changes nothing (status is required)', async () => {
    await api.newFlag(PROJECT, 'life-no-status')
    const before = api.lastEventId()
    for (const body of [{}, { statusValue: 'blue' }]) {
      const response = await api.post(lifecyclePath('life-no-status', 'complete'), body)
      expect({ body, status: response.status }).toEqual({ body, status: 400 })
    }
    expect((await lifecycle('life-no-status')).stage).toBe('initial')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('complete without a JSON body answers 415 and changes nothing', async () => {
    await api.newFlag(PROJECT, 'life-no-body')
    const before = api.lastEventId()
    const none = await api.post(lifecyclePath('life-no-body', 'complete'))
    expect(none.status).toBe(415)
    expect(errorOf(none).name).toBe('ContentTypeerror')
    const text = await api.post(lifecyclePath('life-no-body', 'complete'), undefined, {
      raw: 'kept',
      headers: { 'content-type': 'text/plain' },
    })
    expect(text.status).toBe(415)
    expect((await lifecycle('life-no-body')).stage).toBe('initial')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('a completed flag stays completed when it is enabled, and completing it again keeps its enteredStageAt', async () => {
    await api.newFlag(PROJECT, 'life-stays')
    const at = tick()
    await api.post(lifecyclePath('life-stays', 'complete'), { status: 'kept' })
    tick()
    await api.toggle(PROJECT, 'life-stays', 'production', true)
    expect(await lifecycle('life-stays')).toEqual({ stage: 'completed', enteredStageAt: at })
    tick()
    expect((await api.post(lifecyclePath('life-stays', 'complete'), { status: 'discarded' })).status).toBe(200)
    expect(await lifecycle('life-stays')).toEqual({ stage: 'completed', enteredStageAt: at })
  })

  test('uncomplete returns a flag enabled in production to live and records feature-uncompleted', async () => {
    await api.newFlag(PROJECT, 'life-back-live')
    await api.toggle(PROJECT, 'life-back-live', 'development', true)
    await api.toggle(PROJECT, 'life-back-live', 'production', true)
    tick()
    await api.post(lifecyclePath('life-back-live', 'complete'), { status: 'kept' })
    const at = tick()
    const before = api.lastEventId()
    const response = await api.post(lifecyclePath('life-back-live', 'uncomplete'))
    expect(response.status).toBe(200)
    expect(await lifecycle('life-back-live')).toEqual({ stage: 'live', enteredStageAt: at })
    const events = api.eventsSince(before)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ type: 'feature-uncompleted', project: PROJECT, featureName: 'life-back-live' })
  })

  test('uncomplete returns a flag enabled only outside production to pre-live', async () => {
    await api.newFlag(PROJECT, 'life-back-pre')
    await api.toggle(PROJECT, 'life-back-pre', 'development', true)
    await api.post(lifecyclePath('life-back-pre', 'complete'), { status: 'kept' })
    const at = tick()
    expect((await api.post(lifecyclePath('life-back-pre', 'uncomplete'))).status).toBe(200)
    expect(await lifecycle('life-back-pre')).toEqual({ stage: 'pre-live', enteredStageAt: at })
    expect(api.events().at(-1)?.type).toBe('feature-uncompleted')
  })

  test('uncomplete returns a flag enabled nowhere to initial', async () => {
    await api.newFlag(PROJECT, 'life-back-initial')
    await api.post(lifecyclePath('life-back-initial', 'complete'), { status: 'discarded' })
    const at = tick()
    expect((await api.post(lifecyclePath('life-back-initial', 'uncomplete'))).status).toBe(200)
    expect(await lifecycle('life-back-initial')).toEqual({ stage: 'initial', enteredStageAt: at })
  })

  test('uncomplete follows where the flag is enabled now, not where it was', async () => {
    await api.newFlag(PROJECT, 'life-was-live')
    await api.toggle(PROJECT, 'life-was-live', 'production', true)
    await api.toggle(PROJECT, 'life-was-live', 'development', true)
    await api.post(lifecyclePath('life-was-live', 'complete'), { status: 'kept' })
    await api.toggle(PROJECT, 'life-was-live', 'production', false)
    expect((await api.post(lifecyclePath('life-was-live', 'uncomplete'))).status).toBe(200)
    expect((await lifecycle('life-was-live')).stage).toBe('pre-live')
  })

  test('uncomplete of a flag that is not completed answers 400 and changes nothing', async () => {
    await api.newFlag(PROJECT, 'life-not-done')
    await api.toggle(PROJECT, 'life-not-done', 'development', true)
    const stage = await lifecycle('life-not-done')
    const before = api.lastEventId()
    const response = await api.post(lifecyclePath('life-not-done', 'uncomplete'))
    expect(response.status).toBe(400)
    expect(await lifecycle('life-not-done')).toEqual(stage)
    expect(api.eventsSince(before)).toEqual([])
  })

  test('complete and uncomplete of an unknown flag answer 404', async () => {
    expect((await api.post(lifecyclePath('no-such-flag', 'complete'), { status: 'kept' })).status).toBe(404)
    expect((await api.post(lifecyclePath('no-such-flag', 'uncomplete'))).status).toBe(404)
  })

  test('archiving moves the flag to archived and reviving returns it to initial, each with a new enteredStageAt', async () => {
    await api.newFlag(PROJECT, 'life-archive')
    await api.toggle(PROJECT, 'life-archive', 'production', true)
    const archivedAt = tick()
    expect((await api.delete(paths.flag('life-archive'))).status).toBe(202)
    expect(await lifecycle('life-archive')).toEqual({ stage: 'archived', enteredStageAt: archivedAt })

    const revivedAt = tick()
    expect((await api.post(`/api/admin/projects/${PROJECT}/revive`, { features: ['life-archive'] })).status).toBe(200)
    expect(await lifecycle('life-archive')).toEqual({ stage: 'initial', enteredStageAt: revivedAt })
    expect((await listed('life-archive')).lifecycle).toEqual({ stage: 'initial', enteredStageAt: revivedAt })
  })

  test('archiving and reviving through PATCH /archived move the lifecycle the same way', async () => {
    await api.newFlag(PROJECT, 'life-patch')
    await api.toggle(PROJECT, 'life-patch', 'development', true)
    const archivedAt = tick()
    expect(
      (await api.patchFlag(PROJECT, 'life-patch', [{ op: 'replace', path: '/archived', value: true }])).status,
    ).toBe(200)
    expect(await lifecycle('life-patch')).toEqual({ stage: 'archived', enteredStageAt: archivedAt })
    const revivedAt = tick()
    expect(
      (await api.patchFlag(PROJECT, 'life-patch', [{ op: 'replace', path: '/archived', value: false }])).status,
    ).toBe(200)
    expect(await lifecycle('life-patch')).toEqual({ stage: 'initial', enteredStageAt: revivedAt })
  })

  test('a completed flag that is archived becomes archived', async () => {
    await api.newFlag(PROJECT, 'life-completed-archive')
    await api.post(lifecyclePath('life-completed-archive', 'complete'), { status: 'kept' })
    const at = tick()
    expect((await api.delete(paths.flag('life-completed-archive'))).status).toBe(202)
    expect(await lifecycle('life-completed-archive')).toEqual({ stage: 'archived', enteredStageAt: at })
  })

  test('complete and uncomplete of an archived flag answer 400 and leave it archived', async () => {
    await api.newFlag(PROJECT, 'life-archived-complete')
    await api.delete(paths.flag('life-archived-complete'))
    const before = api.lastEventId()
    expect((await api.post(lifecyclePath('life-archived-complete', 'complete'), { status: 'kept' })).status).toBe(400)
    expect((await api.post(lifecyclePath('life-archived-complete', 'uncomplete'))).status).toBe(400)
    expect((await lifecycle('life-archived-complete')).stage).toBe('archived')
    expect(api.eventsSince(before)).toEqual([])
  })

  test('setting stale does not touch the lifecycle', async () => {
    await api.newFlag(PROJECT, 'life-stale')
    await api.toggle(PROJECT, 'life-stale', 'development', true)
    const stage = await lifecycle('life-stale')
    tick()
    expect((await api.patchFlag(PROJECT, 'life-stale', [{ op: 'replace', path: '/stale', value: true }])).status).toBe(
      200,
    )
    expect(await lifecycle('life-stale')).toEqual(stage)
  })
})

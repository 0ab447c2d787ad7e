/**
 * Tags (seed 2.8), parent dependencies (seed 2.10) and the lifecycle (seed 2.9, 3) of a flag,
 * through the admin API: contract §6 (Tags, Dependencies, Lifecycle) and §4 (events).
 */
import { beforeEach, describe, expect, test } from 'bun:test'
import { errorOf, type TagListBody, paths } from '../../helpers'
import { api, useFreshApi, PROJECT, tagsPath, tagPath, flag, listed, tagsOf } from './relations.setup'

useFreshApi()

describe('tags', () => {
  beforeEach(() => api.newTagTypes('team'))

  test('adding a tag answers 201 with the tag, the type defaulting to simple, and records feature-tagged', async () => {
    await api.newFlag(PROJECT, 'tag-add')
    const before = api.lastEventId()
    const response = await api.post(tagsPath('tag-add'), { value: 'checkout' })
    expect(response.status).toBe(201)
    expect(response.body).toEqual({ type: 'simple', value: 'checkout' })

    const list = await api.get<TagListBody>(tagsPath('tag-add'))
    expect(list.status).toBe(200)
    expect(list.body.tags).toEqual([{ type: 'simple', value: 'checkout' }])
    expect((await flag('tag-add')).tags).toEqual([{ type: 'simple', value: 'checkout' }])
    expect((await listed('tag-add')).tags).toEqual([{ type: 'simple', value: 'checkout' }])

    const events = api.eventsSince(before)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      type: 'feature-tagged',
      project: PROJECT,
      featureName: 'tag-add',
      data: { type: 'simple', value: 'checkout' },
    })
  })

  test('a tag keeps the type it is given', async () => {
    await api.newFlag(PROJECT, 'tag-typed')
    const response = await api.post(tagsPath('tag-typed'), { type: 'team', value: 'payments' })
    expect(response.status).toBe(201)
    expect(response.body).toEqual({ type: 'team', value: 'payments' })
    expect(await tagsOf('tag-typed')).toEqual([{ type: 'team', value: 'payments' }])
  })

  test('a tag value must be 2 to 50 characters long', async () => {
    await api.newFlag(PROJECT, 'tag-length')
    const before = api.lastEventId()
    for (const value of ['x', '', 'y'.repeat(51), 'z'.repeat(120)]) {
      const response = await api.post(tagsPath('tag-length'), { value })
      expect({ value, status: response.status }).toEqual({ value, status: 400 })
      expect(errorOf(response).name).toBe('ValidationError')
    }
    expect(await tagsOf('tag-length')).toEqual([])
    expect(api.eventsSince(before)).toEqual([])

    expect((await api.post(tagsPath('tag-length'), { value: 'ab' })).status).toBe(201)
    expect((await api.post(tagsPath('tag-length'), { value: 'c'.repeat(50) })).status).toBe(201)
    expect(await tagsOf('tag-length')).toEqual([
      { type: 'simple', value: 'ab' },
      { type: 'simple', value: 'c'.repeat(50) },
    ])
  })

  test('a tag without a value answers 400', async () => {
    await api.newFlag(PROJECT, 'tag-no-value')
    const response = await api.post(tagsPath('tag-no-value'), { type: 'simple' })
    expect(response.status).toBe(400)
    expect(await tagsOf('tag-no-value')).toEqual([])
  })

  test('adding a tag the flag already has answers 409 and records nothing', async () => {
    await api.newFlag(PROJECT, 'tag-twice')
    expect((await api.post(tagsPath('tag-twice'), { type: 'simple', value: 'same' })).status).toBe(201)
    const before = api.lastEventId()
    const again = await api.post(tagsPath('tag-twice'), { value: 'same' })
    expect(again.status).toBe(409)
    expect(errorOf(again).name).toBe('NameExistsError')
    expect(await tagsOf('tag-twice')).toEqual([{ type: 'simple', value: 'same' }])
    expect(api.eventsSince(before)).toEqual([])
  })

  test('the same value under another type is a different tag', async () => {
    await api.newFlag(PROJECT, 'tag-types')
    expect((await api.post(tagsPath('tag-types'), { type: 'simple', value: 'shared' })).status).toBe(201)
    expect((await api.post(tagsPath('tag-types'), { type: 'team', value: 'shared' })).status).toBe(201)
    expect(await tagsOf('tag-types')).toEqual([
      { type: 'simple', value: 'shared' },
      { type: 'team', value: 'shared' },
    ])
  })

  test('removing a tag answers 200, drops it and records feature-untagged', async () => {
    await api.newFlag(PROJECT, 'tag-remove')
    await api.post(tagsPath('tag-remove'), { value: 'keep-me' })
    await api.post(tagsPath('tag-remove'), { type: 'team', value: 'drop-me' })
    const before = api.lastEventId()
    const response = await api.delete(tagPath('tag-remove', 'team', 'drop-me'))
    expect(response.status).toBe(200)
    expect(await tagsOf('tag-remove')).toEqual([{ type: 'simple', value: 'keep-me' }])
    expect((await flag('tag-remove')).tags).toEqual([{ type: 'simple', value: 'keep-me' }])

    const events = api.eventsSince(before)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      type: 'feature-untagged',
      project: PROJECT,
      featureName: 'tag-remove',
      preData: { type: 'team', value: 'drop-me' },
      tags: [{ type: 'simple', value: 'keep-me' }],
    })
  })

  test('a tag whose value holds a space is removed by its URL-encoded value', async () => {
    await api.newFlag(PROJECT, 'tag-space')
    expect((await api.post(tagsPath('tag-space'), { value: 'two words' })).status).toBe(201)
    const response = await api.delete(tagPath('tag-space', 'simple', 'two words'))
    expect(response.status).toBe(200)
    expect(await tagsOf('tag-space')).toEqual([])
  })

  test('removing a tag the flag does not have answers 404 and records nothing', async () => {
    await api.newFlag(PROJECT, 'tag-absent')
    await api.post(tagsPath('tag-absent'), { value: 'present' })
    const before = api.lastEventId()
    const wrongValue = await api.delete(tagPath('tag-absent', 'simple', 'absent'))
    const wrongType = await api.delete(tagPath('tag-absent', 'team', 'present'))
    expect(wrongValue.status).toBe(404)
    expect(errorOf(wrongValue).name).toBe('NotFoundError')
    expect(wrongType.status).toBe(404)
    expect(await tagsOf('tag-absent')).toEqual([{ type: 'simple', value: 'present' }])
    expect(api.eventsSince(before)).toEqual([])
  })

  test('tags of an unknown flag answer 404', async () => {
    const before = api.lastEventId()
    expect((await api.get<TagListBody>(tagsPath('no-such-flag'))).status).toBe(404)
    expect((await api.post(tagsPath('no-such-flag'), { value: 'tagged' })).status).toBe(404)
    expect((await api.delete(tagPath('no-such-flag', 'simple', 'tagged'))).status).toBe(404)
    expect(api.eventsSince(before)).toEqual([])
  })

  test('events of a flag carry the tags it has at that time', async () => {
    await api.newFlag(PROJECT, 'tag-events')
    const [created] = await api.eventsOf('feature-created', 'tag-events')
    expect(created?.tags).toEqual([])

    const tagged = api.lastEventId()
    await api.post(tagsPath('tag-events'), { value: 'alpha' })
    await api.post(tagsPath('tag-events'), { type: 'team', value: 'beta' })
    const taggedEvents = await api.eventsAfter(tagged)
    expect(taggedEvents.map(e => e.type)).toEqual(['feature-tagged', 'feature-tagged'])
    expect(taggedEvents[1].tags).toEqual([
      { type: 'simple', value: 'alpha' },
      { type: 'team', value: 'beta' },
    ])

    const both = [
      { type: 'simple', value: 'alpha' },
      { type: 'team', value: 'beta' },
    ]
    const later = api.lastEventId()
    expect((await api.toggle(PROJECT, 'tag-events', 'development', true)).status).toBe(200)
    expect(
      (await api.patchFlag(PROJECT, 'tag-events', [{ op: 'replace', path: '/description', value: 'described' }]))
        .status,
    ).toBe(200)
    expect(
      (await api.put(`${paths.flag('tag-events')}/environments/production/variants`, [{ name: 'v', weight: 0 }]))
        .status,
    ).toBe(200)
    const laterEvents = api.eventsSince(later)
    expect(laterEvents.map(e => e.type)).toEqual([
      'feature-strategy-add',
      'feature-environment-enabled',
      'feature-metadata-updated',
      'feature-environment-variants-updated',
    ])
    for (const event of laterEvents)
      expect({ type: event.type, tags: event.tags }).toEqual({ type: event.type, tags: both })

    await api.delete(tagPath('tag-events', 'simple', 'alpha'))
    const afterRemoval = api.lastEventId()
    expect((await api.toggle(PROJECT, 'tag-events', 'development', false)).status).toBe(200)
    const last = api.eventsSince(afterRemoval)
    expect(last.map(e => e.type)).toEqual(['feature-environment-disabled'])
    expect(last[0].tags).toEqual([{ type: 'team', value: 'beta' }])
  })

  test('the flag list filter ?tag=type:value finds the flags with that tag', async () => {
    await api.newFlag(PROJECT, 'filter-a')
    await api.newFlag(PROJECT, 'filter-b')
    await api.newFlag(PROJECT, 'filter-c')
    await api.post(tagsPath('filter-a'), { value: 'wanted' })
    await api.post(tagsPath('filter-b'), { type: 'team', value: 'wanted' })
    await api.post(tagsPath('filter-c'), { value: 'other' })

    const names = async (query: string) => {
      const response = await api.listFlags(PROJECT, query)
      expect(response.status).toBe(200)
      return response.body.features.map(f => f.name)
    }
    expect(await names('?tag=simple:wanted')).toEqual(['filter-a'])
    expect(await names('?tag=team:wanted')).toEqual(['filter-b'])
    expect(await names('?tag=simple:missing')).toEqual([])
    expect(await names('?tag=simple:wanted&tag=simple:other')).toEqual(['filter-a', 'filter-c'])
    expect(await names('?tag=simple:wanted&namePrefix=filter-c')).toEqual([])

    await api.delete(tagPath('filter-a', 'simple', 'wanted'))
    expect(await names('?tag=simple:wanted')).toEqual([])
  })
})

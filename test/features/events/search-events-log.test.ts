/**
 * GET /api/admin/search/events: answers made of the log's own lines, and the search worker started by the first search.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EVENTS_FILE } from '../../../src/services'
import { withoutCommit } from '../../../src/storage/event-log'
import type { EventRecord } from '../../../src/storage/records'
import { makeApi, tempDir, tokenFor, expectOk } from '../../helpers'

import { api, setApi, useFreshApi, search, ids, expected, newProject } from './search-events.setup'

useFreshApi()

describe("searchEvents: the answer is made of the log's own lines", () => {
  /**
   * The worker builds the whole answer as bytes (reading them straight from events.jsonl on a data
   * directory): it must be exactly `{"events":[…],"total":N}` with each event's line as the log
   * holds it, less the commit number the log ends each line with, for pages of consecutive events and scattered ones, events loaded at start and
   * appended since, and a scoped token's filtered view.
   */
  for (const mode of ['memory', 'data directory'] as const) {
    test(`searchEvents: every page is the log's lines byte for byte, newest first (${mode})`, async () => {
      const dir = mode === 'memory' ? null : tempDir('search-bytes-')
      const open = () => makeApi(dir ? { dataDir: dir.path } : {})
      await api.close()
      setApi(await open())
      try {
        const write = async (round: number) => {
          await newProject(`shop-${round}`)
          for (let i = 0; i < 6; i++) {
            await api.newFlag(i % 2 ? 'default' : `shop-${round}`, `bytes-${round}-${i}`, {
              description: `straße 日本語 🎉 "quoted" back\\slash ${round}.${i}`,
            })
          }
          expectOk(await api.toggle(`shop-${round}`, `bytes-${round}-0`, 'production', true))
        }
        await write(1)
        if (dir) {
          // Reopened: these events reach the worker from the file, the next ones as they are committed.
          await api.close()
          setApi(await open())
        }
        await write(2)
        const scoped = await tokenFor(api, 'shop-2-only', { role: 'viewer', projects: ['shop-2'] })
        const lineOf = new Map<number, string>()
        const lines = dir
          ? readFileSync(join(dir.path, EVENTS_FILE), 'utf8').split('\n').filter(Boolean)
          : api.events().map(event => JSON.stringify(event))
        // The file's lines end with the number of the commit that wrote them, which is the log's own: answers leave it out.
        if (dir) expect(lines.every(line => /^\{"id":\d+,.*,"tags":\[.*\],"commitSeq":\d+\}$/.test(line))).toBe(true)
        for (const line of lines) lineOf.set(JSON.parse(line).id, withoutCommit(line))
        expect(lineOf.size).toBe(api.lastEventId())

        const check = async (
          query: string,
          predicate: (event: EventRecord) => boolean,
          offset: number,
          limit: number,
          token?: string,
        ) => {
          const response = await api.searchEvents(query, token === undefined ? undefined : { token })
          expectOk(response)
          expect(response.headers.get('content-type')).toBe('application/json')
          const all = expected(predicate)
          const page = all.slice(offset, offset + limit)
          expect(page.length).toBeGreaterThan(0)
          expect(response.text).toBe(`{"events":[${page.map(id => lineOf.get(id)).join(',')}],"total":${all.length}}`)
        }
        await check('?limit=1000', () => true, 0, 1000)
        await check('?offset=3&limit=7', () => true, 3, 7)
        await check('?type=IS:feature-created&limit=1000', event => event.type === 'feature-created', 0, 1000)
        await check(
          '?type=IS_ANY_OF:feature-created,project-created&offset=2&limit=5',
          event => ['feature-created', 'project-created'].includes(event.type),
          2,
          5,
        )
        await check(
          '?query=%C3%9FE%20%E6%97%A5&limit=1000',
          event => JSON.stringify(event.data ?? null).includes('ße 日'),
          0,
          1000,
        )
        await check('?limit=1000', event => event.project === 'shop-2', 0, 1000, scoped)
        expect(await search('?project=IS:shop-1', scoped)).toEqual({ events: [], total: 0 })
      } finally {
        await api.close()
        // afterEach closes `api` again; a fresh memory app keeps that harmless.
        setApi(await makeApi())
        dir?.remove()
      }
    })
  }
})

describe('searchEvents: the search worker starts with the first search', () => {
  /**
   * An app that never searches starts no worker (most tests never search); the worker that starts
   * later reads the log as it is then and gets every commit after that, in order.
   */
  for (const mode of ['memory', 'data directory'] as const) {
    test(`searchEvents: no worker before the first search, which sees every earlier write, and later writes are seen at once (${mode})`, async () => {
      const dir = mode === 'memory' ? null : tempDir('search-lazy-')
      await api.close()
      setApi(await makeApi(dir ? { dataDir: dir.path } : {}))
      try {
        await newProject('lazy')
        await api.newFlag('lazy', 'lazy-before', { description: 'written before the worker' })
        expect(api.services.events.started).toBe(false)
        // Writes racing the start: the search starts the worker while these commits are under way.
        const racing = Promise.all([0, 1, 2].map(i => api.newFlag('lazy', `lazy-racing-${i}`)))
        const first = ids('?project=IS:lazy')
        await racing
        const seen = await first
        expect(api.services.events.started).toBe(true)
        const all = expected(event => event.project === 'lazy')
        // The search may or may not see the racing writes, but it sees a prefix of the log: no gaps.
        expect(seen).toEqual(all.slice(all.length - seen.length))
        expect(seen.length).toBeGreaterThanOrEqual(all.length - 3)
        expect(await ids('?project=IS:lazy')).toEqual(all)
        await api.newFlag('lazy', 'lazy-after')
        expect(await ids('?project=IS:lazy')).toEqual(expected(event => event.project === 'lazy'))
        expect(await ids('?query=written%20before')).toEqual(
          expected(event => JSON.stringify(event.data ?? '').includes('written before')),
        )
      } finally {
        await api.close()
        dir?.remove()
        setApi(await makeApi())
      }
    })
  }
})

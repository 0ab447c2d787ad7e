/**
 * One app for the tests of a file that each want a fresh service (a store, services and seeding of
 * their own) and test what the routes answer. Building an app costs about 80 ms of CPU (Elysia
 * composes the handlers and JavaScriptCore compiles them on their first requests); fresh services
 * on the memory store about 5 ms.
 *
 * The app is built over stand-ins for the services, which pass each property read and each call,
 * when it happens, to the services of the world open at that moment (`open`, one at a time, until
 * its Api is closed or abandoned; with none open a stand-in throws, and a request fails with 500).
 * So its routes are the code every app runs, and reach the open world's store and services only.
 * What building does to the services is done to each world's instead: a call made while building
 * (the request metrics subscribe to the store's commits) is made again on each world's services
 * when it opens; a value read while building, or a call's answer, which the app could keep into a
 * later world, is refused.
 *
 * What the app keeps itself lives across worlds: the request metrics' counters (cumulative, as in
 * a process that runs long) and the flag lists' serialised answers, which are kept by list version
 * and so never answer for another world (versions are counted for the whole process, see
 * FlagsService). A test of figures the app counts makes its own app with makeApi.
 * test/http/shared-app.test.ts checks the worlds, the list answers and the replayed subscriptions.
 */
import { afterEach, beforeEach, setSystemTime } from 'bun:test'
import type { App } from '../../src/app'
import { type Services, stopWorkers } from '../../src/services'
import { type Api, appOver, closeOpenApps, type MakeApiOptions, openServices, serve } from './api'

type Call = { service: string; member: PropertyKey; args: unknown[] }

export interface SharedApp {
  readonly app: App
  /** A world: fresh services as makeApi makes them (same options), seeded, served by the one app. */
  open(): Promise<Api>
}

/** Builds the app over stand-ins (see above); `options` are makeApi's, for the app and every world. */
export async function sharedApp(options: MakeApiOptions = {}): Promise<SharedApp> {
  // Only for telling which members are methods while the app is built, before any world exists.
  const template = await openServices(options)
  let world: Services | null = null
  let building = true
  const calls: Call[] = []
  const stand = (service: string) =>
    new Proxy(Object.create(null), {
      get(_, member) {
        const named = `services.${service}.${String(member)}`
        if (building) {
          if (typeof Reflect.get(template[service as keyof Services], member) !== 'function')
            throw new Error(`building the app read ${named}: a world's value cannot be kept by the shared app`)
        } else {
          const value = Reflect.get(open(named)[service as keyof Services], member)
          if (typeof value !== 'function') return value
        }
        return (...args: unknown[]) => {
          if (building) {
            const answer = (template[service as keyof Services] as any)[member](...args)
            if (answer !== undefined)
              throw new Error(`building the app used what ${named}() answered: a world's value cannot be kept`)
            return void calls.push({ service, member, args })
          }
          const target = open(named)[service as keyof Services] as any
          return target[member](...args)
        }
      },
    })
  const open = (named: string): Services => {
    if (!world) throw new Error(`${named} was used with no world open`)
    return world
  }
  const stands = new Map<string, unknown>()
  const services = new Proxy(Object.create(null), {
    get(_, service) {
      if (typeof service !== 'string' || typeof template[service as keyof Services] !== 'object')
        throw new Error(`the app read services.${String(service)}, which is not a service`)
      if (!stands.has(service)) stands.set(service, stand(service))
      return stands.get(service)
    },
  }) as Services
  const app = appOver(services, options)
  building = false
  await template.store.close()
  stopWorkers(template)
  return {
    app,
    async open() {
      if (world) throw new Error('a world is still open: close its Api before opening the next')
      const fresh = await openServices(options)
      for (const call of calls) (fresh[call.service as keyof Services] as any)[call.member](...call.args)
      world = fresh
      const api = await serve(app, fresh, options).catch(error => {
        world = null
        throw error
      })
      const [close, abandon] = [api.close.bind(api), api.abandon.bind(api)]
      const leave = () => {
        if (world === fresh) world = null
      }
      return Object.assign(api, {
        close: () => close().finally(leave),
        abandon: () => {
          abandon()
          leave()
        },
      })
    },
  }
}

/**
 * A fresh service on the memory store for each test of the file (a world of one app built for the
 * file at its first test, see sharedApp), handed to `use`; after each test the clock is given back
 * and every app still open is closed (a test may swap in its own with makeApi).
 */
export function freshApiPerTest(use: (api: Api) => void) {
  let shared: Promise<SharedApp> | undefined
  beforeEach(async () => {
    shared ??= sharedApp()
    use(await (await shared).open())
  })
  afterEach(async () => {
    setSystemTime()
    await closeOpenApps()
  })
}

/** What the change-request tests share: a fresh app per test, three signed-in editors, and the routes. */
import { beforeEach } from 'bun:test'
import { asSession, expectOk, freshApiPerTest, newUser, signIn, type Api, type RequestOptions } from '../../helpers'

export const PASSWORD = 'Correct-horse-7'
export let api: Api
/** Session options of three editors: the author and two reviewers. */
export const people: { alice: RequestOptions; bob: RequestOptions; carol: RequestOptions } = {} as never

/** A fresh app for each test of the calling file, with alice, bob and carol signed in (call it at the top level). */
export function useFreshApi(): void {
  freshApiPerTest(fresh => (api = fresh))
  beforeEachPeople()
}

function beforeEachPeople() {
  beforeEach(async () => {
    for (const username of ['alice', 'bob', 'carol'] as const) {
      await newUser(api, { username, rootRole: 'Editor', password: PASSWORD })
      people[username] = asSession(await signIn(api, username, PASSWORD))
    }
  })
}

/** One change: flag `checkout` on in the request's environment. */
export const TURN_ON = { feature: 'checkout', action: 'updateEnabled', payload: { enabled: true } }

export const crBase = (project = 'default') => `/api/admin/projects/${project}/change-requests`
export const envBase = (environment = 'production', project = 'default') =>
  `/api/admin/projects/${project}/environments/${environment}/change-requests`

export interface RequestBody {
  id: number
  title: string
  state: string
  minApprovals: number
  createdBy: { id: number; username: string }
  features: { name: string; changes: { id: number; action: string; payload: unknown }[]; conflict?: string }[]
  segments: { id: number; changes: { id: number; action: string }[]; conflict?: string }[]
  approvals: { createdBy: { id: number; username: string } }[]
  rejections: unknown[]
  comments: { id: number; text: string }[]
  schedule?: { scheduledAt: string; status: string; failureReason?: string }
}

/** Puts `environment` of `project` under change requests needing `approvals`. */
export async function requireRequests(approvals = 1, environment = 'production', project = 'default') {
  expectOk(
    await api.put(`${envBase(environment, project)}/config`, {
      changeRequestsEnabled: true,
      requiredApprovals: approvals,
    }),
    204,
  )
}

export const add = (changes: unknown, as: RequestOptions, environment = 'production') =>
  api.post<RequestBody>(envBase(environment), changes, as)
export const setState = (id: number, body: Record<string, unknown>, as: RequestOptions) =>
  api.put<RequestBody>(`${crBase()}/${id}/state`, body, as)
export const getRequest = (id: number) => api.get<RequestBody>(`${crBase()}/${id}`)

/** A request by alice with `changes`, sent to review and approved by bob: its id. */
export async function approved(changes: unknown): Promise<number> {
  const created = await add(changes, people.alice)
  expectOk(created)
  const id = created.body.id
  expectOk(await setState(id, { state: 'In review' }, people.alice))
  expectOk(await setState(id, { state: 'Approved' }, people.bob))
  return id
}

export const enabledIn = async (flag: string, environment = 'production') => {
  const response = await api.getFlag('default', flag)
  return response.body.environments.find(e => e.name === environment)?.enabled
}

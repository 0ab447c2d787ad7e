import { freshApiPerTest, asSession, newUser as createUser, type Api } from '../../helpers'

export const ADMIN_PASSWORD = 'First-admin-pass-1'
export const PASSWORD = 'Correct-horse-7'

export let api: Api
/** A fresh app for each test of the calling file (call it at the file's top level). */
export function useFreshApi(): void {
  freshApiPerTest(fresh => (api = fresh))
}

export interface UserBody {
  id: number
  username: string | null
  email: string | null
  name: string | null
  rootRole: number
  isAPI: boolean
}

export function login(target: Api, username: string, password: string, headers: Record<string, string> = {}) {
  return target.post<UserBody>('/auth/simple/login', { username, password }, { token: null, headers })
}

export const as = asSession
export const newUser = (target: Api, body: Record<string, unknown>) => createUser<UserBody>(target, body)

/**
 * The console's one way to the service: the public admin API, with the session cookie. Errors
 * are the API's own (message, and the field a detail names), thrown as ApiError for the place the
 * user acted to show.
 */
export const BASE = document.documentElement.dataset.base ?? ''

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The JSON pointer of the field the first detail names (e.g. /name), if any. */
    readonly field?: string,
  ) {
    super(message)
  }
}

/** Called on a 401 from the admin API: the session is over, so the console shows the sign-in page. */
let onSignedOut: () => void = () => {}
export function whenSignedOut(handler: () => void) {
  onSignedOut = handler
}

export async function call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(BASE + path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  const parsed = text ? JSON.parse(text) : undefined
  if (!response.ok) {
    if (response.status === 401 && path.startsWith('/api/')) onSignedOut()
    const detail = parsed?.details?.[0]
    throw new ApiError(response.status, parsed?.message ?? `${response.status} ${response.statusText}`, detail?.path)
  }
  return parsed as T
}

export const get = <T>(path: string) => call<T>('GET', path)
export const enc = encodeURIComponent

export interface User {
  id: number
  username: string | null
  email: string | null
  name: string | null
  rootRole: number
  isAPI: boolean
}
export interface Project {
  id: string
  name: string
  description: string | null
  featureCount: number
  environments: string[]
}
export interface FlagEnvironment {
  name: string
  enabled: boolean
  /** The environment's type: "production" ones announce each switch with an undo. */
  type?: string
  strategies?: Strategy[]
  variants?: Variant[]
}
export interface Flag {
  name: string
  type: string
  description: string | null
  project: string
  stale: boolean
  impressionData: boolean
  lastSeenAt: string | null
  createdAt: string
  archived: boolean
  archivedAt?: string | null
  potentiallyStale?: boolean
  lifecycle?: { stage: string; enteredStageAt: string | null }
  environments: FlagEnvironment[]
  tags?: { type: string; value: string }[]
  dependencies?: { feature: string; enabled: boolean; variants: string[] }[]
  children?: string[]
}
export interface Constraint {
  contextName: string
  operator: string
  values?: string[]
  value?: string
  caseInsensitive?: boolean
  inverted?: boolean
}
export interface Strategy {
  id?: string
  name: string
  title?: string | null
  disabled?: boolean
  parameters: Record<string, string>
  constraints: Constraint[]
  segments?: number[]
  variants?: Variant[]
}
export interface Variant {
  name: string
  weight: number
  weightType: string
  stickiness: string
  payload?: { type: string; value: string }
}
export interface EventItem {
  id: number
  createdAt: string
  type: string
  createdBy: string
  project: string | null
  featureName: string | null
  environment: string | null
  data: unknown
  preData: unknown
}
export interface Token {
  tokenName: string
  type: string
  role: string
  projects: string[]
  environment: string
  createdAt: string
  expiresAt?: string | null
}

export const ROLES: Record<number, string> = { 1: 'Admin', 2: 'Editor', 3: 'Viewer' }

export interface Segment {
  id: number
  name: string
  description: string | null
  project: string | null
  constraints: Constraint[]
}
export interface StrategyType {
  name: string
  displayName: string | null
  description: string | null
  editable: boolean
  deprecated: boolean
  parameters: { name: string; type: string; description: string | null; required: boolean }[]
}
export interface TagType {
  name: string
  description: string | null
}

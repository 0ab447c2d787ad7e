import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { AuthenticationRequired, NameExistsError, NotFoundError, ValidationError } from '../../errors'
import type { ApiTokenRecord, TokenRole, TokenType } from '../../storage/records'
import { SYSTEM_ACTOR, type Store } from '../../storage/store'
import { actorOf, type Caller } from './permissions'

/** Unleash gives its bootstrap admin tokens this user id; we do the same. */
export const BOOTSTRAP_USER_ID = -42

export interface CreateTokenInput {
  tokenName: string
  type: string
  role?: TokenRole
  projects?: string[]
  project?: string
  environment?: string
  expiresAt?: string
}

export interface TokenView {
  tokenName: string
  type: TokenType
  role: TokenRole
  projects: string[]
  environment: string
  createdAt: string
  expiresAt: string | null
}

function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

function viewOf(token: ApiTokenRecord): TokenView {
  return {
    tokenName: token.tokenName,
    type: token.type,
    role: token.role,
    projects: [...token.projects],
    environment: token.environment,
    createdAt: token.createdAt,
    expiresAt: token.expiresAt,
  }
}

export class TokensService {
  constructor(private readonly store: Pick<Store, 'state' | 'transact'>) {}

  /**
   * Finds the token behind an `Authorization` header value. Hashes are compared in constant time;
   * tokens are few, so every one is compared and the time does not depend on which matched.
   */
  authenticate(header: string | null | undefined, now = Date.now()): { caller: Caller; type: TokenType } {
    if (header === null || header === undefined || header.trim() === '') {
      throw new AuthenticationRequired('You must send an API token in the Authorization header')
    }
    const secret = header.trim().replace(/^bearer\s+/i, '')
    const hash = Buffer.from(hashSecret(secret), 'hex')
    let match: ApiTokenRecord | undefined
    for (const token of Object.values(this.store.state.tokens)) {
      if (timingSafeEqual(hash, Buffer.from(token.secretHash, 'hex'))) match = token
    }
    if (!match) throw new AuthenticationRequired('The API token is not valid: it is unknown or was deleted')
    if (match.expiresAt !== null && Date.parse(match.expiresAt) <= now) {
      throw new AuthenticationRequired(`The API token "${match.tokenName}" expired at ${match.expiresAt}`)
    }
    return {
      type: match.type,
      caller: { tokenName: match.tokenName, userId: match.userId, role: match.role, projects: match.projects },
    }
  }

  list(): TokenView[] {
    return Object.values(this.store.state.tokens)
      .map(viewOf)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.tokenName.localeCompare(b.tokenName))
  }

  async create(input: CreateTokenInput, caller: Caller): Promise<TokenView & { secret: string }> {
    const type = input.type.toLowerCase() as TokenType
    if (!['admin', 'client', 'frontend'].includes(type)) {
      throw new ValidationError(`Token type must be admin, client or frontend, got "${input.type}"`, [
        { message: 'unknown token type', path: '/type' },
      ])
    }
    if (input.expiresAt !== undefined && !(Date.parse(input.expiresAt) > Date.now())) {
      throw new ValidationError('expiresAt must be a date-time in the future', [{ message: 'not in the future', path: '/expiresAt' }])
    }
    const projects = input.projects ?? (input.project !== undefined ? [input.project] : ['*'])
    if (projects.length === 0) throw new ValidationError('A token needs at least one project, or "*"', [{ message: 'empty', path: '/projects' }])
    const environment = type === 'admin' ? '*' : (input.environment ?? 'development')
    // An SDK token's secret and scope name one environment (contract §3); "*" is the admin tokens' mark.
    if (type !== 'admin' && environment === '*') {
      throw new ValidationError(`A ${type} token must name one existing environment, not "*"`, [{ message: 'not one environment', path: '/environment' }])
    }
    const random = randomBytes(32).toString('hex')
    const prefix =
      type === 'admin' ? '*:*' : `${projects.includes('*') ? '*' : projects.length === 1 ? projects[0] : '[]'}:${environment}`
    const secret = `${prefix}.${random}`

    const record = await this.store.transact(actorOf(caller), (tx) => {
      if (tx.get('tokens', input.tokenName)) throw new NameExistsError(`A token named "${input.tokenName}" already exists`)
      for (const project of projects) {
        if (project !== '*' && !tx.get('projects', project)) {
          throw new ValidationError(`Project "${project}" does not exist`, [{ message: 'unknown project', path: '/projects' }])
        }
      }
      if (environment !== '*' && !tx.get('environments', environment)) {
        throw new ValidationError(`Environment "${environment}" does not exist`, [{ message: 'unknown environment', path: '/environment' }])
      }
      const token: ApiTokenRecord = {
        tokenName: input.tokenName,
        type,
        role: type === 'admin' ? (input.role ?? 'admin') : 'viewer',
        projects: [...new Set(projects)],
        environment,
        secretHash: hashSecret(secret),
        prefix,
        userId: tx.allocateUserId(),
        createdAt: tx.now,
        expiresAt: input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
      }
      tx.put('tokens', token.tokenName, token)
      tx.appendEvent({ type: 'api-token-created', data: viewOf(token) })
      return token
    })
    return { ...viewOf(record), secret }
  }

  async delete(tokenName: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), (tx) => {
      const token = tx.get('tokens', tokenName)
      if (!token) throw new NotFoundError(`No token named "${tokenName}"`)
      tx.delete('tokens', tokenName)
      tx.appendEvent({ type: 'api-token-deleted', preData: viewOf(token) })
    })
  }

  /**
   * Makes the `INIT_ADMIN_API_TOKENS` secrets exist. With none given and no admin token able to
   * manage the service, creates one and returns its secret (to be printed once).
   */
  async bootstrap(initSecrets: readonly string[]): Promise<string | null> {
    const missing = initSecrets.filter((secret) => {
      const hash = hashSecret(secret)
      return !Object.values(this.store.state.tokens).some((token) => token.secretHash === hash)
    })
    const hasManager = Object.values(this.store.state.tokens).some(
      (token) => token.type === 'admin' && token.role === 'admin' && token.projects.includes('*') && token.expiresAt === null,
    )
    const generated = initSecrets.length === 0 && !hasManager ? `*:*.${randomBytes(32).toString('hex')}` : null
    const toCreate = generated ? [generated] : [...new Set(missing)]
    if (toCreate.length === 0) return null
    await this.store.transact(SYSTEM_ACTOR, (tx) => {
      for (const secret of toCreate) {
        let tokenName = 'admin-bootstrap'
        for (let n = 2; tx.get('tokens', tokenName); n++) tokenName = `admin-bootstrap-${n}`
        const token: ApiTokenRecord = {
          tokenName,
          type: 'admin',
          role: 'admin',
          projects: ['*'],
          environment: '*',
          secretHash: hashSecret(secret),
          prefix: '*:*',
          userId: BOOTSTRAP_USER_ID,
          createdAt: tx.now,
          expiresAt: null,
        }
        tx.put('tokens', tokenName, token)
        tx.appendEvent({ type: 'api-token-created', data: viewOf(token) })
      }
    })
    return generated
  }
}

import { randomBytes } from 'node:crypto'
import { AuthenticationRequired, NameExistsError, NotFoundError, ValidationError } from '../../errors'
import { tokenExpired, type ApiTokenRecord, type TokenRole, type TokenType } from './tokens.records'
import { events, SYSTEM_ACTOR } from '../../domain/events'
import type { StateReader, Store } from '../../storage/store'
import { checkLimit, RecordCount } from '../limits'
import { nameProblem, withArticle } from '../names'
import { actorOf, type Caller, type Credential, type Identity } from './permissions'
import type { Static } from '@sinclair/typebox'
import type { CreateToken, Token } from './tokens.model'
import { SecretHasher } from './secret-hash'

/** Unleash gives its bootstrap admin tokens this user id; we do the same. */
export const BOOTSTRAP_USER_ID = -42
/** The admin tokens made at start are named this, then `admin-bootstrap-2`, `-3` … when taken. */
export const BOOTSTRAP_TOKEN_NAME = 'admin-bootstrap'

/**
 * Returns what is wrong with a name for a new token, or null. The flag and project name rules
 * apply, so every name can be put in the path of `DELETE /api/admin/api-tokens/:tokenName`. A
 * token's name is the `createdBy` of its events, so the names the service writes itself are
 * reserved, in any case: `system` (start-up seeding) and the bootstrap tokens' names; so are
 * integers, which event search's createdBy filter would also match as user ids (-42, -1337 …).
 */
export function tokenNameProblem(name: string): string | null {
  const problem = nameProblem(name, 'token')
  if (problem) return problem
  const lower = name.toLowerCase()
  if (lower === SYSTEM_ACTOR.name || lower === BOOTSTRAP_TOKEN_NAME || lower.startsWith(`${BOOTSTRAP_TOKEN_NAME}-`)) {
    return `The token name "${name}" is reserved: the service records its own changes under "${SYSTEM_ACTOR.name}" and "${BOOTSTRAP_TOKEN_NAME}…"`
  }
  if (/^-?\d+$/.test(name))
    return `A token name must not be a number, which event search would take for a user id, got "${name}"`
  return null
}

export type CreateTokenInput = Static<typeof CreateToken>

/** tokenName, or `username`, its name in older Unleash versions, which scripts still send. */
function tokenNameOf(input: CreateTokenInput): string {
  const { tokenName, username } = input
  if (tokenName !== undefined && username !== undefined && tokenName !== username) {
    throw ValidationError.at(
      '/username',
      'username is the older name of tokenName; give one of them, or both with the same value',
    )
  }
  const name = tokenName ?? username
  if (name === undefined) throw ValidationError.at('/tokenName', 'tokenName is required')
  return name
}

/** projects, or `project`, Unleash's single-project shorthand: as in Unleash, one or the other. */
function projectsOf(input: CreateTokenInput): string[] | undefined {
  const { projects, project } = input
  if (project === undefined) return projects
  if (projects !== undefined && !(projects.length === 1 && projects[0] === project)) {
    throw ValidationError.at('/project', 'project is a shorthand for projects; give one of them, not both')
  }
  return [project]
}
export type TokenView = Static<typeof Token>

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

/** A token as a caller's credential: its name and the secret's hash it was found by. */
class TokenCredential implements Credential {
  constructor(
    private readonly tokenName: string,
    private readonly matched: string,
    /** The keyed hash, which replaces an old-format `matched` meanwhile (`TokensService.upgrade`). */
    private readonly keyed: string,
  ) {}

  check(state: StateReader, now: number): TokenRole {
    const token = state.get('tokens', this.tokenName)
    if (!token || (token.secretHash !== this.matched && token.secretHash !== this.keyed)) {
      throw new AuthenticationRequired(`The API token "${this.tokenName}" was deleted before the write was applied`)
    }
    if (tokenExpired(token, now))
      throw new AuthenticationRequired(`The API token "${this.tokenName}" expired at ${token.expiresAt}`)
    return token.role
  }
}

/** How many verified header values TokensService keeps (a service has a few SDK tokens in use, seldom more). */
const VERIFIED_MAX = 1024

export class TokensService {
  /**
   * Token names by secret hash, kept from the store's record changes (a set, should a hand-made state
   * give two tokens one secret), so a request costs one lookup however many tokens there are.
   */
  private readonly byHash = new Map<string, Set<string>>()
  private readonly count: RecordCount
  private readonly hasher: SecretHasher
  /** Tokens still stored under the unkeyed hash of older versions: while there are any, a miss tries that too. */
  private legacyCount = 0
  /** Tokens whose stored hash is being replaced by the keyed one, so that a burst of requests commits it once. */
  private readonly upgrading = new Set<string>()
  /**
   * Header values already verified, with the token record they matched: a header seen again skips
   * the keyed hash (the HMAC) while that very record is still the stored one. Any change to the
   * tokens (deleted, expired set, rotated) empties it, and each use still compares the record and
   * checks the expiry, so a revocation applies to the next request as before. Only matches are
   * kept, at most VERIFIED_MAX, so unknown secrets cannot grow it.
   */
  private readonly verified = new Map<string, { record: ApiTokenRecord; keyed: string }>()

  constructor(private readonly store: Pick<Store, 'state' | 'reader' | 'transact' | 'watch' | 'secretKey'>) {
    this.hasher = new SecretHasher(store.secretKey)
    store.watch('tokens', (key, before, after) => {
      this.verified.clear()
      if (before) {
        const names = this.byHash.get(before.secretHash)
        names?.delete(key)
        if (names?.size === 0) this.byHash.delete(before.secretHash)
        if (SecretHasher.isLegacy(before.secretHash)) this.legacyCount--
      }
      if (after) {
        let names = this.byHash.get(after.secretHash)
        if (!names) this.byHash.set(after.secretHash, (names = new Set()))
        names.add(key)
        if (SecretHasher.isLegacy(after.secretHash)) this.legacyCount++
      }
    })
    this.count = new RecordCount(store, 'tokens')
  }

  /** The token stored under `hash`, if its record still holds it (compared in constant time). */
  private tokenByHash(hash: string): ApiTokenRecord | undefined {
    const name = this.byHash.get(hash)?.values().next().value
    const candidate = name === undefined ? undefined : this.store.reader.get('tokens', name)
    return candidate && SecretHasher.same(candidate.secretHash, hash) ? candidate : undefined
  }

  /**
   * Replaces a token's unkeyed hash by the keyed one, in the background: the request that presented
   * the secret does not wait for it. A token deleted or changed meanwhile is left as it is.
   */
  private upgrade(tokenName: string, legacy: string, keyed: string): void {
    if (this.upgrading.has(tokenName)) return
    this.upgrading.add(tokenName)
    this.store
      .transact(SYSTEM_ACTOR, tx => {
        const token = tx.get('tokens', tokenName)
        if (token?.secretHash === legacy) tx.put('tokens', tokenName, { ...token, secretHash: keyed })
      })
      // A failed commit (a full disk) leaves the old hash, which still matches: the next use tries again.
      .catch(() => {})
      .finally(() => this.upgrading.delete(tokenName))
  }

  /**
   * Finds the token behind an `Authorization` header value. The lookup is by the keyed hash of the
   * secret, so its timing can tell at most something about a hash, which does not lead back to a
   * secret; the one candidate's hash is then compared in constant time. A token of an older data
   * directory, found by the unkeyed hash, gets the keyed one stored.
   */
  authenticate(
    header: string | null | undefined,
    now = Date.now(),
  ): { caller: Identity; type: TokenType; environment: string } {
    if (header === null || header === undefined || header.trim() === '') {
      throw new AuthenticationRequired('You must send an API token in the Authorization header, or sign in')
    }
    const seen = this.verified.get(header)
    if (seen !== undefined && this.store.reader.get('tokens', seen.record.tokenName) === seen.record)
      return this.verdict(seen.record, seen.keyed, now)
    const secret = header.trim().replace(/^bearer\s+/i, '')
    const keyed = this.hasher.hash(secret)
    let match = this.tokenByHash(keyed)
    if (match) {
      if (this.verified.size >= VERIFIED_MAX) this.verified.clear()
      this.verified.set(header, { record: match, keyed })
    } else if (this.legacyCount > 0) {
      const legacy = SecretHasher.legacy(secret)
      match = this.tokenByHash(legacy)
      if (match) this.upgrade(match.tokenName, legacy, keyed)
    }
    if (!match) throw new AuthenticationRequired('The API token is not valid: it is unknown or was deleted')
    return this.verdict(match, keyed, now)
  }

  private verdict(
    match: ApiTokenRecord,
    keyed: string,
    now: number,
  ): { caller: Identity; type: TokenType; environment: string } {
    if (tokenExpired(match, now)) {
      throw new AuthenticationRequired(`The API token "${match.tokenName}" expired at ${match.expiresAt}`)
    }
    return {
      type: match.type,
      environment: match.environment,
      caller: {
        tokenName: match.tokenName,
        kind: 'token',
        userId: match.userId,
        role: match.role,
        projects: match.projects,
        credential: new TokenCredential(match.tokenName, match.secretHash, keyed),
      },
    }
  }

  list(): TokenView[] {
    return Object.values(this.store.state.tokens)
      .map(viewOf)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.tokenName.localeCompare(b.tokenName))
  }

  async create(body: CreateTokenInput, caller: Caller): Promise<TokenView & { secret: string }> {
    const input = { ...body, tokenName: tokenNameOf(body), projects: projectsOf(body) }
    const nameIssue = tokenNameProblem(input.tokenName)
    if (nameIssue) throw ValidationError.at('/tokenName', nameIssue)
    const type = input.type.toLowerCase() as TokenType
    if (!['admin', 'client', 'frontend'].includes(type)) {
      throw new ValidationError(`Token type must be admin, client or frontend, got "${input.type}"`, [
        { message: `must be admin, client or frontend, got ${JSON.stringify(input.type)}`, path: '/type' },
      ])
    }
    if (input.expiresAt !== undefined && !(Date.parse(input.expiresAt) > Date.now())) {
      throw new ValidationError('expiresAt must be a date-time in the future', [
        { message: 'must be a date and time in the future', path: '/expiresAt' },
      ])
    }
    const projects = input.projects ?? ['*']
    if (projects.length === 0)
      throw new ValidationError('A token needs at least one project, or "*"', [
        { message: 'must name at least one project, or "*"', path: '/projects' },
      ])
    const environment = type === 'admin' ? '*' : (input.environment ?? 'development')
    // An SDK token's secret and scope name one environment (contract §3); "*" is the admin tokens' mark.
    if (type !== 'admin' && environment === '*') {
      throw new ValidationError(`${withArticle(type, true)} token must name one existing environment, not "*"`, [
        { message: 'must name one existing environment, not "*"', path: '/environment' },
      ])
    }
    const random = randomBytes(32).toString('hex')
    const prefix =
      type === 'admin'
        ? '*:*'
        : `${projects.includes('*') ? '*' : projects.length === 1 ? projects[0] : '[]'}:${environment}`
    const secret = `${prefix}.${random}`

    const record = await this.store.transact(actorOf(caller), tx => {
      if (tx.get('tokens', input.tokenName))
        throw new NameExistsError(`A token named "${input.tokenName}" already exists`)
      checkLimit('apiTokens', this.count.in(tx) + 1, '/tokenName')
      for (const [index, project] of projects.entries()) {
        if (project !== '*' && !tx.get('projects', project)) {
          throw new ValidationError(`Project "${project}" does not exist`, [
            { message: `names project ${JSON.stringify(project)}, which does not exist`, path: `/projects/${index}` },
          ])
        }
      }
      if (environment !== '*' && !tx.get('environments', environment)) {
        throw new ValidationError(`Environment "${environment}" does not exist`, [
          { message: `names environment ${JSON.stringify(environment)}, which does not exist`, path: '/environment' },
        ])
      }
      const token: ApiTokenRecord = {
        tokenName: input.tokenName,
        type,
        role: type === 'admin' ? (input.role ?? 'admin') : 'viewer',
        projects: [...new Set(projects)],
        environment,
        secretHash: this.hasher.hash(secret),
        prefix,
        userId: tx.allocateUserId(),
        createdAt: tx.now,
        expiresAt: input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
      }
      tx.put('tokens', token.tokenName, token)
      tx.appendEvent(events.tokenCreated(viewOf(token)))
      return token
    })
    return { ...viewOf(record), secret }
  }

  /**
   * No name rules here: a token stored under a name the rules now refuse (made by an earlier
   * version) can still be deleted, as long as its name can be put in a URL path.
   */
  async delete(tokenName: string, caller: Caller): Promise<void> {
    await this.store.transact(actorOf(caller), tx => {
      const token = tx.get('tokens', tokenName)
      if (!token) throw new NotFoundError(`No token named "${tokenName}"`)
      tx.delete('tokens', tokenName)
      tx.appendEvent(events.tokenDeleted(viewOf(token)))
    })
  }

  /**
   * Makes the `INIT_ADMIN_API_TOKENS` secrets exist. With none given and no admin token able to
   * manage the service, creates one and returns its secret (to be printed once).
   */
  async bootstrap(initSecrets: readonly string[]): Promise<string | null> {
    // Configured secrets are not held to the apiTokens limit: a start must not fail on it.
    const missing = initSecrets.filter(
      secret => !this.byHash.has(this.hasher.hash(secret)) && !this.byHash.has(SecretHasher.legacy(secret)),
    )
    // Configured secrets are the ones chosen by hand, short perhaps: their unkeyed hashes are replaced at once.
    const unkeyed = [...new Set(initSecrets)].flatMap(secret => {
      const legacy = SecretHasher.legacy(secret)
      return [...(this.byHash.get(legacy) ?? [])].map(tokenName => ({
        tokenName,
        legacy,
        keyed: this.hasher.hash(secret),
      }))
    })
    const isManager = (token: ApiTokenRecord) =>
      token.type === 'admin' && token.role === 'admin' && token.projects.includes('*') && token.expiresAt === null
    const hasManager = Object.values(this.store.state.tokens).some(isManager)
    const generated = initSecrets.length === 0 && !hasManager ? `*:*.${randomBytes(32).toString('hex')}` : null
    const toCreate = generated ? [generated] : [...new Set(missing)]
    if (toCreate.length === 0 && unkeyed.length === 0) return null
    return this.store.transact(SYSTEM_ACTOR, tx => {
      for (const { tokenName, legacy, keyed } of unkeyed) {
        const token = tx.get('tokens', tokenName)
        if (token?.secretHash === legacy) tx.put('tokens', tokenName, { ...token, secretHash: keyed })
      }
      // Checked again on the state the write is applied to: another instance starting on the same
      // database may have made these tokens (or a manager) since the check above.
      const tokens = tx.values('tokens')
      if (generated && tokens.some(isManager)) return null
      const hashes = new Set(tokens.map(token => token.secretHash))
      for (const secret of toCreate) {
        if (hashes.has(this.hasher.hash(secret)) || hashes.has(SecretHasher.legacy(secret))) continue
        let tokenName = BOOTSTRAP_TOKEN_NAME
        for (let n = 2; tx.get('tokens', tokenName); n++) tokenName = `${BOOTSTRAP_TOKEN_NAME}-${n}`
        const token: ApiTokenRecord = {
          tokenName,
          type: 'admin',
          role: 'admin',
          projects: ['*'],
          environment: '*',
          secretHash: this.hasher.hash(secret),
          prefix: '*:*',
          userId: BOOTSTRAP_USER_ID,
          createdAt: tx.now,
          expiresAt: null,
        }
        tx.put('tokens', tokenName, token)
        tx.appendEvent(events.tokenCreated(viewOf(token)))
      }
      return generated
    })
  }
}

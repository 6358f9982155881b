import { sha256Hex } from '../lib/sha256-hex.js'
import type { Config } from '../config.js'
import { InvalidRequestError, NotFoundError } from '../errors.js'
import type { AccountsRepository } from '../db/repositories/accounts-repository.js'
import type { ApiKeysRepository } from '../db/repositories/api-keys-repository.js'
import type { AccountRow, ApiKeyRow } from '../db/schema.js'
import { effectiveLimits, type AccountLimits } from './account-limits.js'
import { randomToken } from '../lib/random-token.js'
import { addressChecker, allowedIpList, scopeChecker, storedAllowedIps, storedScopes, type Scope } from './key-policy.js'
import { OPERATOR_ACTOR, type Actor, type AuditLogService, type AuditTrail } from './audit.js'

export const KEY_PREFIX = 'fsk_'
// fsk_ + 32 random bytes (256 bits) in base64url.
const KEY_PATTERN = /^fsk_[A-Za-z0-9_-]{43}$/
const SHOWN_PREFIX_LENGTH = KEY_PREFIX.length + 6
const LAST_USED_RESOLUTION_MS = 60_000
const CACHE_MAX_ENTRIES = 10_000

/** The name a key gets when none is given. */
export const DEFAULT_KEY_NAME = 'default'
/** The longest key name, in characters (Unicode code points), after trimming. */
export const KEY_NAME_MAX_LENGTH = 100
/** C0 controls (tab and newline among them), DEL and C1 controls: a name is one line of text. */
const CONTROL_CHARACTER = /\p{Cc}/u

/** A key name that breaks the rule of keyName(). */
export class InvalidKeyNameError extends InvalidRequestError {}

/**
 * The one rule for key names, wherever keys are created (the CLI, the dashboard): no control
 * character (C0, DEL, C1: no newline, tab or escape), then trimmed of surrounding white space,
 * 1 to KEY_NAME_MAX_LENGTH characters. No name at all is DEFAULT_KEY_NAME; an empty one is refused.
 */
export function keyName(name: string | undefined): string {
  if (name === undefined) return DEFAULT_KEY_NAME
  if (CONTROL_CHARACTER.test(name)) {
    throw new InvalidKeyNameError('The key name must not contain control characters (such as a newline, tab or escape).')
  }
  const trimmed = name.trim()
  if (trimmed === '') throw new InvalidKeyNameError('The key name must contain a character other than spaces.')
  const length = [...trimmed].length
  if (length > KEY_NAME_MAX_LENGTH) {
    throw new InvalidKeyNameError(`The key name must be at most ${KEY_NAME_MAX_LENGTH} characters, got ${length}.`)
  }
  return trimmed
}

/**
 * The caller behind a valid key, a dashboard session (keyId 0, every scope, any address), or a guest
 * of an upload request (keyId 0, no scope: only the tus routes that take guests let one in).
 */
export interface Principal {
  keyId: number
  account: AccountRow
  limits: AccountLimits
  /** Who this caller's changes are by in the audit log (the address is the request's). */
  actor: Pick<Actor, 'type' | 'id' | 'name'>
  /** The key's record as GET /key shows it; absent for a dashboard session. */
  key?: ApiKey
  /** Whether the key holds a scope. */
  allows: (scope: Scope) => boolean
  /** Whether the key may be used from a client address. */
  allowsAddress: (clientAddress: string) => boolean
  /** A guest's upload request: its uploads reserve the request's room, and its rate limits are its address's. */
  uploadRequest?: { id: number; fileExpiresIn: number | null }
}

/** The options of a new key: its scopes (all when absent), addresses (anywhere when absent) and expiry. */
export interface KeyOptions {
  expiresAt?: number
  /** From now, by the service's clock (the dashboard's and the CLI's relative expiry). */
  expiresInMs?: number
  scopes?: readonly string[]
  allowedIps?: readonly string[]
}

interface CacheEntry {
  principal: Principal
  /** When this cache entry goes stale, or the key itself expires, whichever is first. */
  validUntil: number
}

/** A key as anyone may see it: everything but its hash. */
export type ApiKey = Omit<ApiKeyRow, 'key_hash'>

function withoutHash(row: ApiKeyRow): ApiKey {
  const { key_hash: _hash, ...key } = row
  return key
}

export class ApiKeyService {
  // Positive answers only, so that a new key works at once and random keys cannot fill memory.
  private readonly cache = new Map<string, CacheEntry>()
  private readonly lastTouched = new Map<number, number>()
  private readonly expiredUseRecorded = new Map<number, number>()

  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly accounts: AccountsRepository,
    private readonly config: Pick<Config, 'plans' | 'cacheTtlMs'>,
    private readonly trail: AuditTrail,
    private readonly auditLog: AuditLogService,
    private readonly onBackgroundError: (error: unknown) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Creates a key; the whole key is returned only here and only its hash is stored. The name
   * follows keyName()'s rule (InvalidKeyNameError otherwise); none at all is DEFAULT_KEY_NAME.
   * Scopes and addresses follow key-policy.ts (InvalidKeyPolicyError otherwise).
   */
  async create(accountId: number, name?: string, options: KeyOptions = {}, actor: Actor = OPERATOR_ACTOR) {
    const checkedName = keyName(name)
    const scopes = storedScopes(options.scopes)
    const allowedIps = storedAllowedIps(options.allowedIps)
    if (!(await this.accounts.findById(accountId))) throw new NotFoundError(`No account with id ${accountId}.`)
    const apiKey = KEY_PREFIX + randomToken(32)
    const row = await this.keys.create(
      {
        account_id: accountId,
        name: checkedName,
        prefix: apiKey.slice(0, SHOWN_PREFIX_LENGTH),
        // A fast hash is enough: the key carries 256 random bits (passwords, which do not, use scrypt).
        key_hash: sha256Hex(apiKey),
        created_at: this.now(),
        expires_at: options.expiresAt ?? (options.expiresInMs === undefined ? null : this.now() + options.expiresInMs),
        scopes,
        allowed_ips: allowedIps,
      },
      this.trail.pending('key.created', actor, (key: ApiKeyRow) => ({
        accountId,
        target: { type: 'key', id: key.id },
        details: {
          name: key.name,
          prefix: key.prefix,
          scopes: key.scopes.split(' '),
          allowed_ips: allowedIpList(key.allowed_ips),
          expires_at: key.expires_at,
        },
      })),
    )
    return { key: withoutHash(row), apiKey }
  }

  async list(accountId: number): Promise<ApiKey[]> {
    if (!(await this.accounts.findById(accountId))) throw new NotFoundError(`No account with id ${accountId}.`)
    return (await this.keys.listForAccount(accountId)).map(withoutHash)
  }

  async revoke(keyId: number, actor: Actor = OPERATOR_ACTOR): Promise<ApiKey> {
    const row = (await this.keys.revoke(keyId, this.now(), undefined, this.revokedEvent(actor))) ?? (await this.keys.findById(keyId))
    if (!row) throw new NotFoundError(`No API key with id ${keyId}.`)
    this.forget(keyId)
    return withoutHash(row)
  }

  /** Revokes a key of this account (the dashboard); another account's key is a 404, as if it did not exist. */
  async revokeForAccount(accountId: number, keyId: number, actor: Actor): Promise<ApiKey> {
    const row = (await this.keys.revoke(keyId, this.now(), accountId, this.revokedEvent(actor))) ?? (await this.keys.findById(keyId))
    if (!row || row.account_id !== accountId) throw new NotFoundError(`No API key with id ${keyId}.`)
    this.forget(keyId)
    return withoutHash(row)
  }

  private revokedEvent(actor: Actor) {
    return this.trail.pending('key.revoked', actor, (key: ApiKeyRow) => ({
      accountId: key.account_id,
      target: { type: 'key', id: key.id },
      details: { name: key.name, prefix: key.prefix },
    }))
  }

  /** Drops the key from this process's cache, so that it stops working here at once (elsewhere within cacheTtlMs). */
  private forget(keyId: number): void {
    for (const [hash, entry] of this.cache) if (entry.principal.keyId === keyId) this.cache.delete(hash)
  }

  /**
   * authenticate()'s answer when it is in the cache, without a promise (every API call asks);
   * undefined means "ask authenticate()", not "invalid".
   */
  cached(apiKey: string, now = this.now()): Principal | undefined {
    if (this.cache.size === 0 || !KEY_PATTERN.test(apiKey)) return undefined
    return this.fromCache(sha256Hex(apiKey), now)
  }

  /** What a key is stored and cached under (its SHA-256), or undefined for a string that is no key. */
  hashOf(apiKey: string): string | undefined {
    return KEY_PATTERN.test(apiKey) ? sha256Hex(apiKey) : undefined
  }

  /** cached(), for a key whose hash the caller has already (hashOf). */
  cachedByHash(hash: string, now = this.now()): Principal | undefined {
    return this.cache.size === 0 ? undefined : this.fromCache(hash, now)
  }

  /** The cached principal of a key's hash while its entry is still valid. */
  private fromCache(hash: string, now: number): Principal | undefined {
    const entry = this.cache.get(hash)
    return entry && entry.validUntil > now ? entry.principal : undefined
  }

  /**
   * The principal behind `apiKey`, or undefined when the key is malformed, unknown, revoked or
   * expired. Lookups go by hash, so timing depends on the hash, never on the secret's bytes.
   * Answers are cached for at most `cacheTtlMs`, the bound on how late a revocation takes effect.
   */
  async authenticate(apiKey: string, now = this.now(), from: Pick<Actor, 'ip' | 'userAgent'> = {}): Promise<Principal | undefined> {
    if (!KEY_PATTERN.test(apiKey)) return undefined
    const hash = sha256Hex(apiKey)
    const cached = this.fromCache(hash, now)
    if (cached) return cached
    this.cache.delete(hash)

    const found = await this.keys.findByHash(hash)
    if (!found || found.key.revoked_at !== null) return undefined
    if (found.key.expires_at !== null && found.key.expires_at <= now) {
      this.recordExpiredUse(found.key, now, from)
      return undefined
    }
    const principal: Principal = {
      keyId: found.key.id,
      account: found.account,
      limits: effectiveLimits(found.account, this.config.plans),
      actor: { type: 'key', id: found.key.id, name: found.key.name },
      key: withoutHash(found.key),
      allows: scopeChecker(found.key.scopes),
      allowsAddress: addressChecker(found.key.allowed_ips),
    }
    if (this.config.cacheTtlMs > 0) {
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!)
      const validUntil = Math.min(now + this.config.cacheTtlMs, found.key.expires_at ?? Infinity)
      this.cache.set(hash, { principal, validUntil })
    }
    return principal
  }

  /**
   * Tells the holder that something still uses an expired key: at most once a minute per key (a
   * forgotten job would otherwise write an event per request), and not awaited (the answer is a
   * 401 whatever happens to the event).
   */
  private recordExpiredUse(key: ApiKeyRow, now: number, from: Pick<Actor, 'ip' | 'userAgent'>): void {
    if (now - (this.expiredUseRecorded.get(key.id) ?? -Infinity) < LAST_USED_RESOLUTION_MS) return
    if (this.expiredUseRecorded.size >= CACHE_MAX_ENTRIES) this.expiredUseRecorded.clear()
    this.expiredUseRecorded.set(key.id, now)
    this.auditLog
      .record(
        'key.expired_use',
        { type: 'key', id: key.id, name: key.name, ...from },
        {
          accountId: key.account_id,
          target: { type: 'key', id: key.id },
          details: { name: key.name, prefix: key.prefix },
        },
      )
      .catch(this.onBackgroundError)
  }

  /**
   * Records an admitted call (the address checked): last use is kept to the minute, so a busy key
   * costs one write a minute, not one per request.
   */
  recordUse(principal: Principal, clientAddress: string, now = this.now()): void {
    const key = principal.key
    if (key === undefined) return
    const last = Math.max(key.last_used_at ?? 0, this.lastTouched.get(key.id) ?? 0)
    if (now - last < LAST_USED_RESOLUTION_MS) return
    this.lastTouched.set(key.id, now)
    // As much of the address as the audit log keeps (FILESHARE_AUDIT_IP).
    this.keys.touch(key.id, now, this.trail.address(clientAddress)).catch(this.onBackgroundError)
  }
}

import { AuditTrail, auditAddress, OPERATOR_ACTOR, type Actor, type EventContent } from './audit.js'
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Config } from '../config.js'
import type { SessionsRepository } from '../db/repositories/sessions-repository.js'
import type { AccountRow, SessionRow } from '../db/schema.js'
import { effectiveLimits, type AccountLimits } from './account-limits.js'
import { sha256Hex } from '../lib/sha256-hex.js'
import { randomToken } from '../lib/random-token.js'
import { NotFoundError } from '../errors.js'
import { describeDevice } from './user-agent-device.js'

/** A session lasts this long from sign-in, used or not; then the holder signs in again. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000
/** A session's last use is recorded at most this often (one write a minute, not one per request). */
const TOUCH_EVERY_MS = 60_000
/** ...and at least ten times per idle timeout, so that a session in use never looks idle. */
const TOUCHES_PER_IDLE_TIMEOUT = 10
const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/

export interface SignedIn {
  account: AccountRow
  limits: AccountLimits
  expiresAt: number
  /** Whether the account has a second factor (FILESHARE_REQUIRE_TWO_FACTOR keeps a holder without one to enrolling). */
  twoFactor: boolean
}

/** A session as the Settings page lists it: never its token or its hash. */
export interface SessionView {
  id: number
  createdAt: number
  lastSeenAt: number
  /** "Firefox on Windows", from the User-Agent at sign-in; null when unknown (a session older than migration 014). */
  device: string | null
  /** The address at sign-in as FILESHARE_AUDIT_IP keeps it; null with `off` or when unknown. */
  ip: string | null
  /** The session of the request that asks. */
  current: boolean
}

/** What a session keeps of its user agent: as much as the audit log keeps. */
const USER_AGENT_MAX_LENGTH = 200

/**
 * Dashboard sessions. The session id (256 random bits) lives only in the holder's cookie; the
 * database keeps its SHA-256, so a copy of the database signs no one in. Ids are only ever made
 * here, at sign-in: an id the server did not issue is never adopted (no session fixation).
 */
/** A session's events name its account and its row id, never its token. */
function sessionEvent(session: SessionRow): EventContent {
  return { accountId: session.account_id, target: { type: 'session', id: session.id } }
}

export class SessionService {
  constructor(
    private readonly sessions: SessionsRepository,
    private readonly config: Pick<Config, 'plans' | 'sessionIdleTimeoutMs'> & Partial<Pick<Config, 'auditIp'>>,
    private readonly now: () => number = Date.now,
    private readonly trail: AuditTrail = new AuditTrail({ auditIp: 'truncated' }, now),
  ) {}

  /** A new session for the account; `replaces` (the id the browser sent, if any) ends. */
  async create(
    accountId: number,
    replaces?: string,
    now = this.now(),
    from: Pick<Actor, 'ip' | 'userAgent' | 'name'> = {},
  ): Promise<{ sessionId: string; expiresAt: number }> {
    if (replaces) await this.end(replaces)
    await this.sessions.deleteExpired(now, this.idleSince(now))
    const sessionId = randomToken(32)
    const expiresAt = now + SESSION_TTL_MS
    await this.sessions.create(
      {
        account_id: accountId,
        token_hash: sha256Hex(sessionId),
        created_at: now,
        expires_at: expiresAt,
        last_seen_at: now,
        user_agent: from.userAgent ? from.userAgent.slice(0, USER_AGENT_MAX_LENGTH) : null,
        // Kept as the audit log keeps addresses: an operator who keeps none (off) keeps none here either.
        ip: auditAddress(from.ip, this.config.auditIp ?? 'truncated'),
      },
      this.trail.pending('session.signed_in', { type: 'session', id: accountId, ...from }, sessionEvent),
    )
    return { sessionId, expiresAt }
  }

  /**
   * Who is signed in with this session id, or undefined when it is unknown, ended, expired (12 hours)
   * or idle (FILESHARE_SESSION_IDLE_TIMEOUT_MS without a request). Finding it counts as a use.
   */
  async find(sessionId: string, now = this.now()): Promise<SignedIn | undefined> {
    if (!SESSION_ID_PATTERN.test(sessionId)) return undefined
    const found = await this.sessions.findValid(sha256Hex(sessionId), now, this.idleSince(now))
    if (!found) return undefined
    const touchEvery = Math.min(TOUCH_EVERY_MS, this.config.sessionIdleTimeoutMs / TOUCHES_PER_IDLE_TIMEOUT)
    if (found.session.last_seen_at <= now - touchEvery) await this.sessions.touch(found.session.id, now)
    return this.signedIn(found.account, found.session.expires_at, found.twoFactor)
  }

  /** The account's sessions still valid, most recently used first; `currentSessionId` marks the asker's own. */
  async list(accountId: number, currentSessionId: string, now = this.now()): Promise<SessionView[]> {
    const currentHash = SESSION_ID_PATTERN.test(currentSessionId) ? sha256Hex(currentSessionId) : ''
    const rows = await this.sessions.listValid(accountId, now, this.idleSince(now))
    return rows.map((row) => ({
      id: row.id,
      createdAt: row.created_at,
      lastSeenAt: row.last_seen_at,
      device: row.user_agent ? describeDevice(row.user_agent) : null,
      ip: row.ip,
      current: row.token_hash === currentHash,
    }))
  }

  /** Ends one session of the account by its row id (signing out another device); NotFoundError when it has none such. */
  async endById(accountId: number, id: number, actor: Actor): Promise<void> {
    const ended = await this.sessions.deleteById(accountId, id, this.trail.pending('session.signed_out', actor, sessionEvent))
    if (!ended) throw new NotFoundError(`No session ${id} of this account.`)
  }

  /** Ends every session of the account, the caller's own included ("sign out everywhere"). */
  async endAll(accountId: number, actor: Actor = OPERATOR_ACTOR): Promise<void> {
    await this.sessions.deleteForAccount(
      accountId,
      this.trail.pending('session.signed_out_everywhere', actor, (ended: number) => ({
        accountId,
        target: { type: 'account', id: accountId },
        details: { sessions_ended: ended },
      })),
    )
  }

  /** Sessions last used at or before this time are idle, hence ended. */
  private idleSince(now: number): number {
    return now - this.config.sessionIdleTimeoutMs
  }

  /** The account holder as signed in until `expiresAt`, with the account's effective limits. */
  signedIn(account: AccountRow, expiresAt: number, twoFactor: boolean): SignedIn {
    return { account, limits: effectiveLimits(account, this.config.plans), expiresAt, twoFactor }
  }

  /** Ends the session; `actor`: who signs out (an event is recorded), absent when a new sign-in replaces it. */
  async end(sessionId: string, actor?: Actor): Promise<void> {
    if (!SESSION_ID_PATTERN.test(sessionId)) return
    const event = actor && this.trail.pending('session.signed_out', actor, sessionEvent)
    await this.sessions.delete(sha256Hex(sessionId), event)
  }

  /**
   * The session's CSRF token: an HMAC of a fixed label keyed by the session id. The page reads it
   * from a same-origin JSON answer and sends it back in a header; another site can read neither.
   */
  csrfToken(sessionId: string): string {
    return createHmac('sha256', sessionId).update('fileshare dashboard csrf').digest('base64url')
  }

  checkCsrfToken(sessionId: string, token: string): boolean {
    const expected = Buffer.from(this.csrfToken(sessionId))
    const given = Buffer.from(token)
    return given.length === expected.length && timingSafeEqual(given, expected)
  }
}

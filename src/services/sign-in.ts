import { RateLimitedError, SignInFailedError } from '../errors.js'
import { sha256Hex } from '../lib/sha256-hex.js'
import type { PerKeyLimiter } from '../limits/per-key-limiter.js'
import type { AccountHolderService } from './account-holders.js'
import type { SessionService } from './sessions.js'

/**
 * Dashboard sign-in with email and password, guarded by two budgets of failed attempts: per client
 * IP (one address trying many accounts) and per account (many addresses trying one account).
 */
export class SignInService {
  constructor(
    private readonly holders: AccountHolderService,
    private readonly sessions: SessionService,
    private readonly failuresByIp: PerKeyLimiter,
    private readonly failuresByAccount: PerKeyLimiter,
  ) {}

  /** A new session for the right password; `previousSessionId`, if any, ends (no session fixation). */
  async signIn(email: string, password: string, clientIp: string, previousSessionId?: string) {
    // A hash, so that no email address lands in Redis.
    const accountKey = sha256Hex(email.trim().toLowerCase())
    // Checked before the password: once a budget is spent, not even the right password gets in.
    const wait = Math.max(await this.failuresByIp.blockedFor(clientIp), await this.failuresByAccount.blockedFor(accountKey))
    if (wait > 0) throw new RateLimitedError(wait, 'Too many failed sign-ins; wait a minute and try again.')
    const account = await this.holders.verify(email, password)
    if (!account) {
      await Promise.all([this.failuresByIp.hit(clientIp), this.failuresByAccount.hit(accountKey)])
      throw new SignInFailedError()
    }
    const { sessionId, expiresAt } = await this.sessions.create(account.id, previousSessionId)
    return { sessionId, signedIn: this.sessions.signedIn(account, expiresAt) }
  }
}

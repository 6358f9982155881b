import type { Actor } from './audit.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { AppError, RateLimitedError, SignInFailedError, WrongPasswordError } from '../errors.js'
import { checkNewPassword } from '../lib/passwords.js'
import { sha256Hex } from '../lib/sha256-hex.js'
import type { PerKeyLimiter } from '../limits/per-key-limiter.js'
import type { AccountHolderService } from './account-holders.js'
import type { SessionService } from './sessions.js'
import { foldEmailCase } from '../lib/email-case.js'

/** The budgets of failed password checks (sign-ins and the current password of a change). */
export interface SignInGuards {
  /** Per client IP (one address trying many accounts): past it, that IP is refused. */
  byIp: PerKeyLimiter
  /** Per client IP and email pair (one address trying one account): past it, that pair is refused. */
  byIpAndEmail: PerKeyLimiter
  /** Per email from every IP together, per hour: past it, every check of that email waits, none is refused. */
  byEmail: PerKeyLimiter
}

/** What each check of an email whose hourly failure budget is spent waits before its password is checked. */
export const SLOW_SIGN_IN_DELAY_MS = 1000

/**
 * Dashboard sign-in with email and password. Failures are counted per client IP, per client IP and
 * email pair, and per email. The first two refuse (429) only the client that failed; the per-email
 * budget, which many addresses can spend together, only slows every check of that email down
 * (SLOW_SIGN_IN_DELAY_MS), so that someone who knows a holder's email cannot keep the holder out.
 */
/** Where a sign-in comes from: the client address (the guards' key) and user agent, for the audit log. */
export type ClientOrigin = Pick<Actor, 'ip' | 'userAgent'>

export class SignInService {
  constructor(
    private readonly holders: AccountHolderService,
    private readonly sessions: SessionService,
    private readonly guards: SignInGuards,
    private readonly wait: (ms: number) => Promise<unknown> = sleep,
  ) {}

  /** A new session for the right password; `previousSessionId`, if any, ends (no session fixation). */
  async signIn(email: string, password: string, from: ClientOrigin, previousSessionId?: string) {
    const account = await this.guarded(
      email,
      from.ip ?? '',
      () => this.holders.verify(email, password, from),
      () => new SignInFailedError(),
    )
    const { sessionId, expiresAt } = await this.sessions.create(account.id, previousSessionId, undefined, { ...from, name: account.email })
    return { sessionId, signedIn: this.sessions.signedIn(account, expiresAt) }
  }

  /**
   * Changes the password of a signed-in holder, who must give the current one (checked under the
   * same guard as a sign-in). Every other session of the account ends; `sessionId` stays.
   */
  async changePassword(accountId: number, email: string, sessionId: string, current: string, next: string, actor: Actor) {
    checkNewPassword(next)
    await this.guarded(
      email,
      actor.ip ?? '',
      () => this.holders.verifyById(accountId, current),
      () => new WrongPasswordError(),
    )
    await this.holders.setPassword(accountId, next, { keepSessionId: sessionId, actor })
  }

  /**
   * Runs one password check under the guards: counted first (atomically, so concurrent attempts
   * cannot all slip under a budget), given back when it succeeds.
   */
  private async guarded<T>(email: string, clientIp: string, check: () => Promise<T | undefined>, failure: () => AppError): Promise<T> {
    // Folded as account emails compare, so that two accounts never share a counter.
    const address = foldEmailCase(email.trim())
    // Hashes, so that no email address lands in Redis.
    const emailKey = sha256Hex(address)
    const pairKey = sha256Hex(`${clientIp}\n${address}`)
    const [ipWait, pairWait] = await Promise.all([this.guards.byIp.take(clientIp), this.guards.byIpAndEmail.take(pairKey)])
    const wait = Math.max(ipWait, pairWait)
    // A refusal counts too (the window does not grow): only the client that failed is refused.
    if (wait > 0) throw new RateLimitedError(wait, 'Too many failed sign-ins from here; wait a minute and try again.')
    const emailWait = await this.guards.byEmail.take(emailKey)
    if (emailWait > 0) await this.wait(SLOW_SIGN_IN_DELAY_MS)
    const result = await check()
    if (result === undefined) throw failure()
    await Promise.all([
      this.guards.byIp.giveBack(clientIp),
      this.guards.byIpAndEmail.giveBack(pairKey),
      this.guards.byEmail.giveBack(emailKey),
    ])
    return result
  }
}

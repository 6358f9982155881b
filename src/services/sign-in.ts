import type { Actor, AuditLogService } from './audit.js'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  AppError,
  InvalidRequestError,
  RateLimitedError,
  SignInExpiredError,
  SignInFailedError,
  TwoFactorFailedError,
  WrongPasswordError,
} from '../errors.js'
import type { TwoFactorRepository } from '../db/repositories/two-factor-repository.js'
import type { AccountRow } from '../db/schema.js'
import { randomToken } from '../lib/random-token.js'
import type { TwoFactorService } from './two-factor.js'
import { checkNewPassword } from '../lib/passwords.js'
import { sha256Hex } from '../lib/sha256-hex.js'
import type { PerKeyLimiter } from '../limits/per-key-limiter.js'
import type { AccountHolderService } from './account-holders.js'
import type { SessionService, SignedIn } from './sessions.js'
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

/** A sign-in whose password was right waits this long for its second factor... */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000
/** ...and for at most this many wrong codes; then the password is asked again (and counted again). */
export const CHALLENGE_MAX_FAILURES = 5
const CHALLENGE_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/

/** The second step's parts: the holders' second factors and the sign-ins waiting for one. */
export interface SecondStep {
  twoFactor: TwoFactorService
  challenges: TwoFactorRepository
  auditLog?: Pick<AuditLogService, 'record'>
  onBackgroundError?: (error: unknown) => void
  now?: () => number
}

/** A sign-in's answer: a session, or (the account has a second factor) the token of the step that asks for a code. */
export type SignInResult =
  { sessionId: string; signedIn: SignedIn; challenge?: undefined } | { challenge: string; sessionId?: undefined; signedIn?: undefined }

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
    private readonly second?: SecondStep,
  ) {}

  /**
   * A new session for the right password; `previousSessionId`, if any, ends (no session fixation).
   * When the account has a second factor, no session yet: a challenge token for `completeSignIn`.
   */
  async signIn(email: string, password: string, from: ClientOrigin, previousSessionId?: string): Promise<SignInResult> {
    const account = await this.guarded(
      email,
      from.ip ?? '',
      () => this.holders.verify(email, password, from),
      () => new SignInFailedError(),
    )
    return this.afterPassword(account, from, previousSessionId)
  }

  /** What follows a right password (a sign-in, or an invitation used): a session, or a challenge when a second factor is on. */
  async afterPassword(account: AccountRow, from: ClientOrigin, previousSessionId?: string): Promise<SignInResult> {
    if (this.second && (await this.second.twoFactor.status(account.id)).enabled) {
      const now = (this.second.now ?? Date.now)()
      const challenge = randomToken(32)
      await this.second.challenges.createChallenge(account.id, sha256Hex(challenge), now, now + CHALLENGE_TTL_MS)
      return { challenge }
    }
    return this.startSession(account, false, from, previousSessionId)
  }

  /**
   * The second step: the challenge of a right password and a code (TOTP or recovery). Wrong codes
   * count against the sign-in guards of the account's email, as wrong passwords do, and against an
   * hourly budget of the account that refuses (unlike the email's, which only slows): whoever gets
   * here knows the password, and only the code stands between them and the account. Each challenge
   * also dies after CHALLENGE_MAX_FAILURES wrong codes, so that guessing costs password checks too.
   */
  async completeSignIn(challenge: string, code: string, from: ClientOrigin, previousSessionId?: string): Promise<SignInResult> {
    const second = this.second
    if (!second || !CHALLENGE_TOKEN_PATTERN.test(challenge)) throw new SignInExpiredError()
    const now = (second.now ?? Date.now)()
    const found = await second.challenges.findChallenge(sha256Hex(challenge), now)
    if (!found) throw new SignInExpiredError()
    // A try is taken before the code is checked, atomically: of concurrent codes on one challenge,
    // at most CHALLENGE_MAX_FAILURES are ever checked (a count read first would let them all pass).
    if (!(await second.challenges.takeChallengeTry(found.id, CHALLENGE_MAX_FAILURES, now))) throw new SignInExpiredError()
    const { account } = found
    const actor: Actor = { type: 'public', id: null, ...from }
    await this.guardedCode(account, actor, () => second.twoFactor.check(account.id, code, actor, now)).catch(async (error: unknown) => {
      if (error instanceof TwoFactorFailedError) await second.challenges.dropSpentChallenge(found.id, CHALLENGE_MAX_FAILURES)
      throw error
    })
    // Used once: of two requests with the same challenge and right codes, one signs in.
    if (!(await second.challenges.endChallenge(found.id))) throw new SignInExpiredError()
    return this.startSession(account, true, from, previousSessionId)
  }

  /**
   * Checks a code (TOTP or recovery) under the guards: the sign-in guards of the account's email, as
   * a password, and the account's own hourly budget of wrong codes, which refuses. Every place that
   * takes a code goes through here (sign-in, new recovery codes, turning it off): a stolen session
   * must not become a way to guess codes without limit. Each wrong code is in the holder's audit log
   * (two_factor.failed), wherever it was given: a thief guessing from a stolen session leaves a trace.
   */
  private async guardedCode(account: AccountRow, actor: Actor, check: () => Promise<unknown>): Promise<void> {
    const accountKey = sha256Hex(`second factor\n${account.id}`)
    const accountWait = await this.guards.byEmail.take(accountKey)
    if (accountWait > 0) {
      throw new RateLimitedError(accountWait, 'Too many wrong codes for this account; wait and try again, or ask the operator.')
    }
    await this.guarded(
      account.email,
      actor.ip ?? '',
      async () => ((await check()) ? account : undefined),
      () => {
        this.recordWrongCode(account, actor)
        return new TwoFactorFailedError()
      },
    )
    await this.guards.byEmail.giveBack(accountKey)
  }

  /** Not awaited, as a wrong password's row (account-holders.ts): the answer does not wait for the log. */
  private recordWrongCode(account: AccountRow, actor: Actor): void {
    const second = this.second
    if (!second?.auditLog) return
    second.auditLog
      .record('two_factor.failed', actor, { accountId: account.id, target: { type: 'account', id: account.id } })
      .catch(second.onBackgroundError ?? (() => {}))
  }

  private async startSession(
    account: AccountRow,
    twoFactor: boolean,
    from: ClientOrigin,
    previousSessionId?: string,
  ): Promise<SignInResult> {
    const { sessionId, expiresAt } = await this.sessions.create(account.id, previousSessionId, undefined, { ...from, name: account.email })
    return { sessionId, signedIn: this.sessions.signedIn(account, expiresAt, twoFactor) }
  }

  /**
   * Checks the password of a signed-in holder (turning the second factor off, changing the email)
   * under the same guard as a sign-in; WrongPasswordError when it is wrong.
   */
  async checkPassword(accountId: number, email: string, password: string, actor: Actor): Promise<void> {
    await this.guarded(
      email,
      actor.ip ?? '',
      () => this.holders.verifyById(accountId, password),
      () => new WrongPasswordError(),
    )
  }

  /** Turns the second factor off: needs the password and a code (or a recovery code), each under its guard. */
  async disableTwoFactor(account: AccountRow, password: string, code: string, actor: Actor, required: boolean): Promise<void> {
    const second = this.secondStep()
    if (required) throw new InvalidRequestError('This server requires two-factor sign-in for every holder: it cannot be turned off.')
    await this.checkPassword(account.id, account.email, password, actor)
    await this.guardedCode(account, actor, () => second.twoFactor.check(account.id, code, actor))
    await second.twoFactor.disable(account.id, actor)
  }

  /** Ten new recovery codes for a current code (checked under the guards); the earlier ones stop working. */
  async regenerateRecoveryCodes(account: AccountRow, code: string, actor: Actor): Promise<string[]> {
    const second = this.secondStep()
    await this.guardedCode(account, actor, () => second.twoFactor.check(account.id, code, actor))
    return second.twoFactor.regenerateRecoveryCodes(account.id, actor)
  }

  private secondStep(): SecondStep {
    if (!this.second) throw new InvalidRequestError('Two-factor sign-in is not available.')
    return this.second
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

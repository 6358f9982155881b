import { InvalidInviteError, NotFoundError } from '../errors.js'
import type { AccountHoldersRepository } from '../db/repositories/account-holders-repository.js'
import type { AccountsRepository } from '../db/repositories/accounts-repository.js'
import type { AccountRow } from '../db/schema.js'
import { sha256Hex } from '../lib/sha256-hex.js'
import { checkNewPassword, hashPassword, PASSWORD_HASH_COST, verifyPassword, type ScryptCost } from '../lib/passwords.js'
import { randomToken } from '../lib/random-token.js'
import { AuditTrail, OPERATOR_ACTOR, type Actor, type AuditLogService } from './audit.js'
import type { ClientOrigin } from './sign-in.js'

export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000
const INVITE_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/

/**
 * Account holders' dashboard credentials: passwords (scrypt) and one-time invitation links that
 * let a holder choose one. Setting a password, either way, ends every session of the account.
 */
export class AccountHolderService {
  /** Verified against when the email is unknown, so that unknown and known emails take as long. */
  private decoyHash: Promise<string> | undefined

  constructor(
    private readonly holders: AccountHoldersRepository,
    private readonly accounts: AccountsRepository,
    private readonly passwordHashCost: Readonly<ScryptCost> = PASSWORD_HASH_COST,
    private readonly now: () => number = Date.now,
    private readonly trail: AuditTrail = new AuditTrail({ auditIp: 'truncated' }, now),
    private readonly auditLog?: Pick<AuditLogService, 'record'>,
    private readonly onBackgroundError: (error: unknown) => void = () => {},
  ) {}

  /**
   * Sets the password; every session of the account ends but `keepSessionId` (the holder's own,
   * when they change it themselves), and every unused invitation dies with the old password.
   */
  async setPassword(
    accountId: number,
    password: string,
    options: { keepSessionId?: string; actor?: Actor } = {},
    now = this.now(),
  ): Promise<AccountRow> {
    checkNewPassword(password)
    const account = await this.accounts.findById(accountId)
    if (!account) throw new NotFoundError(`No account with id ${accountId}.`)
    const keep = options.keepSessionId === undefined ? undefined : sha256Hex(options.keepSessionId)
    const event = this.trail.row('password.changed', options.actor ?? OPERATOR_ACTOR, {
      accountId,
      target: { type: 'account', id: accountId },
      details: { other_sessions_ended: true },
    })
    await this.holders.setPassword(accountId, await hashPassword(password, this.passwordHashCost), now, keep, event)
    return account
  }

  /** A new one-time invitation; the token is returned only here and only its hash is stored. */
  async createInvite(accountId: number, now = this.now()) {
    const account = await this.accounts.findById(accountId)
    if (!account) throw new NotFoundError(`No account with id ${accountId}.`)
    const token = randomToken(32)
    const expiresAt = now + INVITE_TTL_MS
    await this.holders.createInvite(accountId, sha256Hex(token), now, expiresAt)
    return { account, token, expiresAt }
  }

  /**
   * The account an unused invitation is for (the invite page shows its email), or InvalidInviteError
   * when it is unknown, used, expired, or older than the account's password.
   */
  async inviteDetails(token: string, now = this.now()): Promise<{ email: string; expiresAt: number }> {
    if (!INVITE_TOKEN_PATTERN.test(token)) throw new InvalidInviteError()
    const found = await this.holders.findUsableInvite(sha256Hex(token), now)
    if (!found) throw new InvalidInviteError()
    return { email: found.email, expiresAt: found.expires_at }
  }

  /** Sets the password through an invitation, which is then used up. Returns the account id. */
  async acceptInvite(token: string, password: string, now = this.now(), from: ClientOrigin = {}): Promise<number> {
    if (!INVITE_TOKEN_PATTERN.test(token)) throw new InvalidInviteError()
    checkNewPassword(password)
    const event = this.trail.pending('password.changed', { type: 'public', id: null, ...from }, (accountId: number) => ({
      accountId,
      target: { type: 'account', id: accountId },
      details: { via: 'invite' },
    }))
    const accountId = await this.holders.acceptInvite(sha256Hex(token), await hashPassword(password, this.passwordHashCost), now, event)
    if (accountId === undefined) throw new InvalidInviteError()
    return accountId
  }

  /** The account, for what follows an invitation used (a session, or the second factor's step). */
  async account(accountId: number): Promise<AccountRow> {
    const account = await this.accounts.findById(accountId)
    if (!account) throw new NotFoundError(`No account with id ${accountId}.`)
    return account
  }

  /** The account if `password` is its password (a holder changing theirs gives the current one). */
  async verifyById(accountId: number, password: string): Promise<AccountRow | undefined> {
    const found = await this.holders.findWithPassword(accountId)
    if (!found) return undefined
    return (await verifyPassword(password, found.passwordHash)) ? found.account : undefined
  }

  /** The account whose email and password these are, or undefined (whichever part was wrong). */
  async verify(email: string, password: string, from: ClientOrigin = {}): Promise<AccountRow | undefined> {
    // Made on the first sign-in of any kind, so that even the first unknown email costs no extra hash.
    this.decoyHash ??= hashPassword('decoy password, never matches', this.passwordHashCost)
    const found = await this.holders.findForSignIn(email.trim())
    if (!found) {
      await verifyPassword(password, await this.decoyHash)
      return undefined
    }
    if (await verifyPassword(password, found.passwordHash)) return found.account
    // The holder sees the attempt in the log (an unknown address has no log to show it in). Not
    // awaited: a wrong password for a real account must take as long as one for an unknown address.
    this.auditLog
      ?.record(
        'session.sign_in_failed',
        { type: 'public', id: null, ...from },
        {
          accountId: found.account.id,
          target: { type: 'account', id: found.account.id },
        },
      )
      .catch(this.onBackgroundError)
    return undefined
  }
}

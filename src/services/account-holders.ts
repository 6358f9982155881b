import { InvalidInviteError, NotFoundError } from '../errors.js'
import type { AccountHoldersRepository } from '../db/repositories/account-holders-repository.js'
import type { AccountsRepository } from '../db/repositories/accounts-repository.js'
import type { AccountRow } from '../db/schema.js'
import { sha256Hex } from '../lib/sha256-hex.js'
import { checkNewPassword, hashPassword, PASSWORD_HASH_COST, verifyPassword, type ScryptCost } from '../lib/passwords.js'
import { randomToken } from '../lib/random-token.js'

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
  ) {}

  async setPassword(accountId: number, password: string, now = this.now()): Promise<AccountRow> {
    checkNewPassword(password)
    const account = await this.accounts.findById(accountId)
    if (!account) throw new NotFoundError(`No account with id ${accountId}.`)
    await this.holders.setPassword(accountId, await hashPassword(password, this.passwordHashCost), now)
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

  /** Sets the password through an invitation, which is then used up. Returns the account id. */
  async acceptInvite(token: string, password: string, now = this.now()): Promise<number> {
    if (!INVITE_TOKEN_PATTERN.test(token)) throw new InvalidInviteError()
    checkNewPassword(password)
    const accountId = await this.holders.acceptInvite(sha256Hex(token), await hashPassword(password, this.passwordHashCost), now)
    if (accountId === undefined) throw new InvalidInviteError()
    return accountId
  }

  /** The account whose email and password these are, or undefined (whichever part was wrong). */
  async verify(email: string, password: string): Promise<AccountRow | undefined> {
    // Made on the first sign-in of any kind, so that even the first unknown email costs no extra hash.
    this.decoyHash ??= hashPassword('decoy password, never matches', this.passwordHashCost)
    const found = await this.holders.findForSignIn(email.trim())
    if (!found) {
      await verifyPassword(password, await this.decoyHash)
      return undefined
    }
    return (await verifyPassword(password, found.passwordHash)) ? found.account : undefined
  }
}

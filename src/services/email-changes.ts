import type { AccountsRepository } from '../db/repositories/accounts-repository.js'
import type { EmailChangesRepository } from '../db/repositories/email-changes-repository.js'
import { InvalidParameterError, NotFoundError } from '../errors.js'
import { foldEmailCase } from '../lib/email-case.js'
import { AuditTrail, OPERATOR_ACTOR, type Actor } from './audit.js'

/** The shape an account email must have (as `fileshare account create` checks it, services/accounts.ts). */
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/
const EMAIL_MAX_LENGTH = 320
/**
 * Control characters (C0, DEL, C1: escape, bell), line and paragraph separators, and the bidi
 * controls (marks, embeddings, overrides, isolates), as file names drop them (lib/filename.ts).
 * `\s` covers none of escape, bell or U+202E, and an address reaches the operator's terminal
 * (`fileshare account email-changes`): ESC would let it rewrite the line or the clipboard, U+202E
 * would show it reversed to the operator who is meant to check it.
 */
const UNSAFE_CHARACTER = /[\p{Cc}\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u

/**
 * Refuses an account email with a character of UNSAFE_CHARACTER (400 invalid_parameter), wherever
 * an address enters (an email change, `fileshare account create`). The message does not repeat
 * the address: it would carry the characters to the terminal.
 */
export function refuseUnsafeEmail(email: string): void {
  if (UNSAFE_CHARACTER.test(email)) {
    throw new InvalidParameterError(
      'An email address must not contain control characters (such as a newline or escape) or text-direction characters.',
    )
  }
}

export interface PendingEmailChange {
  newEmail: string
  requestedAt: number
}

/** Details of the `email.change_cancelled` row of a change the operator could not make. */
export const ADDRESS_TAKEN = 'address_taken'

/**
 * A holder's change of email address. No mail is sent (the service has none), so nothing proves
 * the holder owns the new address: the change waits until the operator confirms it with
 * `fileshare account confirm-email ACCOUNT_ID`, and the old address signs in until then. The rules
 * of account emails hold: unique regardless of ASCII letter case (lib/email-case.ts), checked when
 * the operator confirms, not when the holder asks: a request answers the same whether or not
 * another account has the address, so that the dashboard cannot be used to find out which
 * addresses have accounts. The operator sees a taken address in the list of pending changes; one
 * confirmed anyway is declined, and the holder reads why in the account's activity.
 */
export class EmailChangeService {
  constructor(
    private readonly changes: EmailChangesRepository,
    private readonly accounts: AccountsRepository,
    private readonly trail: AuditTrail,
    private readonly now: () => number = Date.now,
  ) {}

  async pending(accountId: number): Promise<PendingEmailChange | undefined> {
    const row = await this.changes.find(accountId)
    return row && { newEmail: row.new_email, requestedAt: row.requested_at }
  }

  /** Asks for a change (the caller checked the password); replaces one asked for before. */
  async request(accountId: number, currentEmail: string, newEmail: string, actor: Actor, now = this.now()): Promise<PendingEmailChange> {
    // Before trimming: trim() would silently drop a separator at either end, and such an address is no one's.
    refuseUnsafeEmail(newEmail)
    const email = newEmail.trim()
    if (!EMAIL_PATTERN.test(email) || email.length > EMAIL_MAX_LENGTH) {
      throw new InvalidParameterError('Enter an email address, such as name@example.com.')
    }
    if (foldEmailCase(email) === foldEmailCase(currentEmail)) throw new InvalidParameterError('This is your email address already.')
    // No look at other accounts here (see the class): the operator's confirmation decides.
    const event = this.trail.row('email.change_requested', actor, {
      accountId,
      target: { type: 'account', id: accountId },
      details: { new_email: email },
    })
    await this.changes.request(accountId, email, now, event)
    return { newEmail: email, requestedAt: now }
  }

  /** Withdraws the pending change; NotFoundError when none is pending. */
  async cancel(accountId: number, actor: Actor): Promise<void> {
    const event = this.trail.row('email.change_cancelled', actor, { accountId, target: { type: 'account', id: accountId } })
    if (!(await this.changes.cancel(accountId, event))) throw new NotFoundError('No email change is pending.')
  }

  /** The operator's list: every pending change, oldest first, with the account that has its new address already, if any. */
  async listPending() {
    const rows = await this.changes.listPending()
    return Promise.all(
      rows.map(async (row) => ({
        accountId: row.account_id,
        email: row.email,
        newEmail: row.new_email,
        requestedAt: row.requested_at,
        takenBy: await this.otherHolder(row.account_id, row.new_email),
      })),
    )
  }

  /**
   * The operator confirms: the account's email becomes the new one. NotFoundError when none is
   * pending. When another account has the address (in some letter case), the change cannot be
   * made: it is declined (withdrawn, with an `email.change_cancelled` row whose reason the holder
   * reads under Activity), and the operator is told (InvalidParameterError).
   */
  async confirm(accountId: number, actor: Actor = OPERATOR_ACTOR) {
    const pending = await this.changes.find(accountId)
    if (!pending) throw new NotFoundError(`Account ${accountId} has no pending email change.`)
    let takenBy = await this.otherHolder(accountId, pending.new_email)
    if (takenBy === null) {
      try {
        const done = await this.changes.confirm(accountId, ({ oldEmail, newEmail }) =>
          this.trail.row('email.changed', actor, {
            accountId,
            target: { type: 'account', id: accountId },
            details: { old_email: oldEmail, new_email: newEmail },
          }),
        )
        if (!done) throw new NotFoundError(`Account ${accountId} has no pending email change.`)
        return done
      } catch (error) {
        // Taken between the look and the change (the unique index refused it): declined as well.
        if (!(error instanceof InvalidParameterError)) throw error
        takenBy = await this.otherHolder(accountId, pending.new_email)
        if (takenBy === null) throw error
      }
    }
    const declined = this.trail.row('email.change_cancelled', actor, {
      accountId,
      target: { type: 'account', id: accountId },
      details: { new_email: pending.new_email, reason: ADDRESS_TAKEN },
    })
    // Only the change looked at: one to another address, asked for meanwhile, waits for its own confirmation.
    if (!(await this.changes.cancel(accountId, declined, pending.new_email))) {
      throw new InvalidParameterError(`The pending email change of account ${accountId} changed meanwhile: look at it again.`)
    }
    throw new InvalidParameterError(
      `Account ${takenBy} has the new address of account ${accountId} (in some letter case): the change was declined, ` +
        'and the holder sees why under Activity.',
    )
  }

  /** The id of another account that has `email` (in any letter case), or null. */
  private async otherHolder(accountId: number, email: string): Promise<number | null> {
    const holder = await this.accounts.findByEmail(email)
    return holder && holder.id !== accountId ? holder.id : null
  }
}

import { recordChangeIn, recordEventIn, type PendingEvent } from './audit-events-repository.js'
import { sql, type ExpressionBuilder, type Kysely } from 'kysely'
import type { AccountRow, Database, NewAuditEventRow } from '../schema.js'
import { foldEmailCase } from '../../lib/email-case.js'

/** The invitation is newer than the account's password, if it has one: an invitation dies once a password exists. */
function noPasswordSinceInvite(eb: ExpressionBuilder<Database, 'account_invites'>) {
  return eb.not(
    eb.exists(
      eb
        .selectFrom('account_passwords')
        .select('account_passwords.account_id')
        .whereRef('account_passwords.account_id', '=', 'account_invites.account_id')
        .whereRef('account_passwords.updated_at', '>', 'account_invites.created_at'),
    ),
  )
}

function splitPassword({ password_hash: passwordHash, ...account }: AccountRow & { password_hash: string }) {
  return { account, passwordHash }
}

/** Dashboard credentials of account holders: password hashes and one-time invitation links. */
export class AccountHoldersRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The account that signs in with `email`, in any letter case, with its password hash, or undefined
   * when there is none or it has no password yet. Letter case is ASCII only (A-Z folds to a-z): what
   * SQLite's lower() does, and PostgreSQL's on the "C" column (migration 006), whose unique index on
   * lower(email) makes the match unique and serves it.
   */
  async findForSignIn(email: string): Promise<{ account: AccountRow; passwordHash: string } | undefined> {
    const folded = foldEmailCase(email)
    const row = await this.accountsWithPasswords()
      .where(sql<string>`lower(accounts.email)`, '=', folded)
      .executeTakeFirst()
    return row && splitPassword(row)
  }

  /** The account with its password hash, or undefined when it has no password. */
  async findWithPassword(accountId: number): Promise<{ account: AccountRow; passwordHash: string } | undefined> {
    const row = await this.accountsWithPasswords().where('accounts.id', '=', accountId).executeTakeFirst()
    return row && splitPassword(row)
  }

  /** Accounts that have a password, each row with its hash. */
  private accountsWithPasswords() {
    return this.db
      .selectFrom('accounts')
      .innerJoin('account_passwords', 'account_passwords.account_id', 'accounts.id')
      .selectAll('accounts')
      .select('account_passwords.password_hash')
  }

  /**
   * Sets the password, ends every session of the account but the one stored under `keepTokenHash`
   * (if given), and kills the account's unused invitations and its sign-ins waiting for a second
   * factor (each got there with the old password), in one transaction.
   */
  async setPassword(accountId: number, passwordHash: string, now: number, keepTokenHash?: string, event?: NewAuditEventRow): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await upsertPassword(trx, accountId, passwordHash, now)
      if (event) await recordEventIn(trx, event)
      let sessions = trx.deleteFrom('sessions').where('account_id', '=', accountId)
      if (keepTokenHash !== undefined) sessions = sessions.where('token_hash', '!=', keepTokenHash)
      await sessions.execute()
      await trx.deleteFrom('account_invites').where('account_id', '=', accountId).where('used_at', 'is', null).execute()
      await trx.deleteFrom('sign_in_challenges').where('account_id', '=', accountId).execute()
    })
  }

  /**
   * The email and expiry of the invitation stored under `tokenHash` if it can still be used: unused,
   * unexpired, and not older than the last time the account's password was set (if it has one).
   */
  async findUsableInvite(tokenHash: string, now: number): Promise<{ email: string; expires_at: number } | undefined> {
    return this.db
      .selectFrom('account_invites')
      .innerJoin('accounts', 'accounts.id', 'account_invites.account_id')
      .select(['accounts.email', 'account_invites.expires_at'])
      .where('account_invites.token_hash', '=', tokenHash)
      .where('account_invites.used_at', 'is', null)
      .where('account_invites.expires_at', '>', now)
      .where(noPasswordSinceInvite)
      .executeTakeFirst()
  }

  /** Stores a new invitation; earlier unused ones of the account stop working. */
  async createInvite(accountId: number, tokenHash: string, now: number, expiresAt: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('account_invites').where('account_id', '=', accountId).where('used_at', 'is', null).execute()
      await trx
        .insertInto('account_invites')
        .values({ account_id: accountId, token_hash: tokenHash, created_at: now, expires_at: expiresAt })
        .execute()
    })
  }

  /**
   * Uses the invitation once: marks it used (a conditional UPDATE, so two concurrent uses cannot
   * both win), sets the password and ends the account's sessions, all or nothing. Returns the
   * account id, or undefined when the invitation is unknown, used or expired, or when a password
   * was set since it was made (an invitation dies once a password exists; setting one also deletes
   * unused invitations, and this covers those made before that rule).
   */
  async acceptInvite(tokenHash: string, passwordHash: string, now: number, event?: PendingEvent<number>): Promise<number | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const invite = await trx
        .updateTable('account_invites')
        .set({ used_at: now })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .where(noPasswordSinceInvite)
        .returning('account_id')
        .executeTakeFirst()
      if (!invite) return undefined
      await upsertPassword(trx, invite.account_id, passwordHash, now)
      await trx.deleteFrom('sessions').where('account_id', '=', invite.account_id).execute()
      await trx.deleteFrom('account_invites').where('account_id', '=', invite.account_id).where('used_at', 'is', null).execute()
      // Sign-ins waiting for a code got there with the old password (a code then follows this one's).
      await trx.deleteFrom('sign_in_challenges').where('account_id', '=', invite.account_id).execute()
      await recordChangeIn(trx, event, invite.account_id)
      return invite.account_id
    })
  }
}

async function upsertPassword(db: Kysely<Database>, accountId: number, passwordHash: string, now: number): Promise<void> {
  await db
    .insertInto('account_passwords')
    .values({ account_id: accountId, password_hash: passwordHash, updated_at: now })
    .onConflict((conflict) => conflict.column('account_id').doUpdateSet({ password_hash: passwordHash, updated_at: now }))
    .execute()
}

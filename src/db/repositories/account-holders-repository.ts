import { sql, type Kysely } from 'kysely'
import type { AccountRow, Database } from '../schema.js'

/** Dashboard credentials of account holders: password hashes and one-time invitation links. */
export class AccountHoldersRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The account that signs in with `email` (letter case aside; an exact match wins) with its
   * password hash, or undefined when there is none or it has no password yet.
   */
  async findForSignIn(email: string): Promise<{ account: AccountRow; passwordHash: string } | undefined> {
    const row = await this.db
      .selectFrom('accounts')
      .innerJoin('account_passwords', 'account_passwords.account_id', 'accounts.id')
      .selectAll('accounts')
      .select('account_passwords.password_hash')
      .where(sql<string>`lower(accounts.email)`, '=', email.toLowerCase())
      .orderBy(sql`case when accounts.email = ${email} then 0 else 1 end`)
      .orderBy('accounts.id')
      .limit(1)
      .executeTakeFirst()
    if (!row) return undefined
    const { password_hash: passwordHash, ...account } = row
    return { account, passwordHash }
  }

  /** Sets the password and ends every session of the account, in one transaction. */
  async setPassword(accountId: number, passwordHash: string, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await upsertPassword(trx, accountId, passwordHash, now)
      await trx.deleteFrom('sessions').where('account_id', '=', accountId).execute()
    })
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
   * account id, or undefined when the invitation is unknown, used or expired.
   */
  async acceptInvite(tokenHash: string, passwordHash: string, now: number): Promise<number | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const invite = await trx
        .updateTable('account_invites')
        .set({ used_at: now })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('account_id')
        .executeTakeFirst()
      if (!invite) return undefined
      await upsertPassword(trx, invite.account_id, passwordHash, now)
      await trx.deleteFrom('sessions').where('account_id', '=', invite.account_id).execute()
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

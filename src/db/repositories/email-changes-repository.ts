import type { Kysely } from 'kysely'
import type { AccountRow, Database, EmailChangeRow, NewAuditEventRow } from '../schema.js'
import { InvalidParameterError } from '../../errors.js'
import { recordEventIn } from './audit-events-repository.js'
import { isUniqueViolation } from '../translate-errors.js'

/** Email changes holders asked for, each waiting for the operator's confirmation. */
export class EmailChangesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  find(accountId: number): Promise<EmailChangeRow | undefined> {
    return this.db.selectFrom('email_changes').selectAll().where('account_id', '=', accountId).executeTakeFirst()
  }

  /** Every pending change with its account's current email, oldest first (the operator's list). */
  listPending(): Promise<Array<EmailChangeRow & { email: string }>> {
    return this.db
      .selectFrom('email_changes')
      .innerJoin('accounts', 'accounts.id', 'email_changes.account_id')
      .selectAll('email_changes')
      .select('accounts.email')
      .orderBy('email_changes.requested_at')
      .orderBy('email_changes.id')
      .execute()
  }

  /** Stores the account's one pending change (a new request replaces the one before), with its event. */
  async request(accountId: number, newEmail: string, now: number, event: NewAuditEventRow): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('email_changes')
        .values({ account_id: accountId, new_email: newEmail, requested_at: now })
        .onConflict((conflict) => conflict.column('account_id').doUpdateSet({ new_email: newEmail, requested_at: now }))
        .execute()
      await recordEventIn(trx, event)
    })
  }

  /**
   * Drops the pending change, with its event; whether there was one. With `newEmail`, only a change to
   * that address: one the holder asked for since (another address) stays.
   */
  async cancel(accountId: number, event: NewAuditEventRow, newEmail?: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      let deleting = trx.deleteFrom('email_changes').where('account_id', '=', accountId)
      if (newEmail !== undefined) deleting = deleting.where('new_email', '=', newEmail)
      const result = await deleting.executeTakeFirst()
      if (Number(result.numDeletedRows) === 0) return false
      await recordEventIn(trx, event)
      return true
    })
  }

  /**
   * Applies the pending change: the account's email becomes the new one and the change is gone, with
   * its event, in one transaction. Undefined when none is pending. An address another account took
   * meanwhile (in any letter case: the unique index on lower(email)) is refused, and nothing changes.
   */
  async confirm(
    accountId: number,
    event: (change: { oldEmail: string; newEmail: string }) => NewAuditEventRow,
  ): Promise<{ account: AccountRow; oldEmail: string } | undefined> {
    try {
      return await this.db.transaction().execute(async (trx) => {
        const change = await trx.deleteFrom('email_changes').where('account_id', '=', accountId).returningAll().executeTakeFirst()
        if (!change) return undefined
        const before = await trx.selectFrom('accounts').select('email').where('id', '=', accountId).executeTakeFirstOrThrow()
        const account = await trx
          .updateTable('accounts')
          .set({ email: change.new_email })
          .where('id', '=', accountId)
          .returningAll()
          .executeTakeFirstOrThrow()
        await recordEventIn(trx, event({ oldEmail: before.email, newEmail: change.new_email }))
        return { account, oldEmail: before.email }
      })
    } catch (error) {
      if (isUniqueViolation(error)) throw new InvalidParameterError('Another account has this email address (in some letter case) now.')
      throw error
    }
  }
}

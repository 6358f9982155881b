import type { Kysely } from 'kysely'
import type { Database } from '../schema.js'

/**
 * Every holder's stored TOTP secret, read and replaced one by one, apart from sign-in: what
 * `fileshare two-factor encrypt-secrets` works through (services/two-factor-encryption.ts).
 */
export class TwoFactorSecretsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Up to `limit` stored secrets of accounts after `afterAccountId`, by account id (a page that a running server's changes do not shift). */
  page(afterAccountId: number, limit: number): Promise<Array<{ account_id: number; secret: string }>> {
    return this.db
      .selectFrom('account_two_factor')
      .select(['account_id', 'secret'])
      .where('account_id', '>', afterAccountId)
      .orderBy('account_id')
      .limit(limit)
      .execute()
  }

  /**
   * Replaces a stored secret, only if it is still `previous` (a conditional UPDATE): an enrolment
   * started again, a second factor turned off or another run meanwhile keeps its own. Whether it did.
   */
  async replace(accountId: number, previous: string, next: string): Promise<boolean> {
    const result = await this.db
      .updateTable('account_two_factor')
      .set({ secret: next })
      .where('account_id', '=', accountId)
      .where('secret', '=', previous)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }
}

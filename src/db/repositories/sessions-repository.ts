import type { Kysely } from 'kysely'
import type { AccountRow, Database, SessionRow } from '../schema.js'
import { recordChangeIn, type PendingEvent } from './audit-events-repository.js'

export class SessionsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Stores the session with its event (session.signed_in) in one transaction. */
  create(session: Omit<SessionRow, 'id'>, event?: PendingEvent<SessionRow>): Promise<SessionRow> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.insertInto('sessions').values(session).returningAll().executeTakeFirstOrThrow()
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  /**
   * The session stored under `tokenHash`, unexpired and used since `idleSince`, with its account and
   * whether the account has a second factor (a setting may require one before anything else).
   */
  async findValid(
    tokenHash: string,
    now: number,
    idleSince: number,
  ): Promise<{ session: SessionRow; account: AccountRow; twoFactor: boolean } | undefined> {
    const session = await this.db
      .selectFrom('sessions')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .where('expires_at', '>', now)
      .where('last_seen_at', '>', idleSince)
      .executeTakeFirst()
    if (!session) return undefined
    const account = await this.db
      .selectFrom('accounts')
      .leftJoin('account_two_factor', 'account_two_factor.account_id', 'accounts.id')
      .selectAll('accounts')
      .select('account_two_factor.enabled_at as two_factor_enabled_at')
      .where('accounts.id', '=', session.account_id)
      .executeTakeFirst()
    if (!account) return undefined
    const { two_factor_enabled_at: enabledAt, ...row } = account
    return { session, account: row, twoFactor: enabledAt !== null && enabledAt !== undefined }
  }

  /** The account's sessions still valid at `now` (unexpired, used since `idleSince`), most recently used first. */
  listValid(accountId: number, now: number, idleSince: number): Promise<SessionRow[]> {
    return this.db
      .selectFrom('sessions')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('expires_at', '>', now)
      .where('last_seen_at', '>', idleSince)
      .orderBy('last_seen_at', 'desc')
      .orderBy('id', 'desc')
      .execute()
  }

  /** Ends the account's session with row id `id`, with its event; whether there was one (of this account) to end. */
  async deleteById(accountId: number, id: number, event?: PendingEvent<SessionRow>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .deleteFrom('sessions')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .returningAll()
        .executeTakeFirst()
      await recordChangeIn(trx, event, row)
      return row !== undefined
    })
  }

  /** Ends the session stored under `tokenHash`, with its event when there was one to end. */
  async delete(tokenHash: string, event?: PendingEvent<SessionRow>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = await trx.deleteFrom('sessions').where('token_hash', '=', tokenHash).returningAll().executeTakeFirst()
      await recordChangeIn(trx, event, row)
    })
  }

  /** Records a use of the session (the idle timeout counts from the last one). */
  async touch(id: number, now: number): Promise<void> {
    await this.db.updateTable('sessions').set({ last_seen_at: now }).where('id', '=', id).where('last_seen_at', '<', now).execute()
  }

  /**
   * Ends every session of the account ("sign out everywhere"), and the sign-ins waiting for a
   * second factor: one of those would otherwise become a session a minute later.
   */
  async deleteForAccount(accountId: number, event?: PendingEvent<number>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const result = await trx.deleteFrom('sessions').where('account_id', '=', accountId).executeTakeFirst()
      await trx.deleteFrom('sign_in_challenges').where('account_id', '=', accountId).execute()
      await recordChangeIn(trx, event, Number(result.numDeletedRows))
    })
  }

  /** Removes sessions past their lifetime or idle since `idleSince`. */
  async deleteExpired(now: number, idleSince: number): Promise<void> {
    await this.db
      .deleteFrom('sessions')
      .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleSince)]))
      .execute()
  }
}

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

  /** The session stored under `tokenHash`, unexpired and used since `idleSince`, with its account. */
  async findValid(tokenHash: string, now: number, idleSince: number): Promise<{ session: SessionRow; account: AccountRow } | undefined> {
    const session = await this.db
      .selectFrom('sessions')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .where('expires_at', '>', now)
      .where('last_seen_at', '>', idleSince)
      .executeTakeFirst()
    if (!session) return undefined
    const account = await this.db.selectFrom('accounts').selectAll().where('id', '=', session.account_id).executeTakeFirst()
    return account && { session, account }
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

  /** Ends every session of the account ("sign out everywhere"). */
  async deleteForAccount(accountId: number, event?: PendingEvent<number>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const result = await trx.deleteFrom('sessions').where('account_id', '=', accountId).executeTakeFirst()
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

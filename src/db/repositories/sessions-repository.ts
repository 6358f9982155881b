import type { Kysely } from 'kysely'
import type { AccountRow, Database, SessionRow } from '../schema.js'

export class SessionsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  create(session: Omit<SessionRow, 'id'>): Promise<SessionRow> {
    return this.db.insertInto('sessions').values(session).returningAll().executeTakeFirstOrThrow()
  }

  /** The unexpired session stored under `tokenHash`, with its account. */
  async findValid(tokenHash: string, now: number): Promise<{ session: SessionRow; account: AccountRow } | undefined> {
    const session = await this.db
      .selectFrom('sessions')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .where('expires_at', '>', now)
      .executeTakeFirst()
    if (!session) return undefined
    const account = await this.db.selectFrom('accounts').selectAll().where('id', '=', session.account_id).executeTakeFirst()
    return account && { session, account }
  }

  async delete(tokenHash: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute()
  }

  async deleteExpired(now: number): Promise<void> {
    await this.db.deleteFrom('sessions').where('expires_at', '<=', now).execute()
  }
}

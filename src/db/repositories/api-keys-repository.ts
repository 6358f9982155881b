import type { Insertable, Kysely } from 'kysely'
import type { AccountRow, ApiKeyRow, ApiKeysTable, Database } from '../schema.js'
import { recordChangeIn, type PendingEvent } from './audit-events-repository.js'

export class ApiKeysRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts the key and its event in one transaction. */
  create(key: Insertable<ApiKeysTable>, event?: PendingEvent<ApiKeyRow>): Promise<ApiKeyRow> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.insertInto('api_keys').values(key).returningAll().executeTakeFirstOrThrow()
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  /** The key with its account, for authentication. */
  async findByHash(keyHash: string): Promise<{ key: ApiKeyRow; account: AccountRow } | undefined> {
    const key = await this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst()
    if (!key) return undefined
    const account = await this.db.selectFrom('accounts').selectAll().where('id', '=', key.account_id).executeTakeFirst()
    return account && { key, account }
  }

  findById(id: number): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
  }

  listForAccount(accountId: number): Promise<ApiKeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('id').execute()
  }

  /** Revokes the key if it is active (and, given `accountId`, if that account owns it), with its event. */
  revoke(id: number, now: number, accountId?: number, event?: PendingEvent<ApiKeyRow>): Promise<ApiKeyRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      let query = trx.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null)
      if (accountId !== undefined) query = query.where('account_id', '=', accountId)
      const row = await query.returningAll().executeTakeFirst()
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  /** Records a use: when, and from which address. */
  async touch(id: number, now: number, ip: string | null): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: now, last_used_ip: ip }).where('id', '=', id).execute()
  }
}

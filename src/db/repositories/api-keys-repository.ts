import type { Kysely } from 'kysely'
import type { AccountRow, ApiKeyRow, Database } from '../schema.js'

export class ApiKeysRepository {
  constructor(private readonly db: Kysely<Database>) {}

  create(key: Omit<ApiKeyRow, 'id' | 'last_used_at' | 'revoked_at'>): Promise<ApiKeyRow> {
    return this.db.insertInto('api_keys').values(key).returningAll().executeTakeFirstOrThrow()
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

  /** Revokes the key if it is active (and, given `accountId`, if that account owns it). */
  async revoke(id: number, now: number, accountId?: number): Promise<ApiKeyRow | undefined> {
    let query = this.db.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null)
    if (accountId !== undefined) query = query.where('account_id', '=', accountId)
    return query.returningAll().executeTakeFirst()
  }

  async touch(id: number, now: number): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', id).execute()
  }
}

import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../schema.js'

type Executor = Kysely<Database> | Transaction<Database>

/**
 * Reserves `bytes` more under reservation `id` if the account's used plus reserved bytes stay within
 * `quota` (null: no quota), in the caller's transaction. The check and the reservation are one
 * conditional UPDATE, so concurrent uploads, from any number of instances, can never push
 * `total_size + storage_reserved` past the quota. False, with nothing written, when they would.
 */
export async function reserveStorageIn(
  trx: Transaction<Database>,
  reservation: { id: string; accountId: number; expiresAt: number },
  bytes: number,
  quota: number | null,
): Promise<boolean> {
  let query = trx
    .updateTable('accounts')
    .set({ storage_reserved: sql`storage_reserved + ${bytes}` })
    .where('id', '=', reservation.accountId)
  if (quota !== null) query = query.where(sql<boolean>`total_size + storage_reserved + ${bytes} <= ${quota}`)
  const result = await query.executeTakeFirst()
  if (result.numUpdatedRows === 0n) return false
  await trx
    .insertInto('storage_reservations')
    .values({ id: reservation.id, account_id: reservation.accountId, bytes, expires_at: reservation.expiresAt })
    .onConflict((conflict) =>
      conflict.column('id').doUpdateSet({ bytes: sql`storage_reservations.bytes + ${bytes}`, expires_at: reservation.expiresAt }),
    )
    .execute()
  return true
}

/** Gives back what reservation `id` holds, in the caller's transaction; 0 when there is none. */
export async function releaseStorageIn(trx: Executor, id: string): Promise<number> {
  const row = await trx.deleteFrom('storage_reservations').where('id', '=', id).returning(['account_id', 'bytes']).executeTakeFirst()
  if (!row) return 0
  await trx
    .updateTable('accounts')
    .set({ storage_reserved: sql`storage_reserved - ${row.bytes}` })
    .where('id', '=', row.account_id)
    .execute()
  return row.bytes
}

/** Gives back the part of reservation `id` above `keep` bytes, in the caller's transaction. */
export async function shrinkStorageIn(trx: Executor, id: string, keep: number): Promise<void> {
  const row = await trx.selectFrom('storage_reservations').select(['account_id', 'bytes']).where('id', '=', id).executeTakeFirst()
  if (!row || row.bytes <= keep) return
  await trx.updateTable('storage_reservations').set({ bytes: keep }).where('id', '=', id).execute()
  await trx
    .updateTable('accounts')
    .set({ storage_reserved: sql`storage_reserved - ${row.bytes - keep}` })
    .where('id', '=', row.account_id)
    .execute()
}

/** Storage reservations of uploads in progress (see reserveStorageIn). */
export class StorageReservationsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  reserve(reservation: { id: string; accountId: number; expiresAt: number }, bytes: number, quota: number | null): Promise<boolean> {
    return this.db.transaction().execute((trx) => reserveStorageIn(trx, reservation, bytes, quota))
  }

  release(id: string): Promise<number> {
    return this.db.transaction().execute((trx) => releaseStorageIn(trx, id))
  }

  /** Moves the expiry of a reservation whose upload is still running. */
  async extend(id: string, expiresAt: number): Promise<void> {
    await this.db.updateTable('storage_reservations').set({ expires_at: expiresAt }).where('id', '=', id).execute()
  }

  /** Gives back every reservation that expired before `now` (its holder died); returns how many. */
  async releaseExpired(now: number): Promise<number> {
    const due = await this.db.selectFrom('storage_reservations').select('id').where('expires_at', '<', now).limit(1000).execute()
    let released = 0
    for (const { id } of due) {
      // Re-checked inside: a holder that extended it meanwhile keeps it.
      const gone = await this.db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('storage_reservations').select('expires_at').where('id', '=', id).executeTakeFirst()
        if (!row || row.expires_at >= now) return false
        await releaseStorageIn(trx, id)
        return true
      })
      if (gone) released++
    }
    return released
  }
}

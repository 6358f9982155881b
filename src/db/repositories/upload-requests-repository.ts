import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, UploadRequestRow } from '../schema.js'
import { recordChangeIn, type PendingEvent } from './audit-events-repository.js'

type Executor = Kysely<Database> | Transaction<Database>
type RequestChanges = Partial<
  Pick<
    UploadRequestRow,
    'label' | 'message' | 'expires_at' | 'max_files' | 'max_file_size' | 'max_total_size' | 'password_hash' | 'file_expires_in'
  >
>

/**
 * Reserves one file and `bytes` of the request's room for a guest's upload, in the caller's
 * transaction: one conditional UPDATE, so that concurrent guests on any number of instances can
 * never pass the request's max_files or max_total_size (PostgreSQL re-checks the condition on the
 * row as the previous writer left it). False, with nothing written, when the request is closed,
 * expired or has no room.
 */
export async function reserveRequestRoomIn(trx: Transaction<Database>, requestId: number, bytes: number, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('upload_requests')
    .set({ files_reserved: sql`files_reserved + 1`, bytes_reserved: sql`bytes_reserved + ${bytes}` })
    .where('id', '=', requestId)
    .where('closed_at', 'is', null)
    .where('expires_at', '>', now)
    .where((eb) => eb.or([eb('max_files', 'is', null), eb(sql`files_received + files_reserved`, '<', eb.ref('max_files'))]))
    .where((eb) =>
      eb.or([eb('max_total_size', 'is', null), eb(sql`bytes_received + bytes_reserved + ${bytes}`, '<=', eb.ref('max_total_size'))]),
    )
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Gives back the room an upload held that ended without a file (terminated, expired, refused). */
export async function releaseRequestRoomIn(trx: Executor, requestId: number, bytes: number): Promise<void> {
  await trx
    .updateTable('upload_requests')
    .set({ files_reserved: sql`files_reserved - 1`, bytes_reserved: sql`bytes_reserved - ${bytes}` })
    .where('id', '=', requestId)
    .execute()
}

/**
 * Turns an upload's reservation into a received file, in the completing transaction; the request
 * as it is then, or undefined (nothing written) when it no longer takes files: a guest's file is
 * never kept from a request that was closed or expired while it was sent.
 */
export async function receiveIntoRequestIn(
  trx: Transaction<Database>,
  requestId: number,
  reservedBytes: number,
  size: number,
  now: number,
): Promise<UploadRequestRow | undefined> {
  return trx
    .updateTable('upload_requests')
    .set({
      files_reserved: sql`files_reserved - 1`,
      bytes_reserved: sql`bytes_reserved - ${reservedBytes}`,
      files_received: sql`files_received + 1`,
      bytes_received: sql`bytes_received + ${size}`,
    })
    .where('id', '=', requestId)
    .where('closed_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst()
}

/** Upload requests (../shared/spec/upload-requests.md): every query of the resource lives here. */
export class UploadRequestsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  create(
    row: Omit<UploadRequestRow, 'id' | 'files_received' | 'bytes_received' | 'files_reserved' | 'bytes_reserved'>,
    event?: PendingEvent<UploadRequestRow>,
  ): Promise<UploadRequestRow> {
    return this.db.transaction().execute(async (trx) => {
      const created = await trx.insertInto('upload_requests').values(row).returningAll().executeTakeFirstOrThrow()
      await recordChangeIn(trx, event, created)
      return created
    })
  }

  /** The account's requests, newest first. */
  listForAccount(accountId: number): Promise<UploadRequestRow[]> {
    return this.db.selectFrom('upload_requests').selectAll().where('account_id', '=', accountId).orderBy('id', 'desc').execute()
  }

  findOwned(accountId: number, id: number): Promise<UploadRequestRow | undefined> {
    return this.db.selectFrom('upload_requests').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst()
  }

  findById(id: number): Promise<UploadRequestRow | undefined> {
    return this.db.selectFrom('upload_requests').selectAll().where('id', '=', id).executeTakeFirst()
  }

  findByToken(token: string): Promise<UploadRequestRow | undefined> {
    return this.db.selectFrom('upload_requests').selectAll().where('token', '=', token).executeTakeFirst()
  }

  update(
    accountId: number,
    id: number,
    changes: RequestChanges,
    event?: PendingEvent<UploadRequestRow>,
  ): Promise<UploadRequestRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('upload_requests')
        .set(changes)
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .returningAll()
        .executeTakeFirst()
      await recordChangeIn(trx, event, updated)
      return updated
    })
  }

  /** Closes the request (a closed one stays as it is, and records nothing); undefined when it is not the account's. */
  close(accountId: number, id: number, now: number, event?: PendingEvent<UploadRequestRow>): Promise<UploadRequestRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const closed = await trx
        .updateTable('upload_requests')
        .set({ closed_at: now })
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where('closed_at', 'is', null)
        .returningAll()
        .executeTakeFirst()
      if (!closed)
        return trx.selectFrom('upload_requests').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst()
      await recordChangeIn(trx, event, closed)
      return closed
    })
  }

  /** Deletes the request (its files stay); the row as it was, or undefined when it is not the account's. */
  delete(accountId: number, id: number, event?: PendingEvent<UploadRequestRow>): Promise<UploadRequestRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const deleted = await trx
        .deleteFrom('upload_requests')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .returningAll()
        .executeTakeFirst()
      await recordChangeIn(trx, event, deleted)
      return deleted
    })
  }

  /** Whether the request still takes files at `now` (its guests' uploads in progress go on only while it does). */
  async takesFiles(id: number, now: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('upload_requests')
      .select('id')
      .where('id', '=', id)
      .where('closed_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst()
    return row !== undefined
  }
}

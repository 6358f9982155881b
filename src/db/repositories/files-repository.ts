import { recordChangeIn, type PendingEvent } from './audit-events-repository.js'
import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely'
import type { Database, FileRow, ListedFile, NewFileRow } from '../schema.js'
import { takeUploadSlotIn } from './accounts-repository.js'
import { compiledOnce } from './compiled-query.js'
import { releaseStorageIn } from './storage-reservations-repository.js'
import { keysInBatches } from './keys-in-batches.js'

/**
 * A file that has not expired at `now`: from its expires_at on, a file is gone for everyone, before
 * the collector removes it (../shared/spec/links.md, File expiry).
 */
export function fileIsLive(eb: ExpressionBuilder<Database, 'files'>, now: number) {
  return eb.or([eb('files.expires_at', 'is', null), eb('files.expires_at', '>', now)])
}

/**
 * Inserts a file row with its default link (the file's token, no policy) and bumps its account's
 * kept counters, inside the caller's transaction.
 */
export async function insertFileIn(trx: Transaction<Database>, file: NewFileRow): Promise<FileRow> {
  const row = await trx.insertInto('files').values(file).returningAll().executeTakeFirstOrThrow()
  await trx
    .insertInto('links')
    .values({ file_id: row.id, account_id: row.account_id, token: row.token, is_default: 1, created_at: row.created_at })
    .execute()
  await trx
    .updateTable('accounts')
    .set({ total_files: sql`total_files + 1`, total_size: sql`total_size + ${file.size}` })
    .where('id', '=', file.account_id)
    .execute()
  return row
}

/**
 * The columns of a list page, read as arrays (compiled-query.ts): each column read costs
 * better-sqlite3 about as much per row as finding the row, so a page leaves out the two that are
 * never shown (the owner, known already, and the storage key).
 */
const LISTED_COLUMNS = [
  'id',
  'token',
  'filename',
  'size',
  'content_type',
  'sha256',
  'created_at',
  'download_count',
  'expires_at',
  'source_type',
  'upload_request_id',
  'scan_status',
  'scan_signature',
  'scanned_at',
] as const satisfies ReadonlyArray<keyof ListedFile>

function toListedFile(row: ListedFile | unknown[]): ListedFile {
  if (!Array.isArray(row)) return row
  return {
    id: row[0] as number,
    token: row[1] as string,
    filename: row[2] as string,
    size: row[3] as number,
    content_type: row[4] as string,
    sha256: row[5] as string,
    created_at: row[6] as number,
    download_count: row[7] as number,
    expires_at: row[8] as number | null,
    source_type: row[9] as ListedFile['source_type'],
    upload_request_id: row[10] as number | null,
    scan_status: row[11] as ListedFile['scan_status'],
    scan_signature: row[12] as string | null,
    scanned_at: row[13] as number | null,
  }
}

export class FilesRepository {
  private readonly findOwnedQuery
  private readonly pageQueries
  private readonly beforeIdQuery

  constructor(private readonly db: Kysely<Database>) {
    this.findOwnedQuery = compiledOnce(db, 3, (accountId: number, id: number, now: number) =>
      db
        .selectFrom('files')
        .selectAll()
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where((eb) => fileIsLive(eb, now)),
    )
    const page = (direction: 'asc' | 'desc') =>
      compiledOnce(
        db,
        4,
        (accountId: number, offset: number, limit: number, now: number) =>
          db
            .selectFrom('files')
            .select(LISTED_COLUMNS)
            .where('account_id', '=', accountId)
            .where((eb) => fileIsLive(eb, now))
            .orderBy('created_at', direction)
            .orderBy('id', direction)
            .limit(limit)
            .offset(offset),
        true,
      )
    this.pageQueries = { asc: page('asc'), desc: page('desc') }
    this.beforeIdQuery = compiledOnce(
      db,
      4,
      (accountId: number, beforeId: number, limit: number, now: number) =>
        db
          .selectFrom('files')
          .select(LISTED_COLUMNS)
          .where('account_id', '=', accountId)
          .where('id', '<', beforeId)
          .where((eb) => fileIsLive(eb, now))
          .orderBy('id', 'desc')
          .limit(limit),
      true,
    )
  }

  /** Inserts the row and bumps the account's kept counters in one transaction. */
  insert(file: NewFileRow): Promise<FileRow> {
    return this.db.transaction().execute((trx) => insertFileIn(trx, file))
  }

  /**
   * Takes one of the day's upload slots and inserts the row, in one transaction: undefined, with
   * nothing written, when no slot is left. A slot is then never held by an upload that fails, is
   * cut off, or whose process dies. The upload's storage reservation, if any, turns into the file's
   * used bytes in the same transaction.
   */
  insertTakingUploadSlot(
    file: NewFileRow,
    day: string,
    dailyUploads: number,
    reservationId?: string,
    event?: PendingEvent<FileRow>,
  ): Promise<FileRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      if ((await takeUploadSlotIn(trx, file.account_id, day, dailyUploads)) === undefined) return undefined
      if (reservationId !== undefined) await releaseStorageIn(trx, reservationId)
      const row = await insertFileIn(trx, file)
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  /** The owner's file, unless it has expired at `now`. */
  async findOwned(accountId: number, id: number, now: number): Promise<FileRow | undefined> {
    return (await this.findOwnedQuery(accountId, id, now))[0]
  }

  /**
   * Newest first, ties by id (highest first), leaving out files expired at `now`; served by the
   * files_account_order index. `oldestFirst` walks the same index from its other end, for pages
   * nearer that end.
   */
  async listPage(accountId: number, offset: number, limit: number, now: number, oldestFirst = false): Promise<ListedFile[]> {
    return (await this.pageQueries[oldestFirst ? 'asc' : 'desc'](accountId, offset, limit, now)).map(toListedFile)
  }

  /** Up to `limit` live files of the account with an id below `beforeId`, highest id first (files_account_id_order). */
  async listBeforeId(accountId: number, beforeId: number, limit: number, now: number): Promise<ListedFile[]> {
    return (await this.beforeIdQuery(accountId, beforeId, limit, now)).map(toListedFile)
  }

  /** Up to `limit` live files an upload request brought in, highest id first, below `beforeId` when given (files_upload_request). */
  async listForUploadRequest(accountId: number, requestId: number, limit: number, now: number, beforeId?: number): Promise<ListedFile[]> {
    let query = this.db
      .selectFrom('files')
      .select(LISTED_COLUMNS)
      .where('upload_request_id', '=', requestId)
      .where('account_id', '=', accountId)
      .where((eb) => fileIsLive(eb, now))
    if (beforeId !== undefined) query = query.where('id', '<', beforeId)
    return query.orderBy('id', 'desc').limit(limit).execute()
  }

  /**
   * Deletes the owner's file unless it expired at `now` (its links and grants go with it) and
   * lowers the account's counters in one transaction; undefined if absent.
   */
  deleteOwned(accountId: number, id: number, now: number, event?: PendingEvent<FileRow>): Promise<FileRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .deleteFrom('files')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where((eb) => fileIsLive(eb, now))
        .returningAll()
        .executeTakeFirst()
      if (row) await lowerCountersIn(trx, row)
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  /**
   * Removes up to `limit` files expired at `now`, each with its counters in its own transaction
   * (safe on several instances: a row another sweep took is simply not found).
   */
  async deleteExpired(now: number, limit: number, event?: PendingEvent<FileRow>): Promise<FileRow[]> {
    const due = await this.db.selectFrom('files').select('id').where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute()
    const removed: FileRow[] = []
    for (const { id } of due) {
      const row = await this.db.transaction().execute(async (trx) => {
        const deleted = await trx.deleteFrom('files').where('id', '=', id).where('expires_at', '<=', now).returningAll().executeTakeFirst()
        if (deleted) await lowerCountersIn(trx, deleted)
        await recordChangeIn(trx, event, deleted)
        return deleted
      })
      if (row) removed.push(row)
    }
    return removed
  }

  /** Renames the owner's live file and sets or clears its expiry, with its event; undefined if absent. */
  update(
    accountId: number,
    id: number,
    changes: { filename?: string; expires_at?: number | null },
    now: number,
    event?: PendingEvent<FileRow>,
  ): Promise<FileRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('files')
        .set(changes)
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where((eb) => fileIsLive(eb, now))
        .returningAll()
        .executeTakeFirst()
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  /** Which of `storageKeys` a file row references (garbage collection asks a batch at a time). */
  referencedStorageKeys(storageKeys: readonly string[]): Promise<Set<string>> {
    return keysInBatches(storageKeys, async (batch) =>
      (await this.db.selectFrom('files').select('storage_key').where('storage_key', 'in', batch).execute()).map((row) => row.storage_key),
    )
  }
}

/** Takes a removed file out of its account's kept counters, downloads included. */
export async function lowerCountersIn(trx: Transaction<Database>, row: FileRow): Promise<void> {
  await trx
    .updateTable('accounts')
    .set({
      total_files: sql`total_files - 1`,
      total_size: sql`total_size - ${row.size}`,
      total_downloads: sql`total_downloads - ${row.download_count}`,
    })
    .where('id', '=', row.account_id)
    .execute()
}

import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, FileRow, ListedFile, NewFileRow } from '../schema.js'
import { takeUploadSlotIn } from './accounts-repository.js'
import { compiledOnce } from './compiled-query.js'
import { keysInBatches } from './keys-in-batches.js'

/** Inserts a file row and bumps its account's kept counters, inside the caller's transaction. */
export async function insertFileIn(trx: Transaction<Database>, file: NewFileRow): Promise<FileRow> {
  const row = await trx.insertInto('files').values(file).returningAll().executeTakeFirstOrThrow()
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
  }
}

export class FilesRepository {
  private readonly findOwnedQuery
  private readonly pageQueries

  constructor(private readonly db: Kysely<Database>) {
    this.findOwnedQuery = compiledOnce(db, 2, (accountId: number, id: number) =>
      db.selectFrom('files').selectAll().where('id', '=', id).where('account_id', '=', accountId),
    )
    const page = (direction: 'asc' | 'desc') =>
      compiledOnce(
        db,
        3,
        (accountId: number, offset: number, limit: number) =>
          db
            .selectFrom('files')
            .select(LISTED_COLUMNS)
            .where('account_id', '=', accountId)
            .orderBy('created_at', direction)
            .orderBy('id', direction)
            .limit(limit)
            .offset(offset),
        true,
      )
    this.pageQueries = { asc: page('asc'), desc: page('desc') }
  }

  /** Inserts the row and bumps the account's kept counters in one transaction. */
  insert(file: NewFileRow): Promise<FileRow> {
    return this.db.transaction().execute((trx) => insertFileIn(trx, file))
  }

  /**
   * Takes one of the day's upload slots and inserts the row, in one transaction: undefined, with
   * nothing written, when no slot is left. A slot is then never held by an upload that fails, is
   * cut off, or whose process dies.
   */
  insertTakingUploadSlot(file: NewFileRow, day: string, dailyUploads: number): Promise<FileRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      if ((await takeUploadSlotIn(trx, file.account_id, day, dailyUploads)) === undefined) return undefined
      return insertFileIn(trx, file)
    })
  }

  async findOwned(accountId: number, id: number): Promise<FileRow | undefined> {
    return (await this.findOwnedQuery(accountId, id))[0]
  }

  findByToken(token: string): Promise<FileRow | undefined> {
    return this.db.selectFrom('files').selectAll().where('token', '=', token).executeTakeFirst()
  }

  /**
   * Newest first, ties by id (highest first); served by the files_account_order index.
   * `oldestFirst` walks the same index from its other end, for pages nearer that end.
   */
  async listPage(accountId: number, offset: number, limit: number, oldestFirst = false): Promise<ListedFile[]> {
    return (await this.pageQueries[oldestFirst ? 'asc' : 'desc'](accountId, offset, limit)).map(toListedFile)
  }

  /** Deletes the row and lowers the account's counters in one transaction; undefined if absent. */
  deleteOwned(accountId: number, id: number): Promise<FileRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.deleteFrom('files').where('id', '=', id).where('account_id', '=', accountId).returningAll().executeTakeFirst()
      if (!row) return undefined
      await trx
        .updateTable('accounts')
        .set({
          total_files: sql`total_files - 1`,
          total_size: sql`total_size - ${row.size}`,
          total_downloads: sql`total_downloads - ${row.download_count}`,
        })
        .where('id', '=', accountId)
        .execute()
      return row
    })
  }

  /** Counts one download on the file and on its account's kept total; false if the file is gone. */
  countDownload(file: Pick<FileRow, 'id' | 'account_id'>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('files')
        .set({ download_count: sql`download_count + 1` })
        .where('id', '=', file.id)
        .executeTakeFirst()
      if (result.numUpdatedRows === 0n) return false
      await trx
        .updateTable('accounts')
        .set({ total_downloads: sql`total_downloads + 1` })
        .where('id', '=', file.account_id)
        .execute()
      return true
    })
  }

  /** Which of `storageKeys` a file row references (garbage collection asks a batch at a time). */
  referencedStorageKeys(storageKeys: readonly string[]): Promise<Set<string>> {
    return keysInBatches(storageKeys, async (batch) =>
      (await this.db.selectFrom('files').select('storage_key').where('storage_key', 'in', batch).execute()).map((row) => row.storage_key),
    )
  }
}

import Database from 'better-sqlite3'
import { sql, type Kysely } from 'kysely'
import type { Database as Schema, UploadRow } from '../schema.js'

/** What a check of a file's bytes needs of its row: never its download token. */
export interface RecordedBlob {
  fileId: number
  accountId: number
  storageKey: string
  size: number
  sha256: string
}

/** An open resumable upload's committed bytes, as its row records them. */
export interface OpenUploadBytes {
  storageKey: string
  committedBytes: number
}

/**
 * The queries of backup, restore and verify (services/backups.ts, services/blob-verifier.ts): the
 * recorded size and SHA-256 of every file, a batch or a random sample at a time.
 */
export class FileIntegrityRepository {
  constructor(private readonly db: Kysely<Schema>) {}

  /** Up to `limit` files with ids above `afterId`, by id: a walk over every row without OFFSET. */
  async filesAfter(afterId: number, limit: number): Promise<RecordedBlob[]> {
    const rows = await this.db
      .selectFrom('files')
      .select(['id', 'account_id', 'storage_key', 'size', 'sha256'])
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute()
    return rows.map(toRecordedBlob)
  }

  /** `count` files chosen at random (all of them when there are fewer). */
  async sampleFiles(count: number): Promise<RecordedBlob[]> {
    const rows = await this.db
      .selectFrom('files')
      .select(['id', 'account_id', 'storage_key', 'size', 'sha256'])
      .orderBy(sql`random()`)
      .limit(count)
      .execute()
    return rows.map(toRecordedBlob).sort((a, b) => a.fileId - b.fileId)
  }

  /** Which of `ids` have a file row. */
  async existingFileIds(ids: readonly number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set()
    const rows = await this.db.selectFrom('files').select('id').where('id', 'in', ids).execute()
    return new Set(rows.map((row) => row.id))
  }

  /** The resumable uploads still open, with the bytes each has committed. */
  async openUploads(): Promise<OpenUploadBytes[]> {
    const status: UploadRow['status'] = 'open'
    const rows = await this.db.selectFrom('uploads').select(['storage_key', 'upload_offset']).where('status', '=', status).execute()
    return rows.map((row) => ({ storageKey: row.storage_key, committedBytes: row.upload_offset }))
  }
}

function toRecordedBlob(row: { id: number; account_id: number; storage_key: string; size: number; sha256: string }): RecordedBlob {
  return { fileId: row.id, accountId: row.account_id, storageKey: row.storage_key, size: row.size, sha256: row.sha256 }
}

/**
 * Copies a SQLite database that another process may be writing, through SQLite's online backup:
 * the copy is one consistent snapshot of what was committed.
 */
export async function copySqliteOnline(sourceFile: string, targetFile: string): Promise<void> {
  const source = new Database(sourceFile, { readonly: true, fileMustExist: true })
  try {
    await source.backup(targetFile)
  } finally {
    source.close()
  }
}

/**
 * Leaves a closed SQLite database as one self-contained file (a rollback journal instead of WAL),
 * so that it can be checksummed and copied on its own; the server turns WAL back on when it opens it.
 */
export function settleSqliteFile(file: string): void {
  const database = new Database(file, { fileMustExist: true })
  try {
    database.pragma('journal_mode = DELETE')
  } finally {
    database.close()
  }
}

import { sql, type Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

/**
 * The orders GET /files can take besides upload date (files_account_order, 001), issue 37: one index
 * each, per account, ties by id, read forwards or backwards for either order. The filename's key is
 * the name with A to Z folded, in code point order: lower() folds ASCII only on SQLite, and on
 * PostgreSQL only under the "C" collation, which also orders by code point as SQLite's BINARY does
 * (files-repository.ts sorts by the very same expressions, so the planners match them).
 *
 * expires_at comes last: SQLite then tells a live file from its index entry alone, so the rows a
 * deep page skips and those a search (`q`) leaves out are never read from the table, whose rows lie
 * in id order, not in these.
 *
 * download_count changes with every download: its index is written then too, and on PostgreSQL the
 * counting update is no longer a heap-only (HOT) one (docs/api.md, `GET /files`, cost).
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const foldedName = dialect === 'postgres' ? sql`lower(filename collate "C")` : sql`lower(filename)`
  const indexes = [
    { name: 'files_account_filename', key: foldedName },
    { name: 'files_account_size', key: sql`size` },
    { name: 'files_account_downloads', key: sql`download_count` },
  ]
  for (const { name, key } of indexes) {
    await db.schema
      .createIndex(name)
      .on('files')
      .expression(sql`account_id, ${key}, id, expires_at`)
      .execute()
  }
}

import { sql, type Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

/**
 * The indexes GET /files's filters are read along (issue 37; files-repository.ts, FileFilter):
 *
 * - `type`: the account's files by content type, compared by code point ("C" on PostgreSQL, as the
 *   query does), so a top-level type is one range ("image/" up to "image0"). expires_at last, as in
 *   015, to tell a live file from the entry alone.
 * - `state=from_upload_request`: the account's files from upload requests only, few of most
 *   accounts' files (files_upload_request, 011 and 013, is by request, not by account). Its
 *   condition is on source_type, not on upload_request_id, so that a request's own file list
 *   (upload_request_id = ?) keeps to files_upload_request, which it is made for.
 * - `state=expired_links`: the account's links with an expiry, and those with a download limit,
 *   each a partial index (most links have neither). `state=expiring` has files_account_expiry (007).
 *
 * Each partial index's condition is one that the query states in those words (`x is not null`,
 * `source_type = 'upload_request'` as a literal), which SQLite needs to use it; PostgreSQL proves it.
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const contentType = dialect === 'postgres' ? sql`content_type collate "C"` : sql`content_type`
  await db.schema
    .createIndex('files_account_type')
    .on('files')
    .expression(sql`account_id, ${contentType}, id, expires_at`)
    .execute()
  await db.schema
    .createIndex('files_account_upload_request')
    .on('files')
    .columns(['account_id', 'id', 'expires_at'])
    .where(sql.ref('source_type'), '=', sql.lit('upload_request'))
    .execute()
  await db.schema
    .createIndex('links_account_expiry')
    .on('links')
    .columns(['account_id', 'expires_at', 'file_id'])
    .where(sql.ref('expires_at'), 'is not', null)
    .execute()
  await db.schema
    .createIndex('links_account_download_limit')
    .on('links')
    .columns(['account_id', 'file_id'])
    .where(sql.ref('max_downloads'), 'is not', null)
    .execute()
}

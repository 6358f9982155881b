import { sql, type Kysely } from 'kysely'

/**
 * Indexes on columns that most files leave null (a file from an upload request, a file's scan where
 * the server scans) keep only the rows that have a value: at 100 million files the full index of
 * files_upload_request was 3 GiB of nulls (docs/scale-out.md, "Sizing"). Every query on these
 * columns compares them with `=` (or a join), which implies `is not null` on SQLite and PostgreSQL
 * alike, so both still use them, with bound parameters too.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('files_upload_request').execute()
  await db.schema
    .createIndex('files_upload_request')
    .on('files')
    .columns(['upload_request_id', 'id'])
    .where(sql.ref('upload_request_id'), 'is not', null)
    .execute()
  await db.schema.dropIndex('files_scan_due').execute()
  await db.schema
    .createIndex('files_scan_due')
    .on('files')
    .columns(['scan_status', 'scan_next_at'])
    .where(sql.ref('scan_status'), 'is not', null)
    .execute()
  await db.schema.dropIndex('uploads_upload_request').execute()
  await db.schema
    .createIndex('uploads_upload_request')
    .on('uploads')
    .column('upload_request_id')
    .where(sql.ref('upload_request_id'), 'is not', null)
    .execute()
}

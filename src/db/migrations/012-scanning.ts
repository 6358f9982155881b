import type { Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

/**
 * Virus scanning (../shared/spec/upload-requests.md, second half): each file's scan (null when the
 * server does not scan), the scanner's claim on it and its retries; and the record of a file found
 * infected, whose row, bytes and links are gone but which its owner can still read.
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const bigint = dialect === 'sqlite' ? 'integer' : 'bigint'
  await db.schema.alterTable('files').addColumn('scan_status', 'text').execute()
  await db.schema.alterTable('files').addColumn('scan_signature', 'text').execute()
  await db.schema.alterTable('files').addColumn('scanned_at', bigint).execute()
  await db.schema
    .alterTable('files')
    .addColumn('scan_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  // When a pending file is due (again), and until when a scanner holds it.
  await db.schema.alterTable('files').addColumn('scan_next_at', bigint).execute()
  await db.schema.alterTable('files').addColumn('scan_lease_until', bigint).execute()
  await db.schema.createIndex('files_scan_due').on('files').columns(['scan_status', 'scan_next_at']).execute()

  await db.schema
    .createTable('infected_files')
    .addColumn('file_id', bigint, (c) => c.primaryKey())
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('size', bigint, (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('download_count', 'integer', (c) => c.notNull())
    .addColumn('expires_at', bigint)
    .addColumn('source_type', 'text', (c) => c.notNull())
    .addColumn('upload_request_id', bigint)
    .addColumn('scan_signature', 'text', (c) => c.notNull())
    .addColumn('scanned_at', bigint, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('infected_files_account').on('infected_files').columns(['account_id', 'file_id']).execute()
}

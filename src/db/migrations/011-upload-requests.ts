import type { Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

/**
 * Upload requests (../shared/spec/upload-requests.md): a holder's request for files from someone
 * without an account. The request row keeps what its guests have sent and what their uploads in
 * progress have reserved (counted at tus creation, so concurrent guests cannot pass its limits);
 * uploads and files name the request they came through.
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const bigint = dialect === 'sqlite' ? 'integer' : 'bigint'
  const id = dialect === 'sqlite' ? 'integer' : 'bigserial'

  await db.schema
    .createTable('upload_requests')
    .addColumn('id', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    // The secret of the guest link /r/<token>; shown to its holder, like a file's link token.
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addColumn('max_files', 'integer')
    .addColumn('max_file_size', bigint)
    .addColumn('max_total_size', bigint)
    .addColumn('password_hash', 'text')
    .addColumn('file_expires_in', bigint)
    .addColumn('files_received', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes_received', bigint, (c) => c.notNull().defaultTo(0))
    // Uploads in progress: one file and their declared length each, until they complete or end.
    .addColumn('files_reserved', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes_reserved', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('closed_at', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('upload_requests_account').on('upload_requests').columns(['account_id', 'id']).execute()

  // No foreign keys to the request: deleting a request leaves its files (and their source) as they are.
  await db.schema.alterTable('uploads').addColumn('upload_request_id', bigint).execute()
  await db.schema.createIndex('uploads_upload_request').on('uploads').column('upload_request_id').execute()
  // 'api', 'dashboard' or 'upload_request' (with the request's id).
  await db.schema
    .alterTable('files')
    .addColumn('source_type', 'text', (c) => c.notNull().defaultTo('api'))
    .execute()
  await db.schema.alterTable('files').addColumn('upload_request_id', bigint).execute()
  await db.schema.createIndex('files_upload_request').on('files').columns(['upload_request_id', 'id']).execute()
}

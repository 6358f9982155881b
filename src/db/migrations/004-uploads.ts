import type { Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

/**
 * Resumable uploads (tus): one row per upload, from creation until it completes into a file, is
 * terminated, or expires. The row is also the lock: a lease with a token that every commit checks.
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const bigint = dialect === 'sqlite' ? 'integer' : 'bigint'
  await db.schema
    .createTable('uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('length', bigint)
    .addColumn('upload_offset', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('max_length', bigint, (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('storage_key', 'text', (c) => c.notNull().unique())
    .addColumn('store_state', 'text', (c) => c.notNull())
    .addColumn('next_part_number', bigint, (c) => c.notNull().defaultTo(1))
    .addColumn('hash_state', 'text', (c) => c.notNull())
    .addColumn('slot_day', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('file_id', bigint, (c) => c.references('files.id').onDelete('set null'))
    .addColumn('free_requests', bigint, (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addColumn('lease_token', 'text')
    .addColumn('lease_expires_at', bigint)
    .addColumn('release_requested', bigint, (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema.createIndex('uploads_account_id').on('uploads').column('account_id').execute()
  await db.schema.createIndex('uploads_status_expires_at').on('uploads').columns(['status', 'expires_at']).execute()
}

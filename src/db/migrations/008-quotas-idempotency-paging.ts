import { sql, type Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

/**
 * Safe retries, stable paging and storage quotas (../shared/spec/api-semantics.md):
 * - accounts get a storage quota override and the bytes reserved by uploads in progress; each
 *   reservation has a row (a multipart upload's, or a resumable upload's under its id), so that the
 *   collector can give back what a crashed instance held;
 * - idempotency keys with their stored answers, per account;
 * - an index for `before_id` pages (newest first by id).
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const bigint = dialect === 'sqlite' ? 'integer' : 'bigint'
  await db.schema.alterTable('accounts').addColumn('max_storage', bigint).execute()
  await db.schema
    .alterTable('accounts')
    .addColumn('storage_reserved', bigint, (c) => c.notNull().defaultTo(0))
    .execute()

  await db.schema
    .createTable('storage_reservations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('bytes', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('storage_reservations_expires_at').on('storage_reservations').column('expires_at').execute()

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('locked_until', bigint, (c) => c.notNull())
    .addColumn('status', bigint)
    .addColumn('headers', 'text')
    .addColumn('body', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
    .execute()
  await db.schema.createIndex('idempotency_keys_expires_at').on('idempotency_keys').column('expires_at').execute()

  await db.schema
    .createIndex('files_account_id_order')
    .on('files')
    .expression(sql`account_id, id desc`)
    .execute()
}

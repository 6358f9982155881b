import { sql, type Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

// Ids are never reused: SQLite needs AUTOINCREMENT for that; PostgreSQL sequences never go back.
function idType(dialect: DialectName) {
  return dialect === 'sqlite' ? 'integer' : 'bigserial'
}

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const bigint = dialect === 'sqlite' ? 'integer' : 'bigint'
  await db.schema
    .createTable('accounts')
    .addColumn('id', idType(dialect), (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('requests_per_minute', bigint)
    .addColumn('requests_per_day', bigint)
    .addColumn('max_file_size', bigint)
    .addColumn('daily_uploads', bigint)
    .addColumn('total_files', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('total_size', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('total_downloads', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('uploads_day', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('uploads_today', bigint, (c) => c.notNull().defaultTo(0))
    .execute()

  await db.schema
    .createTable('api_keys')
    .addColumn('id', idType(dialect), (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('last_used_at', bigint)
    .addColumn('revoked_at', bigint)
    .addColumn('expires_at', bigint)
    .execute()
  await db.schema.createIndex('api_keys_account_id').on('api_keys').column('account_id').execute()

  await db.schema
    .createTable('files')
    .addColumn('id', idType(dialect), (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('size', bigint, (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('download_count', bigint, (c) => c.notNull().defaultTo(0))
    .execute()
  // Serves the list order (newest first, ties by id) and per-account lookups.
  await db.schema
    .createIndex('files_account_order')
    .on('files')
    .expression(sql`account_id, created_at desc, id desc`)
    .execute()
}

import type { Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

// As in 001: ids are never reused (SQLite needs AUTOINCREMENT for that).
function idType(dialect: DialectName) {
  return dialect === 'sqlite' ? 'integer' : 'bigserial'
}

/** The web dashboard: account holders' passwords, their sessions, and one-time invitation links. */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const bigint = dialect === 'sqlite' ? 'integer' : 'bigint'
  await db.schema
    .createTable('account_passwords')
    .addColumn('account_id', bigint, (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('sessions')
    .addColumn('id', idType(dialect), (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('sessions_account_id').on('sessions').column('account_id').execute()
  await db.schema.createIndex('sessions_expires_at').on('sessions').column('expires_at').execute()

  await db.schema
    .createTable('account_invites')
    .addColumn('id', idType(dialect), (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addColumn('used_at', bigint)
    .execute()
  await db.schema.createIndex('account_invites_account_id').on('account_invites').column('account_id').execute()
}

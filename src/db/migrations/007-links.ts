import { sql, type Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

// As in 001: ids are never reused (SQLite needs AUTOINCREMENT for that).
function idType(dialect: DialectName) {
  return dialect === 'sqlite' ? 'integer' : 'bigserial'
}

/**
 * Links as resources (../shared/spec/links.md): every file has one or more links, each with its own
 * token and policy; files may expire; a download through a link's POST gets a one-hour grant.
 *
 * Every existing file gets its default link with the token it has now, so that no link that worked
 * before stops working. `files.token` stays as the default link's token, kept equal to it by the
 * links repository (a rotation changes both in one transaction): the list page reads it with the
 * file's other columns instead of joining the links table for each row.
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const bigint = dialect === 'sqlite' ? 'integer' : 'bigint'
  await db.schema.alterTable('files').addColumn('expires_at', bigint).execute()
  // A resumable upload's Fileshare-Expires-In: the file's lifetime counts from its completion.
  await db.schema.alterTable('uploads').addColumn('file_expires_in', bigint).execute()
  // The collector's sweep and the per-account figures read only the files that expire.
  await db.schema
    .createIndex('files_account_expiry')
    .on('files')
    .columns(['account_id', 'expires_at'])
    .where(sql.ref('expires_at'), 'is not', null)
    .execute()
  await db.schema.createIndex('files_expiry').on('files').column('expires_at').where(sql.ref('expires_at'), 'is not', null).execute()

  await db.schema
    .createTable('links')
    .addColumn('id', idType(dialect), (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('file_id', bigint, (c) => c.notNull().references('files.id').onDelete('cascade'))
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('is_default', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('label', 'text')
    .addColumn('expires_at', bigint)
    .addColumn('max_downloads', bigint)
    .addColumn('download_count', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('password_hash', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('revoked_at', bigint)
    .execute()
  await db.schema.createIndex('links_file_id').on('links').column('file_id').execute()
  await db.schema.createIndex('links_revoked_at').on('links').column('revoked_at').where(sql.ref('revoked_at'), 'is not', null).execute()

  await db.schema
    .createTable('download_grants')
    // The SHA-256 of the grant's token (hex): the token itself is only in the grant URL.
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('link_id', bigint, (c) => c.notNull().references('links.id').onDelete('cascade'))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('download_grants_link_id').on('download_grants').column('link_id').execute()
  await db.schema.createIndex('download_grants_expires_at').on('download_grants').column('expires_at').execute()

  await sql`
    insert into links (file_id, account_id, token, is_default, download_count, created_at)
    select id, account_id, token, 1, download_count, created_at from files order by id
  `.execute(db)
}

import type { Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

// As in 001: ids are never reused (SQLite needs AUTOINCREMENT for that).
function idType(dialect: DialectName) {
  return dialect === 'sqlite' ? 'integer' : 'bigserial'
}

/**
 * Protecting the account (issue 37): each session keeps the device and address it signed in from
 * (the Settings page lists them); a holder's TOTP second factor, its one-time recovery codes and the
 * sign-ins waiting for a code; and an email change waiting for the operator's confirmation.
 * Sessions that exist already have neither device nor address: the page says "unknown".
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const bigint = dialect === 'sqlite' ? 'integer' : 'bigint'

  // The user agent (cut to 200 characters, as the audit log keeps it) and the address as
  // FILESHARE_AUDIT_IP keeps it (full, truncated or none), at sign-in.
  await db.schema.alterTable('sessions').addColumn('user_agent', 'text').execute()
  await db.schema.alterTable('sessions').addColumn('ip', 'text').execute()

  // One second factor per account. `secret` is the TOTP secret as services/two-factor-secret.ts
  // stores it (encrypted when the operator set a key); `enabled_at` is null while enrolment waits
  // for its first code; `last_step` is the time step of the last code accepted (a code is never
  // accepted twice: replay).
  await db.schema
    .createTable('account_two_factor')
    .addColumn('account_id', bigint, (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('enabled_at', bigint)
    .addColumn('last_step', bigint, (c) => c.notNull().defaultTo(0))
    .execute()

  // Only the SHA-256 of each recovery code (80 random bits: no offline search finds one).
  await db.schema
    .createTable('account_recovery_codes')
    .addColumn('id', idType(dialect), (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('used_at', bigint)
    .execute()
  await db.schema
    .createIndex('account_recovery_codes_account')
    .on('account_recovery_codes')
    .columns(['account_id', 'code_hash'])
    .unique()
    .execute()

  // A sign-in whose password was right and which waits for its second factor: no session exists yet.
  // Only the SHA-256 of its token is stored; it lives minutes and a few wrong codes.
  await db.schema
    .createTable('sign_in_challenges')
    .addColumn('id', idType(dialect), (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema.createIndex('sign_in_challenges_account').on('sign_in_challenges').column('account_id').execute()

  // One pending email change per account, until the operator confirms it (no mail is sent).
  await db.schema
    .createTable('email_changes')
    .addColumn('id', idType(dialect), (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', bigint, (c) => c.notNull().unique().references('accounts.id').onDelete('cascade'))
    .addColumn('new_email', 'text', (c) => c.notNull())
    .addColumn('requested_at', bigint, (c) => c.notNull())
    .execute()
}

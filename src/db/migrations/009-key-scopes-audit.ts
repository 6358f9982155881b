import { sql, type Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

/**
 * Scoped keys and the audit log (../shared/spec/keys-and-audit.md):
 * - every key gets its scopes ('*' for every scope, so existing keys keep doing everything), the
 *   addresses it may be used from (null: anywhere) and the address of its last use;
 * - audit events, one row per change, written in the change's own transaction; paged newest first
 *   per account, and removed by age.
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const bigint = dialect === 'sqlite' ? 'integer' : 'bigint'
  await db.schema
    .alterTable('api_keys')
    .addColumn('scopes', 'text', (c) => c.notNull().defaultTo('*'))
    .execute()
  await db.schema.alterTable('api_keys').addColumn('allowed_ips', 'text').execute()
  await db.schema.alterTable('api_keys').addColumn('last_used_ip', 'text').execute()

  await db.schema
    .createTable('audit_events')
    .addColumn('id', dialect === 'sqlite' ? 'integer' : 'bigserial', (c) =>
      dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey(),
    )
    // No foreign key: an event is written inside other changes' transactions and must not take a
    // lock on the account row (PostgreSQL's key-share lock) that those changes do not already order.
    .addColumn('account_id', bigint, (c) => c.notNull())
    .addColumn('at', bigint, (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', bigint)
    .addColumn('actor_name', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('target_type', 'text')
    .addColumn('target_id', bigint)
    .addColumn('details', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute()
  await db.schema
    .createIndex('audit_events_account_order')
    .on('audit_events')
    .expression(sql`account_id, id desc`)
    .execute()
  await db.schema.createIndex('audit_events_at').on('audit_events').column('at').execute()
}

import { sql, type Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

/**
 * Webhooks (../shared/spec/webhooks.md): an account's endpoints; the outbox of messages, written in
 * the transaction of the change that causes them, one delivery per endpoint; each attempt.
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const bigint = dialect === 'sqlite' ? 'integer' : 'bigint'
  const id = dialect === 'sqlite' ? 'integer' : 'bigserial'

  await db.schema
    .createTable('webhooks')
    .addColumn('id', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', bigint, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    // '*' for every type, else the types separated by spaces.
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('disabled_reason', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    // After a rotation the old secret signs too, until then.
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', bigint)
    // The first failure since the last success; an endpoint failing for 5 days is disabled.
    .addColumn('failing_since', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('webhooks_account').on('webhooks').column('account_id').execute()

  await db.schema
    .createTable('webhook_messages')
    .addColumn('id', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('account_id', bigint, (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull().unique())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('webhook_messages_created_at').on('webhook_messages').column('created_at').execute()

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('webhook_id', bigint, (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('message_id', bigint, (c) => c.notNull().references('webhook_messages.id').onDelete('cascade'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', bigint)
    // A sender's lease: another instance takes the delivery only once it has passed.
    .addColumn('locked_until', bigint)
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute()
  // The cascade from a purged message finds its deliveries by this key (else a scan per message).
  await db.schema.createIndex('webhook_deliveries_message').on('webhook_deliveries').column('message_id').execute()
  await db.schema
    .createIndex('webhook_deliveries_endpoint_order')
    .on('webhook_deliveries')
    .expression(sql`webhook_id, id desc`)
    .execute()

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
    .addColumn('delivery_id', bigint, (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('at', bigint, (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .execute()
  await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').column('delivery_id').execute()
}

import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, WebhookDeliveryRow, WebhookRow } from '../schema.js'
import { recordChangeIn, type PendingEvent } from './audit-events-repository.js'

/** A message to send, as the outbox keeps it. */
export interface OutboxMessage {
  accountId: number
  messageId: string
  type: string
  /** The JSON body, exactly as it is sent and signed. */
  body: string
  createdAt: number
}

/** Whether an endpoint wants messages of `type` ('*' takes them all). */
export function subscribes(endpoint: Pick<WebhookRow, 'events'>, type: string): boolean {
  return endpoint.events === '*' || endpoint.events.split(' ').includes(type)
}

/**
 * Puts a message in the outbox, inside the transaction of the change that causes it, with one
 * pending delivery per enabled endpoint of the account that wants it (`only`: that endpoint alone,
 * the test call). Nothing is written when no endpoint wants it.
 */
export async function enqueueWebhookIn(
  trx: Transaction<Database> | Kysely<Database>,
  message: OutboxMessage,
  only?: number,
): Promise<number> {
  let query = trx.selectFrom('webhooks').select(['id', 'events']).where('account_id', '=', message.accountId)
  // The test call goes to its endpoint even while it is off (sent once it is on again); events go to enabled ones.
  query = only !== undefined ? query.where('id', '=', only) : query.where('enabled', '=', 1)
  const endpoints = (await query.execute()).filter((endpoint) => only !== undefined || subscribes(endpoint, message.type))
  if (endpoints.length === 0) return 0
  const { id } = await trx
    .insertInto('webhook_messages')
    .values({
      account_id: message.accountId,
      message_id: message.messageId,
      event_type: message.type,
      body: message.body,
      created_at: message.createdAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  await trx
    .insertInto('webhook_deliveries')
    .values(
      endpoints.map((endpoint) => ({
        webhook_id: endpoint.id,
        message_id: id,
        state: 'pending' as const,
        next_attempt_at: message.createdAt,
        created_at: message.createdAt,
      })),
    )
    .execute()
  return endpoints.length
}

/** A delivery a sender has taken, with what it needs to send it. */
export interface ClaimedDelivery {
  /** The lease claimDue set: recordAttempt writes only while it is still this one. */
  leasedUntil: number
  delivery: WebhookDeliveryRow
  endpoint: WebhookRow
  messageId: string
  eventType: string
  body: string
}

export interface DeliveryListQuery {
  limit: number
  beforeId?: number
}

export class WebhooksRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {}

  /** Creates an endpoint unless the account has `max` already (undefined then), with its event. */
  create(
    endpoint: Omit<WebhookRow, 'id' | 'enabled' | 'disabled_reason' | 'previous_secret' | 'previous_secret_until' | 'failing_since'> &
      Partial<Pick<WebhookRow, 'enabled' | 'disabled_reason'>>,
    max: number,
    event?: PendingEvent<WebhookRow>,
  ) {
    return this.db.transaction().execute(async (trx) => {
      // The account's row first: concurrent creations of one account count one after the other.
      await trx
        .updateTable('accounts')
        .set({ id: sql`id` })
        .where('id', '=', endpoint.account_id)
        .execute()
      const { count } = await trx
        .selectFrom('webhooks')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .where('account_id', '=', endpoint.account_id)
        .executeTakeFirstOrThrow()
      if (Number(count) >= max) return undefined
      const row = await trx.insertInto('webhooks').values(endpoint).returningAll().executeTakeFirstOrThrow()
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  listForAccount(accountId: number): Promise<WebhookRow[]> {
    return this.db.selectFrom('webhooks').selectAll().where('account_id', '=', accountId).orderBy('id').execute()
  }

  findOwned(accountId: number, id: number): Promise<WebhookRow | undefined> {
    return this.db.selectFrom('webhooks').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst()
  }

  /** Changes the account's endpoint, with its event; undefined when there is none. */
  update(
    accountId: number,
    id: number,
    changes: Partial<
      Pick<
        WebhookRow,
        | 'url'
        | 'events'
        | 'description'
        | 'enabled'
        | 'disabled_reason'
        | 'failing_since'
        | 'secret'
        | 'previous_secret'
        | 'previous_secret_until'
      >
    >,
    event?: PendingEvent<WebhookRow>,
  ): Promise<WebhookRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('webhooks')
        .set(changes)
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .returningAll()
        .executeTakeFirst()
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  /** Deletes the endpoint with its event; its deliveries go with it (pending ones are dropped). */
  delete(accountId: number, id: number, event?: PendingEvent<WebhookRow>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .deleteFrom('webhooks')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .returningAll()
        .executeTakeFirst()
      await recordChangeIn(trx, event, row)
      return row !== undefined
    })
  }

  /** Sends a message to one endpoint only (the test call). */
  enqueueTo(webhookId: number, message: OutboxMessage): Promise<number> {
    return this.db.transaction().execute((trx) => enqueueWebhookIn(trx, message, webhookId))
  }

  /** The endpoint's deliveries, newest first, with their message's id and type. */
  listDeliveries(webhookId: number, query: DeliveryListQuery) {
    let select = this.db
      .selectFrom('webhook_deliveries')
      .innerJoin('webhook_messages', 'webhook_messages.id', 'webhook_deliveries.message_id')
      .selectAll('webhook_deliveries')
      .select(['webhook_messages.message_id as message_key', 'webhook_messages.event_type'])
      .where('webhook_deliveries.webhook_id', '=', webhookId)
    if (query.beforeId !== undefined) select = select.where('webhook_deliveries.id', '<', query.beforeId)
    return select.orderBy('webhook_deliveries.id', 'desc').limit(query.limit).execute()
  }

  /** Makes a delivery of the endpoint due again at once (a retry asked for by its owner). */
  async retry(webhookId: number, deliveryId: number, now: number): Promise<boolean> {
    const found = await this.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('id', '=', deliveryId)
      .where('webhook_id', '=', webhookId)
      .executeTakeFirst()
    if (!found) return false
    // A delivery being sent right now keeps its lease: it is not taken a second time at once.
    await this.db
      .updateTable('webhook_deliveries')
      .set({ state: 'pending', next_attempt_at: now })
      .where('id', '=', deliveryId)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .execute()
    return true
  }

  /**
   * Takes up to `limit` due deliveries of enabled endpoints for `leaseMs`: on PostgreSQL with
   * FOR UPDATE SKIP LOCKED, so that instances never take the same one; SQLite has one writer.
   * A delivery whose sender died is due again once its lease has passed.
   */
  async claimDue(now: number, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    const ids = await this.db.transaction().execute(async (trx) => {
      let due = trx
        .selectFrom('webhook_deliveries')
        .select('webhook_deliveries.id')
        .where('state', '=', 'pending')
        .where('webhook_id', 'in', trx.selectFrom('webhooks').select('id').where('enabled', '=', 1))
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
        .orderBy('next_attempt_at')
        .limit(limit)
      if (this.dialect === 'postgres') due = due.forUpdate().skipLocked()
      const rows = await due.execute()
      if (rows.length === 0) return []
      const taken = rows.map((row) => row.id)
      await trx
        .updateTable('webhook_deliveries')
        .set({ locked_until: now + leaseMs })
        .where('id', 'in', taken)
        .execute()
      return taken
    })
    if (ids.length === 0) return []
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .innerJoin('webhook_messages', 'webhook_messages.id', 'webhook_deliveries.message_id')
      .selectAll('webhook_deliveries')
      .select(['webhook_messages.message_id as message_key', 'webhook_messages.event_type', 'webhook_messages.body'])
      .where('webhook_deliveries.id', 'in', ids)
      .execute()
    // Deleted meanwhile (an endpoint's deliveries go with it): nothing to send.
    if (rows.length === 0) return []
    const endpoints = await this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', 'in', [...new Set(rows.map((row) => row.webhook_id))])
      .execute()
    const byId = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint]))
    return rows.flatMap((row) => {
      const endpoint = byId.get(row.webhook_id)
      if (!endpoint) return []
      const { message_key: messageId, event_type: eventType, body, ...delivery } = row
      return [{ leasedUntil: now + leaseMs, delivery, endpoint, messageId, eventType, body }]
    })
  }

  /**
   * Records an attempt and the delivery's new state, releasing its lease, if the lease (`leasedUntil`,
   * as claimDue set it) is still this sender's: false, with nothing written, when another took it.
   */
  async recordAttempt(
    deliveryId: number,
    leasedUntil: number,
    attempt: { at: number; status: number | null; durationMs: number; error: string | null },
    next: { state: 'pending' | 'succeeded' | 'failed'; nextAttemptAt: number | null },
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('webhook_deliveries')
        .set({
          state: next.state,
          attempts: sql`attempts + 1`,
          next_attempt_at: next.nextAttemptAt,
          locked_until: null,
          last_status: attempt.status,
          last_error: attempt.error,
        })
        .where('id', '=', deliveryId)
        .where('locked_until', '=', leasedUntil)
        .executeTakeFirst()
      if (updated.numUpdatedRows === 0n) return false
      await trx
        .insertInto('webhook_attempts')
        .values({ delivery_id: deliveryId, at: attempt.at, status: attempt.status, duration_ms: attempt.durationMs, error: attempt.error })
        .execute()
      return true
    })
  }

  /** The endpoint's health after an attempt: success clears its failing streak; a failure starts one. */
  async markEndpoint(id: number, outcome: { succeeded: true } | { succeeded: false; at: number }): Promise<WebhookRow | undefined> {
    if (outcome.succeeded) {
      return this.db.updateTable('webhooks').set({ failing_since: null }).where('id', '=', id).returningAll().executeTakeFirst()
    }
    return this.db
      .updateTable('webhooks')
      .set({ failing_since: sql`coalesce(failing_since, ${outcome.at})` })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()
  }

  /** Disables an enabled endpoint (gone, failing), with its event; its pending deliveries wait until it is enabled again. */
  disable(id: number, reason: 'gone' | 'failing', event?: PendingEvent<WebhookRow>): Promise<void> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('webhooks')
        .set({ enabled: 0, disabled_reason: reason })
        .where('id', '=', id)
        .where('enabled', '=', 1)
        .returningAll()
        .executeTakeFirst()
      await recordChangeIn(trx, event, row)
    })
  }

  /** The age of the oldest pending delivery's message at `now`, in ms (0 when none): a metric. */
  async oldestPendingAge(now: number): Promise<number> {
    const row = await this.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.min('created_at').as('oldest'))
      .where('state', '=', 'pending')
      // Deliveries of an endpoint that is off wait for it on purpose: not a backlog.
      .where('webhook_id', 'in', this.db.selectFrom('webhooks').select('id').where('enabled', '=', 1))
      .executeTakeFirst()
    return row?.oldest == null ? 0 : Math.max(0, now - Number(row.oldest))
  }

  /** Removes messages (with their deliveries and attempts) older than `before`, a batch at a time. */
  async purgeMessages(before: number, limit: number): Promise<number> {
    const due = this.db.selectFrom('webhook_messages').select('id').where('created_at', '<', before).orderBy('created_at').limit(limit)
    const result = await this.db.deleteFrom('webhook_messages').where('id', 'in', due).executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}

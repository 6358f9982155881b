import type { Kysely, Transaction } from 'kysely'
import type { AuditEventRow, Database, NewAuditEventRow } from '../schema.js'
import { enqueueWebhookIn, type OutboxMessage } from './webhooks-repository.js'

/** What a change records: its audit row, and the webhook message it sends, if any. */
export interface ChangeRecord {
  audit?: NewAuditEventRow
  webhook?: OutboxMessage
}

/**
 * The records of a change, made from the row the change wrote (its id, its account), inside the
 * change's transaction: repositories that change things take one and call it there, so that the
 * change, its audit event and its webhook message commit together or not at all.
 */
export type PendingEvent<Changed> = (changed: Changed) => ChangeRecord

/** Writes the event of a change inside the change's transaction. */
export async function recordEventIn(trx: Transaction<Database> | Kysely<Database>, event: NewAuditEventRow): Promise<void> {
  await trx.insertInto('audit_events').values(event).execute()
}

/** Writes `pending`'s event for `changed` when both are there (a change that found nothing records nothing). */
export async function recordChangeIn<Changed>(
  trx: Transaction<Database>,
  pending: PendingEvent<Changed> | undefined,
  changed: Changed | undefined,
): Promise<void> {
  if (pending === undefined || changed === undefined) return
  const record = pending(changed)
  if (record.audit) await recordEventIn(trx, record.audit)
  if (record.webhook) await enqueueWebhookIn(trx, record.webhook)
}

export interface AuditEventQuery {
  limit: number
  beforeId?: number
  /** One action, or every action starting with this prefix (`file.`). */
  action?: { exact: string } | { prefix: string }
  sinceMs?: number
}

export class AuditEventsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** An event that goes with no change of ours (a failed sign-in, a call with an expired key). */
  record(event: NewAuditEventRow): Promise<void> {
    return recordEventIn(this.db, event)
  }

  /** The account's events, newest first (audit_events_account_order). */
  list(accountId: number, query: AuditEventQuery): Promise<AuditEventRow[]> {
    let select = this.db.selectFrom('audit_events').selectAll().where('account_id', '=', accountId)
    if (query.beforeId !== undefined) select = select.where('id', '<', query.beforeId)
    if (query.sinceMs !== undefined) select = select.where('at', '>=', query.sinceMs)
    const { action } = query
    if (action && 'exact' in action) select = select.where('action', '=', action.exact)
    // Action names are [a-z_.]: the prefix has no LIKE wildcard of its own to escape.
    if (action && 'prefix' in action) select = select.where('action', 'like', `${action.prefix}%`)
    return select.orderBy('id', 'desc').limit(query.limit).execute()
  }

  /**
   * Removes up to `limit` events older than `before`, oldest first; the number removed. The
   * collector calls it until it removes fewer than a batch, so no statement holds the table long.
   */
  async removeOlderThan(before: number, limit: number): Promise<number> {
    const due = this.db.selectFrom('audit_events').select('id').where('at', '<', before).orderBy('at').limit(limit)
    const result = await this.db.deleteFrom('audit_events').where('id', 'in', due).executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}

import ipaddr from 'ipaddr.js'
import type { Config } from '../config.js'
import { InvalidParameterError } from '../errors.js'
import type { AuditEventsRepository, ChangeRecord, PendingEvent } from '../db/repositories/audit-events-repository.js'
import type { OutboxMessage } from '../db/repositories/webhooks-repository.js'
import type { AuditEventRow, ListedFile, NewAuditEventRow } from '../db/schema.js'
import { randomToken } from '../lib/random-token.js'
import type { LinkView } from './links.js'
import { parseUtcTime } from './expiry.js'
import { networkOf, unmapped } from './key-policy.js'
import { fileRecord, linkRecord, type FileRecord } from './records.js'

/**
 * The audit log (../shared/spec/keys-and-audit.md): who changed what in an account, when and from
 * where. Every change writes its event in its own transaction (repositories take a PendingEvent);
 * reads are not audited. Events never hold a key, password, token or link URL.
 */

/** Every action the log records. */
export const AUDIT_ACTIONS = [
  'key.created',
  'key.revoked',
  'key.expired_use',
  'session.signed_in',
  'session.sign_in_failed',
  'session.signed_out',
  'session.signed_out_everywhere',
  'password.changed',
  'two_factor.enabled',
  'two_factor.disabled',
  'two_factor.failed',
  'two_factor.recovery_code_used',
  'two_factor.recovery_codes_regenerated',
  'email.change_requested',
  'email.change_cancelled',
  'email.changed',
  'file.uploaded',
  'file.deleted',
  'file.expired',
  'file.updated',
  'link.created',
  'link.updated',
  'link.revoked',
  'link.rotated',
  'link.password_failed',
  'link.exhausted',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.disabled',
  'upload_request.created',
  'upload_request.updated',
  'upload_request.closed',
  'upload_request.deleted',
  'scan.infected',
] as const
export type AuditAction = (typeof AUDIT_ACTIONS)[number]

/** `guest`: someone sending files through an upload request (its id is the request's). */
export type ActorType = 'key' | 'session' | 'operator' | 'public' | 'system' | 'guest'

/** Who makes a change, and from where (the client address as the rate limits see it, and its user agent). */
export interface Actor {
  type: ActorType
  /** The key's id for a key, the account's for a session; null for the operator, the public and the system. */
  id: number | null
  name?: string | null
  ip?: string | null
  userAgent?: string | null
}

/** Changes the server makes by itself (expiry, the collector). */
export const SYSTEM_ACTOR: Actor = { type: 'system', id: null }
/** The operator's command line. */
export const OPERATOR_ACTOR: Actor = { type: 'operator', id: null }

export interface AuditTarget {
  type: 'key' | 'file' | 'link' | 'account' | 'session' | 'webhook' | 'upload_request'
  id: number | null
}

/** What an event says about its change, given the row the change wrote. */
export interface EventContent {
  accountId: number
  target?: AuditTarget | null
  /** Small and never secret: names, sizes, the fields changed; never a key, password, token or URL. */
  details?: Record<string, unknown>
  /** The file or link changed, whose record a webhook message carries (never the audit row). */
  subject?: { file: ListedFile } | { link: LinkView }
}

/** The webhook event types (../shared/spec/webhooks.md). */
export const WEBHOOK_EVENT_TYPES = [
  'file.uploaded',
  'file.deleted',
  'link.created',
  'link.updated',
  'link.revoked',
  'link.exhausted',
  'link.downloaded',
  'upload.expired',
  'upload_request.file_received',
  'upload_request.full',
  'webhook.test',
] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

const USER_AGENT_MAX_LENGTH = 200

/** The part of a client address the log keeps (FILESHARE_AUDIT_IP): all, the network (IPv4 /24, IPv6 /48), or none. */
export function auditAddress(address: string | null | undefined, mode: Config['auditIp']): string | null {
  if (!address || mode === 'off') return null
  if (!ipaddr.isValid(address)) return null
  const parsed = unmapped(ipaddr.parse(address))
  if (mode === 'full') return parsed.toString()
  return networkOf(parsed, parsed.kind() === 'ipv4' ? 24 : 48).toString()
}

/**
 * Makes what a change records: its audit row (the one place that decides what an event keeps of its
 * actor) and, for the changes webhooks tell of, its message for the outbox.
 */
export class AuditTrail {
  /** Told when a message is made for the outbox (the local dispatcher looks sooner). */
  onMessage: () => void = () => {}

  constructor(
    private readonly config: Pick<Config, 'auditIp'> & Partial<Pick<Config, 'linkBaseUrl'>>,
    private readonly now: () => number = Date.now,
  ) {}

  /** What the log (and a key's last use) keeps of a client address. */
  address(clientAddress: string | null | undefined): string | null {
    return auditAddress(clientAddress, this.config.auditIp)
  }

  /** The row of an event whose content is known now. */
  row(action: AuditAction, actor: Actor, content: EventContent): NewAuditEventRow {
    return {
      account_id: content.accountId,
      at: this.now(),
      action,
      actor_type: actor.type,
      actor_id: actor.id,
      actor_name: actor.name ?? null,
      ip: auditAddress(actor.ip, this.config.auditIp),
      user_agent: actor.userAgent ? [...actor.userAgent].slice(0, USER_AGENT_MAX_LENGTH).join('') : null,
      target_type: content.target?.type ?? null,
      target_id: content.target?.id ?? null,
      details: JSON.stringify(content.details ?? {}),
    }
  }

  /** The records of a change whose content comes from the row the change writes (inside its transaction). */
  pending<Changed>(action: AuditAction, actor: Actor, content: (changed: Changed) => EventContent): PendingEvent<Changed> {
    return (changed) => {
      const made = content(changed)
      const record: ChangeRecord = { audit: this.row(action, actor, made) }
      const webhook = this.webhookOf(action, actor, made)
      if (webhook) record.webhook = this.message(made.accountId, webhook.type, webhook.data)
      return record
    }
  }

  /** A change webhooks tell of but the audit log does not record (a download, an upload's expiry). */
  webhookOnly<Changed>(type: WebhookEventType, content: (changed: Changed) => { accountId: number; data: unknown }): PendingEvent<Changed> {
    return (changed) => {
      const { accountId, data } = content(changed)
      return { webhook: this.message(accountId, type, data) }
    }
  }

  /** A file as webhook messages carry it. */
  fileData(file: ListedFile): FileRecord {
    return fileRecord(file, this.config.linkBaseUrl ?? '')
  }

  /** A message for the outbox: its id, and its body exactly as it is signed and sent. */
  message(accountId: number, type: WebhookEventType, data: unknown): OutboxMessage {
    const createdAt = this.now()
    this.onMessage()
    return {
      accountId,
      messageId: `msg_${randomToken(18)}`,
      type,
      body: JSON.stringify({ type, timestamp: new Date(createdAt).toISOString(), data }),
      createdAt,
    }
  }

  /** The webhook event of an audited change, if webhooks tell of it. */
  private webhookOf(action: AuditAction, actor: Actor, content: EventContent): { type: WebhookEventType; data: unknown } | undefined {
    const linkBaseUrl = this.config.linkBaseUrl ?? ''
    const subject = content.subject
    const fileId = content.target?.id ?? null
    const filename = content.details?.filename ?? null
    switch (action) {
      case 'file.uploaded':
        return subject && 'file' in subject ? { type: 'file.uploaded', data: fileRecord(subject.file, linkBaseUrl) } : undefined
      case 'file.deleted':
        return { type: 'file.deleted', data: { file_id: fileId, filename, reason: actor.type === 'operator' ? 'operator' : 'owner' } }
      case 'file.expired':
        return { type: 'file.deleted', data: { file_id: fileId, filename, reason: 'expired' } }
      case 'scan.infected':
        return { type: 'file.deleted', data: { file_id: fileId, filename, reason: 'infected' } }
      case 'link.created':
      case 'link.updated':
      case 'link.revoked':
      case 'link.exhausted':
        return subject && 'link' in subject ? { type: action, data: linkRecord(subject.link, linkBaseUrl) } : undefined
      default:
        return undefined
    }
  }
}

/** An event as the API and the CLI show it. */
export interface AuditEvent {
  event_id: number
  at: number
  action: string
  actor: { type: ActorType; id: number | null; name?: string }
  ip: string | null
  user_agent: string | null
  target: { type: string; id: number | null } | null
  details: Record<string, unknown>
}

export function toAuditEvent(row: AuditEventRow): AuditEvent {
  return {
    event_id: Number(row.id),
    at: Number(row.at),
    action: row.action,
    actor: {
      type: row.actor_type as ActorType,
      id: row.actor_id === null ? null : Number(row.actor_id),
      ...(row.actor_name !== null && { name: row.actor_name }),
    },
    ip: row.ip,
    user_agent: row.user_agent,
    target: row.target_type === null ? null : { type: row.target_type, id: row.target_id === null ? null : Number(row.target_id) },
    details: JSON.parse(row.details) as Record<string, unknown>,
  }
}

export interface AuditListInput {
  limit: number
  beforeId?: number
  /** One action name, or a family `file.*`. */
  action?: string
  /** UTC `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS` or `YYYY-MM-DDTHH:MM:SSZ`: events at or after. */
  since?: string
}

const SINCE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}:\d{2})Z?)?$/

/** Epoch ms of a `since` value, or an invalid_parameter error naming the forms it takes. */
export function parseSince(since: string): number {
  const match = SINCE.exec(since)
  // The API's own time form (expiry.ts), midnight for a date alone.
  const at = match ? parseUtcTime(`${match[1]} ${match[2] ?? '00:00:00'}`) : undefined
  if (at === undefined) {
    throw new InvalidParameterError('since must be a UTC date or time: YYYY-MM-DD, YYYY-MM-DD HH:MM:SS or YYYY-MM-DDTHH:MM:SSZ.')
  }
  return at
}

function actionFilter(action: string): { exact: string } | { prefix: string } {
  const family = /^([a-z_]+)\.\*$/.exec(action)
  if (family && AUDIT_ACTIONS.some((name) => name.startsWith(`${family[1]}.`))) return { prefix: `${family[1]}.` }
  if ((AUDIT_ACTIONS as readonly string[]).includes(action)) return { exact: action }
  throw new InvalidParameterError(`action must be an action name (such as file.deleted) or a family (such as file.*).`)
}

/** Reading the log, and keeping it to its retention. */
export class AuditLogService {
  constructor(
    private readonly events: AuditEventsRepository,
    private readonly trail: AuditTrail,
    private readonly config: Pick<Config, 'auditRetentionMs'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The account's events newest first, and the id to continue before (null on the last page). */
  async list(accountId: number, input: AuditListInput): Promise<{ events: AuditEvent[]; nextBeforeId: number | null }> {
    const rows = await this.events.list(accountId, {
      limit: input.limit + 1,
      beforeId: input.beforeId,
      action: input.action === undefined ? undefined : actionFilter(input.action),
      sinceMs: input.since === undefined ? undefined : parseSince(input.since),
    })
    const page = rows.slice(0, input.limit).map(toAuditEvent)
    return { events: page, nextBeforeId: rows.length > input.limit ? page[page.length - 1]!.event_id : null }
  }

  /** Records an event that goes with no change (a failed sign-in, a call with an expired key). */
  record(action: AuditAction, actor: Actor, content: EventContent): Promise<void> {
    return this.events.record(this.trail.row(action, actor, content))
  }

  /** Removes events past the retention, a batch per statement; the number removed. */
  async removeExpired(batchSize = 1000): Promise<number> {
    const before = this.now() - this.config.auditRetentionMs
    let removed = 0
    for (;;) {
      const batch = await this.events.removeOlderThan(before, batchSize)
      removed += batch
      if (batch < batchSize) return removed
      // Let requests in between batches: the log may hold millions of old events the first time.
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
}

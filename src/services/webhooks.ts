import { InvalidParameterError, NotFoundError, WebhookLimitExceededError } from '../errors.js'
import type { WebhooksRepository } from '../db/repositories/webhooks-repository.js'
import type { WebhookRow } from '../db/schema.js'
import { newWebhookSecret } from '../lib/standard-webhooks.js'
import { WEBHOOK_EVENT_TYPES, type Actor, type AuditTrail, type EventContent } from './audit.js'
import { checkWebhookUrl, resolveWebhookTarget, type WebhookLookup, type WebhookTargetPolicy } from './webhook-target.js'

/** At most this many endpoints per account (webhooks.md). */
export const MAX_WEBHOOKS = 20
/** After a rotation, the old secret signs too for this long, so that receivers can switch. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 500

export interface WebhookInput {
  url?: string
  events?: readonly string[]
  description?: string | null
  enabled?: boolean
}

/** An endpoint as its owner sees it, and its secret right after it was made or rotated. */
export interface WebhookView {
  webhook: WebhookRow
  secret?: string
}

/** The stored form of an event list: '*' or the known types in the spec's order. */
function storedEvents(events: readonly string[] | undefined): string {
  if (events === undefined || !Array.isArray(events) || events.length === 0) {
    throw new InvalidParameterError('events must be a non-empty array of event types, or ["*"].')
  }
  if (events.includes('*')) {
    if (events.length > 1) throw new InvalidParameterError('events: "*" stands alone; it means every event type.')
    return '*'
  }
  const unknown = events.filter((type) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type))
  if (unknown.length > 0) {
    throw new InvalidParameterError(`events: unknown type ${unknown.join(', ')}; the types are ${WEBHOOK_EVENT_TYPES.join(', ')}, or "*".`)
  }
  return WEBHOOK_EVENT_TYPES.filter((type) => events.includes(type)).join(' ')
}

function checkedDescription(description: string | null | undefined): string | null | undefined {
  if (description === undefined || description === null) return description
  if (/[\p{Cc}\u2028\u2029]/u.test(description))
    throw new InvalidParameterError('description must be one line of text, without control characters.')
  if ([...description].length > WEBHOOK_DESCRIPTION_MAX_LENGTH) {
    throw new InvalidParameterError(`description must be at most ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters.`)
  }
  return description
}

/** What a webhook's audit events say: its URL's host and its event types, never its secret. */
function webhookEvent(webhook: WebhookRow, extra: Record<string, unknown> = {}): EventContent {
  return {
    accountId: webhook.account_id,
    target: { type: 'webhook', id: webhook.id },
    details: { host: new URL(webhook.url).host, events: webhook.events.split(' '), ...extra },
  }
}

/** An account's webhook endpoints (webhooks.md); the dispatcher (webhook-dispatcher.ts) sends their messages. */
export class WebhookService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly trail: AuditTrail,
    private readonly policy: WebhookTargetPolicy,
    private readonly now: () => number = Date.now,
    private readonly lookup?: WebhookLookup,
  ) {}

  /**
   * The URL's rules, and the SSRF guard where the host resolves now (a name that does not resolve
   * yet is accepted: every attempt checks it again).
   */
  private async checkedUrl(url: unknown): Promise<string> {
    if (typeof url !== 'string') throw new InvalidParameterError('url must be a string.')
    const parsed = checkWebhookUrl(url, this.policy)
    try {
      await resolveWebhookTarget(parsed, this.policy, this.lookup)
    } catch (error) {
      const code = (error as { code?: string }).code
      if (code !== 'ENOTFOUND' && code !== 'EAI_AGAIN' && code !== 'ENODATA') throw error
    }
    return parsed.href
  }

  async create(accountId: number, input: WebhookInput, actor: Actor): Promise<WebhookView> {
    const url = await this.checkedUrl(input.url)
    const events = storedEvents(input.events)
    const description = checkedDescription(input.description) ?? null
    const secret = newWebhookSecret()
    const off = input.enabled === false
    const webhook = await this.webhooks.create(
      {
        account_id: accountId,
        url,
        events,
        description,
        secret,
        created_at: this.now(),
        ...(off && { enabled: 0, disabled_reason: 'owner' }),
      },
      MAX_WEBHOOKS,
      this.trail.pending('webhook.created', actor, (row: WebhookRow) => webhookEvent(row)),
    )
    if (!webhook) throw new WebhookLimitExceededError(MAX_WEBHOOKS)
    return { webhook, secret }
  }

  list(accountId: number): Promise<WebhookRow[]> {
    return this.webhooks.listForAccount(accountId)
  }

  async get(accountId: number, id: number): Promise<WebhookRow> {
    const webhook = await this.webhooks.findOwned(accountId, id)
    if (!webhook) throw new NotFoundError(`No webhook with id ${id}.`)
    return webhook
  }

  /** Changes the URL, events, description, or turns it on or off; turning it on clears why it was off. */
  async update(accountId: number, id: number, input: WebhookInput, actor: Actor): Promise<WebhookRow> {
    const current = await this.get(accountId, id)
    const changes: Parameters<WebhooksRepository['update']>[2] = {}
    if (input.url !== undefined) {
      changes.url = await this.checkedUrl(input.url)
      // Another receiver: the old one's failures say nothing about it.
      if (changes.url !== current.url) changes.failing_since = null
    }
    if (input.events !== undefined) changes.events = storedEvents(input.events)
    if (input.description !== undefined) changes.description = checkedDescription(input.description) ?? null
    if (input.enabled !== undefined && (input.enabled ? 1 : 0) !== current.enabled) {
      changes.enabled = input.enabled ? 1 : 0
      changes.disabled_reason = input.enabled ? null : 'owner'
      changes.failing_since = null
    }
    if (Object.keys(changes).length === 0) return current
    const changed = Object.keys(changes).filter((name) => name !== 'disabled_reason' && name !== 'failing_since')
    const updated = await this.webhooks.update(
      accountId,
      id,
      changes,
      this.trail.pending('webhook.updated', actor, (row: WebhookRow) => webhookEvent(row, { changed })),
    )
    if (!updated) throw new NotFoundError(`No webhook with id ${id}.`)
    return updated
  }

  async delete(accountId: number, id: number, actor: Actor): Promise<void> {
    const deleted = await this.webhooks.delete(
      accountId,
      id,
      this.trail.pending('webhook.deleted', actor, (row: WebhookRow) => webhookEvent(row)),
    )
    if (!deleted) throw new NotFoundError(`No webhook with id ${id}.`)
  }

  /** A new secret; the old one goes on signing for SECRET_OVERLAP_MS. */
  async rotateSecret(accountId: number, id: number, actor: Actor): Promise<WebhookView> {
    const current = await this.get(accountId, id)
    const secret = newWebhookSecret()
    const webhook = await this.webhooks.update(
      accountId,
      id,
      { secret, previous_secret: current.secret, previous_secret_until: this.now() + SECRET_OVERLAP_MS },
      this.trail.pending('webhook.updated', actor, (row: WebhookRow) => webhookEvent(row, { changed: ['secret'] })),
    )
    if (!webhook) throw new NotFoundError(`No webhook with id ${id}.`)
    return { webhook, secret }
  }

  /** Sends a `webhook.test` message to this endpoint only; its message id. */
  async test(accountId: number, id: number): Promise<string> {
    const webhook = await this.get(accountId, id)
    const message = this.trail.message(accountId, 'webhook.test', { webhook_id: webhook.id })
    await this.webhooks.enqueueTo(webhook.id, message)
    return message.messageId
  }

  async deliveries(accountId: number, id: number, query: { limit: number; beforeId?: number }) {
    await this.get(accountId, id)
    const rows = await this.webhooks.listDeliveries(id, { limit: query.limit + 1, beforeId: query.beforeId })
    const page = rows.slice(0, query.limit)
    return { deliveries: page, nextBeforeId: rows.length > query.limit ? Number(page[page.length - 1]!.id) : null }
  }

  /** Makes one delivery due again at once (after a fix on the receiving side). */
  async retry(accountId: number, id: number, deliveryId: number): Promise<void> {
    await this.get(accountId, id)
    if (!(await this.webhooks.retry(id, deliveryId, this.now()))) throw new NotFoundError(`No delivery with id ${deliveryId}.`)
  }
}

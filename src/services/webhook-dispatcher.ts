import type { ClaimedDelivery, WebhooksRepository } from '../db/repositories/webhooks-repository.js'
import type { WebhookRow } from '../db/schema.js'
import { WorkLoop } from '../lib/work-loop.js'
import { SERVICE_VERSION } from '../lib/service-version.js'
import { signatureHeader } from '../lib/standard-webhooks.js'
import { WebhookUrlNotAllowedError } from '../errors.js'
import { SYSTEM_ACTOR, type AuditTrail } from './audit.js'
import { resolveWebhookTarget, type WebhookLookup, type WebhookTargetPolicy } from './webhook-target.js'
import { sendWebhook, type WebhookAttempt, type WebhookSendMessage, type WebhookSendTarget } from './webhook-sender.js'

/** After the first attempt at once, the waits before each next one (webhooks.md), each +-10%. */
export const RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]
/** How long after a local message is recorded the dispatcher looks for it (its transaction commits meanwhile). */
const NUDGE_DELAY_MS = 15
/** An endpoint that has failed without a success for this long is disabled (`failing`). */
export const FAILING_DISABLE_MS = 5 * 86_400_000
/** Deliveries and their messages are kept this long. */
export const DELIVERY_RETENTION_MS = 30 * 86_400_000

export interface DispatcherOptions {
  /** A sender holds a delivery this long; past it (a crash) another may take it. Above the attempt timeout. */
  leaseMs: number
  /** Attempts in flight at once, across endpoints: a slow receiver holds one, not the others. */
  maxInFlight: number
  /** How often to look for due deliveries when there was nothing to do. */
  pollMs: number
  timeoutMs: number
  userAgent: string
}

export const DEFAULT_DISPATCHER_OPTIONS: DispatcherOptions = {
  leaseMs: 60_000,
  maxInFlight: 16,
  pollMs: 500,
  timeoutMs: 15_000,
  userAgent: `Fileshare-Webhooks/${SERVICE_VERSION}`,
}

/** Told of each attempt (the server's metrics). */
export interface WebhookEvents {
  attempted(outcome: 'succeeded' | 'retrying' | 'failed', durationMs: number): void
}

export type WebhookSender = (
  target: WebhookSendTarget,
  message: WebhookSendMessage,
  options: { timeoutMs?: number },
) => Promise<WebhookAttempt>

/** The wait before the attempt after `attempts` failed ones, with +-10% jitter; undefined when none is left. */
export function nextDelay(attempts: number, random: () => number = Math.random): number | undefined {
  const base = RETRY_SCHEDULE_MS[attempts - 1]
  if (base === undefined) return undefined
  return Math.round(base * (0.9 + 0.2 * random()))
}

/**
 * Sends the outbox's messages: takes due deliveries (a lease each, FOR UPDATE SKIP LOCKED on
 * PostgreSQL, so that instances share the work and never send one at once), checks the target
 * again (SSRF), signs, sends, and records the attempt and what comes next. Restartable: a
 * delivery whose sender died is taken again once its lease has passed (at least once).
 */
export class WebhookDispatcher {
  private readonly options: DispatcherOptions
  private readonly inFlight = new Set<Promise<void>>()
  private readonly loop: WorkLoop

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly trail: AuditTrail,
    private readonly policy: WebhookTargetPolicy,
    private readonly now: () => number = Date.now,
    options: Partial<DispatcherOptions> = {},
    private readonly send: WebhookSender = sendWebhook,
    private readonly lookup?: WebhookLookup,
    private readonly events: WebhookEvents = { attempted: () => {} },
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.options = { ...DEFAULT_DISPATCHER_OPTIONS, ...options }
    this.loop = new WorkLoop(
      async () => (await this.takeDue()).length,
      () => this.inFlight.size < this.options.maxInFlight,
      this.options.pollMs,
      this.onError,
    )
  }

  /** Takes what is due now and starts sending it; resolves when the attempts started here have ended. */
  async runOnce(): Promise<number> {
    const started = await this.takeDue()
    await Promise.all(started)
    return started.length
  }

  private async takeDue(): Promise<Promise<void>[]> {
    const room = this.options.maxInFlight - this.inFlight.size
    if (room <= 0) return []
    const claimed = await this.webhooks.claimDue(this.now(), room, this.options.leaseMs)
    return claimed.map((delivery) => {
      const attempt: Promise<void> = this.deliver(delivery)
        .catch(this.onError)
        .finally(() => {
          this.inFlight.delete(attempt)
          this.loop.wake()
        })
      this.inFlight.add(attempt)
      return attempt
    })
  }

  /** Runs until stop(): polls for due deliveries, at once again while there is more to do. */
  start(): void {
    this.loop.start()
  }

  /** A message was just put in the outbox by this process: look sooner than the next poll. */
  nudge(): void {
    this.loop.nudge(NUDGE_DELAY_MS)
  }

  /** Stops taking deliveries and waits for the attempts in flight (each ends within its timeout). */
  async stop(): Promise<void> {
    await this.loop.stop()
    await Promise.all(this.inFlight)
  }

  private async deliver({ leasedUntil, delivery, endpoint, messageId, body }: ClaimedDelivery): Promise<void> {
    const at = this.now()
    let attempt: WebhookAttempt
    try {
      const url = new URL(endpoint.url)
      const target = await resolveWebhookTarget(url, this.policy, this.lookup)
      const timestamp = Math.floor(at / 1000)
      const secrets = [endpoint.secret]
      if (endpoint.previous_secret && (endpoint.previous_secret_until ?? 0) > at) secrets.push(endpoint.previous_secret)
      attempt = await this.send(
        { url, ...target },
        {
          id: messageId,
          timestamp,
          body,
          signature: signatureHeader(secrets, messageId, timestamp, body),
          userAgent: this.options.userAgent,
        },
        { timeoutMs: this.options.timeoutMs },
      )
    } catch (error) {
      // The guard refused the target, or its name did not resolve: a failed attempt like any other.
      // The owner sees why, but not which internal address a name resolved to.
      const reason =
        error instanceof WebhookUrlNotAllowedError ? 'the host is not a public address' : String((error as Error).message ?? error)
      attempt = { status: null, durationMs: 0, error: reason.slice(0, 200), retryAfterSeconds: null }
    }
    const succeeded = attempt.status !== null && attempt.status >= 200 && attempt.status < 300
    const gone = attempt.status === 410
    const attempts = delivery.attempts + 1
    let next: { state: 'pending' | 'succeeded' | 'failed'; nextAttemptAt: number | null }
    if (succeeded) next = { state: 'succeeded', nextAttemptAt: null }
    else if (gone) next = { state: 'failed', nextAttemptAt: null }
    else {
      const delay = nextDelay(attempts)
      // A Retry-After on 429 or 503 is honoured when it is later than the schedule.
      const asked =
        (attempt.status === 429 || attempt.status === 503) && attempt.retryAfterSeconds !== null ? attempt.retryAfterSeconds * 1000 : 0
      next =
        delay === undefined
          ? { state: 'failed', nextAttemptAt: null }
          : { state: 'pending', nextAttemptAt: this.now() + Math.max(delay, asked) }
    }
    const recorded = await this.webhooks.recordAttempt(
      delivery.id,
      leasedUntil,
      { at, status: attempt.status, durationMs: Math.round(attempt.durationMs), error: attempt.error },
      next,
    )
    // The attempt outlived its lease and another sender took the delivery: its outcome is that one's to record.
    if (!recorded) return
    this.events.attempted(succeeded ? 'succeeded' : next.state === 'pending' ? 'retrying' : 'failed', attempt.durationMs)
    if (succeeded) {
      await this.webhooks.markEndpoint(endpoint.id, { succeeded: true })
      return
    }
    if (gone) return this.webhooks.disable(endpoint.id, 'gone', this.disabledEvent('gone'))
    const marked = await this.webhooks.markEndpoint(endpoint.id, { succeeded: false, at })
    if (marked?.failing_since != null && marked.failing_since <= this.now() - FAILING_DISABLE_MS) {
      await this.webhooks.disable(endpoint.id, 'failing', this.disabledEvent('failing'))
    }
  }

  private disabledEvent(reason: 'gone' | 'failing') {
    return this.trail.pending('webhook.disabled', SYSTEM_ACTOR, (row: WebhookRow) => ({
      accountId: row.account_id,
      target: { type: 'webhook', id: row.id },
      details: { host: new URL(row.url).host, reason },
    }))
  }

  /** The age of the oldest message still pending, in ms (a metric). */
  oldestPendingAge(): Promise<number> {
    return this.webhooks.oldestPendingAge(this.now())
  }

  /** Removes messages and their deliveries past the retention (the collector). */
  async purge(batchSize = 1000): Promise<number> {
    let removed = 0
    for (;;) {
      const batch = await this.webhooks.purgeMessages(this.now() - DELIVERY_RETENTION_MS, batchSize)
      removed += batch
      if (batch < batchSize) return removed
    }
  }
}

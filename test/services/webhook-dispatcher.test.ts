import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { DatabaseHandle } from '../../src/db/dialect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { openDatabase } from '../../src/db/open-database.js'
import { AccountsRepository } from '../../src/db/repositories/accounts-repository.js'
import { WebhooksRepository } from '../../src/db/repositories/webhooks-repository.js'
import { AuditTrail } from '../../src/services/audit.js'
import { FAILING_DISABLE_MS, RETRY_SCHEDULE_MS, WebhookDispatcher, type WebhookSender } from '../../src/services/webhook-dispatcher.js'
import type { WebhookAttempt } from '../../src/services/webhook-sender.js'
import { makeTempDir } from '../helpers/test-app.js'

/**
 * The dispatcher with an injected clock and sender (no sleeps, no network): the retry schedule,
 * Retry-After, 410, the 5-day disable, the SSRF check at each attempt, and a slow receiver that
 * holds only its own delivery.
 */
describe('WebhookDispatcher', () => {
  let dir: string
  let handle: DatabaseHandle
  let webhooks: WebhooksRepository
  let clock: number
  const now = () => clock
  let accountId: number
  const trail = () => new AuditTrail({ auditIp: 'truncated' }, now)

  beforeEach(async () => {
    dir = await makeTempDir()
    handle = await openDatabase({ sqlitePath: path.join(dir, 'db.sqlite'), databaseUrl: undefined, databaseSchema: undefined })
    await migrateToLatest(handle)
    webhooks = new WebhooksRepository(handle.db, handle.dialect)
    clock = Date.UTC(2026, 10, 27, 12)
    accountId = (await new AccountsRepository(handle.db).create(`hooks-${Math.random()}@example.test`, 'pro', clock)).id
  })
  afterEach(async () => {
    await handle.db.destroy()
    await fs.rm(dir, { recursive: true, force: true })
  })

  async function endpoint(url = 'https://hooks.example.com/in') {
    return (await webhooks.create(
      {
        account_id: accountId,
        url,
        events: '*',
        description: null,
        secret: 'whsec_' + Buffer.alloc(32, 1).toString('base64'),
        created_at: clock,
      },
      20,
    ))!
  }

  async function send(to?: number) {
    const message = trail().message(accountId, 'webhook.test', { n: 1 })
    if (to === undefined) await webhooks.enqueueTo((await webhooks.listForAccount(accountId))[0]!.id, message)
    else await webhooks.enqueueTo(to, message)
    return message.messageId
  }

  const publicLookup = async () => [{ address: '93.184.216.34', family: 4 }]
  const answer = (status: number | null, extra: Partial<WebhookAttempt> = {}): WebhookAttempt => ({
    status,
    durationMs: 3,
    error: status === null ? 'ECONNREFUSED' : null,
    retryAfterSeconds: null,
    ...extra,
  })

  function dispatcher(sender: WebhookSender, lookup = publicLookup) {
    return new WebhookDispatcher(webhooks, trail(), { allowPrivate: false, allowHttp: false }, now, { pollMs: 5 }, sender, lookup)
  }

  const deliveryOf = async (webhookId: number) => (await webhooks.listDeliveries(webhookId, { limit: 10 }))[0]!

  it('retries on the schedule (+-10%) with the same message id, then fails for good after the last attempt', async () => {
    const hook = await endpoint()
    const messageId = await send(hook.id)
    const ids: string[] = []
    const sender: WebhookSender = async (_target, message) => {
      ids.push(message.id)
      return answer(500)
    }
    const run = dispatcher(sender)
    let previous = clock
    for (let attempt = 1; attempt <= RETRY_SCHEDULE_MS.length + 1; attempt++) {
      expect(await run.runOnce()).toBe(1)
      const delivery = await deliveryOf(hook.id)
      expect(delivery.attempts).toBe(attempt)
      expect(delivery.last_status).toBe(500)
      if (attempt <= RETRY_SCHEDULE_MS.length) {
        expect(delivery.state).toBe('pending')
        const wait = delivery.next_attempt_at! - previous
        const base = RETRY_SCHEDULE_MS[attempt - 1]!
        expect(wait).toBeGreaterThanOrEqual(Math.floor(base * 0.9))
        expect(wait).toBeLessThanOrEqual(Math.ceil(base * 1.1))
        // Not due a moment before its time.
        clock = delivery.next_attempt_at! - 1
        expect(await run.runOnce()).toBe(0)
        clock = delivery.next_attempt_at!
        previous = clock
      } else {
        expect(delivery.state).toBe('failed')
        expect(delivery.next_attempt_at).toBeNull()
      }
    }
    expect(new Set(ids)).toEqual(new Set([messageId]))
    expect(ids).toHaveLength(8)
  })

  it('honours a Retry-After on 429 and 503 when it is later than the schedule', async () => {
    const hook = await endpoint()
    await send(hook.id)
    const run = dispatcher(async () => answer(503, { retryAfterSeconds: 600 }))
    await run.runOnce()
    expect((await deliveryOf(hook.id)).next_attempt_at).toBe(clock + 600_000)
    clock += 600_000
    const early = dispatcher(async () => answer(429, { retryAfterSeconds: 1 }))
    await early.runOnce()
    // The schedule's 5 minutes is later than 1 second: the schedule wins.
    const wait = (await deliveryOf(hook.id)).next_attempt_at! - clock
    expect(wait).toBeGreaterThanOrEqual(270_000)
  })

  it('a 410 disables the endpoint at once; its other deliveries wait, and none is sent', async () => {
    const hook = await endpoint()
    await send(hook.id)
    await send(hook.id)
    let sent = 0
    const run = new WebhookDispatcher(
      webhooks,
      trail(),
      { allowPrivate: false, allowHttp: false },
      now,
      { maxInFlight: 1 },
      async () => {
        sent++
        return answer(410)
      },
      publicLookup,
    )
    await run.runOnce()
    expect((await webhooks.findOwned(accountId, hook.id))!).toMatchObject({ enabled: 0, disabled_reason: 'gone' })
    expect(await run.runOnce()).toBe(0)
    expect(sent).toBe(1)
  })

  it('an endpoint failing for 5 days without a success is disabled; a success in between starts the count again', async () => {
    const hook = await endpoint()
    let status = 500
    const run = dispatcher(async () => answer(status))
    await send(hook.id)
    await run.runOnce()
    expect((await webhooks.findOwned(accountId, hook.id))!.failing_since).toBe(clock)
    clock += FAILING_DISABLE_MS - 60_000
    status = 200
    await send(hook.id)
    await run.runOnce()
    expect((await webhooks.findOwned(accountId, hook.id))!.failing_since).toBeNull()
    status = 500
    await send(hook.id)
    await run.runOnce()
    clock += FAILING_DISABLE_MS
    await send(hook.id)
    await run.runOnce()
    expect((await webhooks.findOwned(accountId, hook.id))!).toMatchObject({ enabled: 0, disabled_reason: 'failing' })
  })

  it('checks the target at every attempt: a name that now answers a private address is not called', async () => {
    const hook = await endpoint()
    await send(hook.id)
    let called = 0
    const run = dispatcher(
      async () => {
        called++
        return answer(200)
      },
      async () => [{ address: '10.0.0.5', family: 4 }],
    )
    await run.runOnce()
    expect(called).toBe(0)
    const delivery = await deliveryOf(hook.id)
    expect(delivery).toMatchObject({ state: 'pending', last_status: null })
    expect(delivery.last_error).toMatch(/not a public address/)
  })

  it('a slow receiver holds only its own delivery: the others go on', async () => {
    const slow = await endpoint('https://slow.example.com/in')
    const fast = await endpoint('https://fast.example.com/in')
    await send(slow.id)
    let release: (() => void) | undefined
    const delivered: string[] = []
    const run = dispatcher(async (target) => {
      if (target.url.host === 'slow.example.com') await new Promise<void>((resolve) => (release = resolve))
      delivered.push(target.url.host)
      return answer(200)
    })
    run.start()
    try {
      await expect.poll(() => release !== undefined).toBe(true)
      await send(fast.id)
      await send(fast.id)
      await expect.poll(() => delivered).toEqual(['fast.example.com', 'fast.example.com'])
      release!()
      await expect.poll(() => delivered.length).toBe(3)
    } finally {
      release?.()
      await run.stop()
    }
  })

  it('a delivery whose sender died is taken again once its lease has passed; the late sender records nothing', async () => {
    const hook = await endpoint()
    await send(hook.id)
    const [taken] = await webhooks.claimDue(clock, 10, 60_000)
    expect(taken?.endpoint.id).toBe(hook.id)
    expect(await webhooks.claimDue(clock + 59_000, 10, 60_000)).toEqual([])
    const [again] = await webhooks.claimDue(clock + 60_000, 10, 60_000)
    expect(again?.delivery.id).toBe(taken!.delivery.id)
    const attempt = { at: clock, status: 200, durationMs: 1, error: null }
    const done = { state: 'succeeded' as const, nextAttemptAt: null }
    expect(await webhooks.recordAttempt(taken!.delivery.id, taken!.leasedUntil, attempt, done)).toBe(false)
    expect(await webhooks.recordAttempt(again!.delivery.id, again!.leasedUntil, attempt, done)).toBe(true)
    expect(await deliveryOf(hook.id)).toMatchObject({ attempts: 1, state: 'succeeded' })
  })

  it('a retry asked for while the delivery is being sent does not take it a second time at once', async () => {
    const hook = await endpoint()
    await send(hook.id)
    const [taken] = await webhooks.claimDue(clock, 10, 60_000)
    expect(await webhooks.retry(hook.id, taken!.delivery.id, clock + 1)).toBe(true)
    expect(await webhooks.claimDue(clock + 1, 10, 60_000)).toEqual([])
    expect(await webhooks.retry(hook.id, 999_999, clock)).toBe(false)
  })
})

// client.webhooks against the launcher's server (FILESHARE_WEBHOOKS_ALLOW_PRIVATE and _ALLOW_HTTP
// there, so that a receiver on 127.0.0.1 is allowed), with a local receiver: create (the secret
// shown once), list, get, update, test (the receiver gets a message Webhooks.verify accepts, and
// deliveries() shows it), a file.uploaded event, rotateSecret (two signatures, either secret
// verifies), delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BadRequestError,
  FILE_FIELDS,
  NotFoundError,
  WEBHOOK_FIELDS,
  WebhookVerificationError,
  Webhooks,
  type WebhookEvent,
  type WebhookWithSecret,
} from '../../src/index.js'
import { client } from '../helpers/env.js'
import { startWebhookReceiver, type Received } from '../helpers/webhook-receiver.js'

let receiverUrl: string
let received: Received[]
let closeReceiver: () => Promise<void>
const fileshare = client('pro')
const made: number[] = []

beforeAll(async () => {
  const receiver = await startWebhookReceiver()
  receiverUrl = receiver.url
  received = receiver.received
  closeReceiver = receiver.close
})

afterAll(async () => {
  for (const id of made) await fileshare.webhooks.delete(id).catch(() => undefined)
  await closeReceiver?.()
})

/** Waits for a message at `path` whose `webhook-id` is `id` (or that `match` accepts). */
async function message(path: string, match: (m: Received) => boolean, timeoutMs = 30_000): Promise<Received> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = received.find((m) => m.path === path && match(m))
    if (found) return found
    if (Date.now() > deadline) {
      throw new Error(`no message at ${path} within ${timeoutMs} ms (received: ${received.map((m) => m.path).join(', ') || 'none'})`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function create(path: string, events: string[] = ['webhook.test']): Promise<WebhookWithSecret> {
  const webhook = await fileshare.webhooks.create({ url: `${receiverUrl}${path}`, events, description: `sdk-js ${path}` })
  made.push(webhook.webhook_id)
  return webhook
}

describe('client.webhooks against the server', () => {
  it('create shows the secret once; list and get do not; update changes the fields given', async () => {
    const webhook = await create('/crud')
    expect(Object.keys(webhook).sort()).toEqual([...WEBHOOK_FIELDS, 'secret'].sort())
    expect(webhook).toMatchObject({
      url: `${receiverUrl}/crud`,
      events: ['webhook.test'],
      description: 'sdk-js /crud',
      enabled: true,
      disabled_reason: null,
    })
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
    expect(Math.abs(webhook.created.getTime() - Date.now())).toBeLessThan(120_000)

    const listed = await fileshare.webhooks.list()
    const mine = listed.find((w) => w.webhook_id === webhook.webhook_id)
    expect(mine).toBeDefined()
    expect(mine).not.toHaveProperty('secret')
    expect(Object.keys(mine!).sort()).toEqual([...WEBHOOK_FIELDS].sort())

    const got = await fileshare.webhooks.get(webhook.webhook_id)
    expect(got).not.toHaveProperty('secret')
    const { secret: _secret, ...fields } = webhook
    expect(got).toEqual(fields)

    const updated = await fileshare.webhooks.update(webhook.webhook_id, {
      description: null,
      events: ['file.uploaded', 'link.created'],
      enabled: false,
    })
    expect(updated).toMatchObject({
      description: null,
      events: ['file.uploaded', 'link.created'],
      enabled: false,
      disabled_reason: 'owner',
    })
    const enabled = await fileshare.webhooks.update(webhook.webhook_id, { enabled: true })
    expect(enabled).toMatchObject({ enabled: true, disabled_reason: null, description: null })
  })

  it('refuses a bad field with invalid_parameter, and an unknown endpoint is a NotFoundError', async () => {
    const error = await fileshare.webhooks.create({ url: 'not a url', events: ['webhook.test'] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BadRequestError)
    expect((error as BadRequestError).code).toMatch(/^(invalid_parameter|webhook_url_not_allowed)$/)
    await expect(fileshare.webhooks.create({ url: `${receiverUrl}/x`, events: ['no.such_event'] })).rejects.toMatchObject({
      name: 'BadRequestError',
      code: 'invalid_parameter',
    })
    await expect(fileshare.webhooks.get(2_000_000_000)).rejects.toBeInstanceOf(NotFoundError)
  })

  it('test: the receiver gets a webhook.test message that Webhooks.verify accepts, and deliveries() shows it', async () => {
    const webhook = await create('/test')
    const { message_id } = await fileshare.webhooks.test(webhook.webhook_id)
    expect(message_id).toMatch(/^msg_/)
    const got = await message('/test', (m) => m.headers['webhook-id'] === message_id)
    expect(got.headers['content-type']).toMatch(/^application\/json/)
    expect(got.headers['user-agent']).toMatch(/^Fileshare-Webhooks\b/)

    const event: WebhookEvent = Webhooks.verify(got.body, got.headers, webhook.secret)
    expect(event).toMatchObject({ type: 'webhook.test', data: { webhook_id: webhook.webhook_id } })
    expect(Number.isNaN(Date.parse(event.timestamp))).toBe(false)
    // The same bytes as text, and the headers as a fetch Headers, verify too; another secret does not.
    const headers = new Headers(Object.entries(got.headers).map(([name, value]): [string, string] => [name, String(value)]))
    expect(Webhooks.verify(got.body.toString('utf8'), headers, webhook.secret)).toEqual(event)
    const other = await create('/other')
    expect(() => Webhooks.verify(got.body, got.headers, other.secret)).toThrow(WebhookVerificationError)

    // The delivery is recorded: state succeeded once the 204 came back.
    let delivery
    for (let i = 0; i < 100; i++) {
      const { deliveries, pagination } = await fileshare.webhooks.deliveries(webhook.webhook_id, { limit: 10 })
      expect(pagination.limit).toBe(10)
      delivery = deliveries.find((d) => d.message_id === message_id)
      if (delivery?.state === 'succeeded') break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(delivery).toMatchObject({ event_type: 'webhook.test', message_id, state: 'succeeded', last_status: 204, last_error: null })
    expect(delivery!.attempts).toBeGreaterThanOrEqual(1)
    expect(delivery!.created).toBeInstanceOf(Date)
    const all = []
    for await (const d of fileshare.webhooks.iterateDeliveries(webhook.webhook_id, { limit: 1 })) all.push(d.delivery_id)
    expect(all).toContain(delivery!.delivery_id)
    expect(new Set(all).size).toBe(all.length)

    // retryDelivery sends the same message again: the same webhook-id, a fresh signature.
    await fileshare.webhooks.retryDelivery(webhook.webhook_id, delivery!.delivery_id)
    const before = received.filter((m) => m.headers['webhook-id'] === message_id).length
    const deadline = Date.now() + 30_000
    while (received.filter((m) => m.headers['webhook-id'] === message_id).length === before && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const again = received.filter((m) => m.headers['webhook-id'] === message_id)
    expect(again.length).toBeGreaterThan(before)
    expect(Webhooks.verify(again.at(-1)!.body, again.at(-1)!.headers, webhook.secret)).toMatchObject({ type: 'webhook.test' })
  })

  it('an upload sends file.uploaded with the file record to an endpoint subscribed to it', async () => {
    const webhook = await create('/uploads', ['file.uploaded'])
    const file = await fileshare.files.upload(new TextEncoder().encode('hello webhooks'), { filename: 'webhook-event.txt' })
    try {
      const got = await message('/uploads', (m) => {
        const body = JSON.parse(m.body.toString('utf8')) as { type: string; data: { file_id?: number } }
        return body.type === 'file.uploaded' && body.data.file_id === file.file_id
      })
      const event = Webhooks.verify(got.body, got.headers, webhook.secret)
      expect(event.type).toBe('file.uploaded')
      if (event.type !== 'file.uploaded') return
      expect(Object.keys(event.data).sort()).toEqual([...FILE_FIELDS].sort())
      // The file's record as GET /files/{id} gives it (the upload's answer is checked on its own, for
      // its source, in upload-requests.test.ts).
      expect(event.data).toEqual(JSON.parse(JSON.stringify(await fileshare.files.get(file.file_id))))
    } finally {
      await fileshare.files.delete(file.file_id)
    }
  })

  it('rotateSecret: a new secret; messages carry two signatures, and either secret verifies', async () => {
    const webhook = await create('/rotate')
    const rotated = await fileshare.webhooks.rotateSecret(webhook.webhook_id)
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(rotated.secret).not.toBe(webhook.secret)
    expect(rotated.webhook_id).toBe(webhook.webhook_id)
    expect(await fileshare.webhooks.get(webhook.webhook_id)).not.toHaveProperty('secret')

    const { message_id } = await fileshare.webhooks.test(webhook.webhook_id)
    const got = await message('/rotate', (m) => m.headers['webhook-id'] === message_id)
    const signatures = String(got.headers['webhook-signature']).split(' ')
    expect(signatures).toHaveLength(2)
    for (const signature of signatures) expect(signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    expect(Webhooks.verify(got.body, got.headers, rotated.secret)).toMatchObject({ type: 'webhook.test' })
    expect(Webhooks.verify(got.body, got.headers, webhook.secret)).toMatchObject({ type: 'webhook.test' })
    // Each secret matches one of the two entries, not both.
    for (const secret of [rotated.secret, webhook.secret]) {
      const matching = signatures.filter((signature) => {
        try {
          Webhooks.verify(got.body, { ...got.headers, 'webhook-signature': signature }, secret)
          return true
        } catch {
          return false
        }
      })
      expect(matching).toHaveLength(1)
    }
  })

  it('delete: the endpoint is gone', async () => {
    const webhook = await create('/delete')
    await fileshare.webhooks.delete(webhook.webhook_id)
    await expect(fileshare.webhooks.get(webhook.webhook_id)).rejects.toBeInstanceOf(NotFoundError)
    expect((await fileshare.webhooks.list()).map((w) => w.webhook_id)).not.toContain(webhook.webhook_id)
    await expect(fileshare.webhooks.delete(webhook.webhook_id)).rejects.toBeInstanceOf(NotFoundError)
  })
})

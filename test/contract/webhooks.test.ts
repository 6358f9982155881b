import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWebhookReceiver, verifiesStandardWebhook } from '../helpers/webhook-receiver.js'
import { bearer, startTestApp, uploadFile, type TestApp, unlimitedAccount } from '../helpers/test-app.js'

/**
 * Webhooks (../shared/spec/webhooks.md) on both stacks: the endpoints' API, the messages a change
 * sends through the outbox, their Standard Webhooks signature (checked here by an implementation of
 * the scheme's own, not the server's), retries and the guard against private targets.
 */

/** A receiver at <base>/hooks that answers each message with the next status of `answers` (then 200). */
async function receiver(answers: number[] = []) {
  const started = await startWebhookReceiver(() => answers.shift() ?? 200)
  return { ...started, url: `${started.base}/hooks` }
}

describe('webhooks', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(
      { FILESHARE_WEBHOOKS_ALLOW_PRIVATE: 'true', FILESHARE_WEBHOOKS_ALLOW_HTTP: 'true' },
      { webhookDispatch: { pollMs: 20 } },
    )
  })
  afterAll(async () => {
    await t.close()
  })

  const account = () => unlimitedAccount(t)

  function api(apiKey: string, method: string, path: string, body?: unknown) {
    return fetch(`${t.api}${path}`, {
      method,
      headers: { ...bearer(apiKey), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  }

  async function createWebhook(apiKey: string, fields: Record<string, unknown>) {
    const response = await api(apiKey, 'POST', '/webhooks', fields)
    expect(response.status, await response.clone().text()).toBe(201)
    return ((await response.json()) as { webhook: { webhook_id: number; secret: string; events: string[] } }).webhook
  }

  it('sends a signed message for an upload, once, that the scheme verifies; the secret is shown only at creation', async () => {
    const { apiKey } = await account()
    const hooks = await receiver()
    try {
      const webhook = await createWebhook(apiKey, { url: hooks.url, events: ['file.uploaded'], description: 'CI' })
      expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
      const listed = (await (await api(apiKey, 'GET', '/webhooks')).json()) as { webhooks: Array<Record<string, unknown>> }
      expect(listed.webhooks).toEqual([
        {
          webhook_id: webhook.webhook_id,
          url: hooks.url,
          events: ['file.uploaded'],
          description: 'CI',
          enabled: true,
          disabled_reason: null,
          created_at: expect.any(String),
        },
      ])
      const { body: file } = await uploadFile(t, apiKey, 'hooked', 'hooked.txt')
      await expect.poll(() => hooks.received.length).toBe(1)
      const [message] = hooks.received
      expect(message!.headers['content-type']).toBe('application/json')
      expect(message!.headers['user-agent']).toMatch(/^Fileshare-Webhooks\/\d+\.\d+\.\d+/)
      expect(String(message!.headers['webhook-id'])).toMatch(/^msg_/)
      expect(Math.abs(Number(message!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60)
      expect(verifiesStandardWebhook(webhook.secret, message!)).toBe(true)
      expect(verifiesStandardWebhook('whsec_' + Buffer.alloc(32).toString('base64'), message!)).toBe(false)
      const event = JSON.parse(message!.body) as { type: string; timestamp: string; data: Record<string, unknown> }
      expect(event.type).toBe('file.uploaded')
      expect(new Date(event.timestamp).toISOString()).toBe(event.timestamp)
      expect(event.data).toMatchObject({ file_id: file.file_id, filename: 'hooked.txt', size: 6, public_link: file.public_link })
      // A delete: not subscribed, nothing sent.
      expect((await api(apiKey, 'DELETE', `/files/${file.file_id}`)).status).toBe(200)
      const deliveries = (await (await api(apiKey, 'GET', `/webhooks/${webhook.webhook_id}/deliveries`)).json()) as {
        deliveries: Array<Record<string, unknown>>
      }
      expect(deliveries.deliveries).toEqual([
        {
          delivery_id: expect.any(Number),
          event_type: 'file.uploaded',
          message_id: message!.headers['webhook-id'],
          attempts: 1,
          last_status: 200,
          last_error: null,
          next_attempt_at: null,
          state: 'succeeded',
          created_at: expect.any(String),
        },
      ])
      expect(hooks.received).toHaveLength(1)
    } finally {
      await hooks.close()
    }
  })

  it('tells of links and deletions to an endpoint of every type, with the record or the reason', async () => {
    const { apiKey } = await account()
    const hooks = await receiver()
    try {
      await createWebhook(apiKey, { url: hooks.url, events: ['*'] })
      const { body: file } = await uploadFile(t, apiKey, 'linked', 'linked.txt')
      const link = (await (await api(apiKey, 'POST', `/files/${file.file_id}/links`, { max_downloads: 1 })).json()) as {
        link: { link_id: number; url: string }
      }
      const grant = await fetch(link.link.url.replace(t.config.publicUrl, t.url), {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/json' },
        body: '{}',
        redirect: 'manual',
      })
      expect(grant.status).toBe(303)
      expect((await api(apiKey, 'DELETE', `/files/${file.file_id}`)).status).toBe(200)
      await expect.poll(() => hooks.received.map((message) => (JSON.parse(message.body) as { type: string }).type).sort()).toHaveLength(5)
      const events = hooks.received.map((message) => JSON.parse(message.body) as { type: string; data: Record<string, unknown> })
      const byType = new Map(events.map((event) => [event.type, event.data]))
      expect([...byType.keys()].sort()).toEqual(['file.deleted', 'file.uploaded', 'link.created', 'link.downloaded', 'link.exhausted'])
      expect(byType.get('link.created')).toMatchObject({ link_id: link.link.link_id, max_downloads: 1, status: 'active' })
      expect(byType.get('link.downloaded')).toEqual({ link_id: link.link.link_id, file_id: file.file_id, downloads_left: 0 })
      expect(byType.get('link.exhausted')).toMatchObject({ link_id: link.link.link_id, status: 'exhausted', download_count: 1 })
      expect(byType.get('file.deleted')).toEqual({ file_id: file.file_id, filename: 'linked.txt', reason: 'owner' })
      expect(new Set(hooks.received.map((message) => message.headers['webhook-id'])).size).toBe(5)
    } finally {
      await hooks.close()
    }
  })

  it('retries a failed attempt after the schedule, with the same webhook-id; a 410 disables the endpoint', async () => {
    const { apiKey } = await account()
    const hooks = await receiver([500])
    try {
      const webhook = await createWebhook(apiKey, { url: hooks.url, events: ['webhook.test'] })
      const tested = await api(apiKey, 'POST', `/webhooks/${webhook.webhook_id}/test`)
      expect(tested.status).toBe(202)
      const { message_id: messageId } = (await tested.json()) as { message_id: string }
      await expect.poll(() => hooks.received.length).toBe(1)
      const deliveriesOf = async () =>
        (
          (await (await api(apiKey, 'GET', `/webhooks/${webhook.webhook_id}/deliveries`)).json()) as {
            deliveries: Array<{ attempts: number; state: string; last_status: number; delivery_id: number }>
          }
        ).deliveries
      await expect.poll(async () => (await deliveriesOf())[0]?.attempts).toBe(1)
      expect((await deliveriesOf())[0]).toMatchObject({ state: 'pending', last_status: 500 })
      // The next attempt is due 5 s (+-10%) later: the clock moves instead of the test sleeping.
      t.advanceClock(6_000)
      await expect.poll(() => hooks.received.length).toBe(2)
      expect(hooks.received.map((message) => message.headers['webhook-id'])).toEqual([messageId, messageId])
      await expect.poll(async () => (await deliveriesOf())[0]?.state).toBe('succeeded')

      // 410: the endpoint is off at once, and says why.
      const gone = await receiver([410])
      try {
        const patched = await api(apiKey, 'PATCH', `/webhooks/${webhook.webhook_id}`, { url: gone.url })
        expect(patched.status).toBe(200)
        await api(apiKey, 'POST', `/webhooks/${webhook.webhook_id}/test`)
        await expect
          .poll(
            async () =>
              ((await (await api(apiKey, 'GET', `/webhooks/${webhook.webhook_id}`)).json()) as { webhook: { disabled_reason: string } })
                .webhook.disabled_reason,
          )
          .toBe('gone')
        expect(gone.received).toHaveLength(1)
      } finally {
        await gone.close()
      }
    } finally {
      await hooks.close()
    }
  })

  it('delivers soon after the change: latency from the upload to the receiver (printed for docs/webhooks.md)', async () => {
    const { apiKey } = await account()
    const hooks = await receiver()
    try {
      await createWebhook(apiKey, { url: hooks.url, events: ['file.uploaded'] })
      const started = new Map<number, number>()
      for (let i = 0; i < 30; i++) {
        const at = Date.now()
        const { body } = await uploadFile(t, apiKey, `timed ${i}`, `timed-${i}.txt`)
        started.set(body.file_id, at)
      }
      await expect.poll(() => hooks.received.length).toBe(30)
      const latencies = hooks.received
        .map((message) => message.at - started.get((JSON.parse(message.body) as { data: { file_id: number } }).data.file_id)!)
        .sort((a, b) => a - b)
      console.log(`webhook latency (${process.env.FILESHARE_TEST_STACK ?? 'embedded'}): p50 ${latencies[14]} ms, p99 ${latencies[29]} ms`)
      expect(latencies.every((latency) => latency >= 0)).toBe(true)
    } finally {
      await hooks.close()
    }
  })

  it('an endpoint created off gets nothing; its test waits and goes out once it is on', async () => {
    const { apiKey } = await account()
    const hooks = await receiver()
    try {
      const webhook = await createWebhook(apiKey, { url: hooks.url, events: ['*'], enabled: false })
      const got = (await (await api(apiKey, 'GET', `/webhooks/${webhook.webhook_id}`)).json()) as { webhook: Record<string, unknown> }
      expect(got.webhook).toMatchObject({ enabled: false, disabled_reason: 'owner' })
      await uploadFile(t, apiKey, 'unseen', 'unseen.txt')
      expect((await api(apiKey, 'POST', `/webhooks/${webhook.webhook_id}/test`)).status).toBe(202)
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(hooks.received).toEqual([])
      expect((await api(apiKey, 'PATCH', `/webhooks/${webhook.webhook_id}`, { enabled: true })).status).toBe(200)
      await expect
        .poll(() => hooks.received.map((message) => (JSON.parse(message.body) as { type: string }).type))
        .toEqual(['webhook.test'])
    } finally {
      await hooks.close()
    }
  })

  it('a change whose transaction fails sends nothing', async () => {
    const { apiKey } = await account()
    const hooks = await receiver()
    try {
      await createWebhook(apiKey, { url: hooks.url, events: ['*'] })
      const { body: file } = await uploadFile(t, apiKey, 'kept', 'kept.txt')
      await expect.poll(() => hooks.received.length).toBe(1)
      // The delete's audit row fails after the delete, inside its transaction: all of it is undone.
      const trail = t.app.services.trail
      const row = trail.row.bind(trail)
      trail.row = (action, actor, content) => {
        if (action === 'file.deleted') throw new Error('injected failure')
        return row(action, actor, content)
      }
      try {
        expect((await api(apiKey, 'DELETE', `/files/${file.file_id}`)).status).toBe(500)
      } finally {
        trail.row = row
      }
      // The next change's message arrives; the failed one's never does.
      await api(apiKey, 'PATCH', `/files/${file.file_id}`, { filename: 'renamed.txt' })
      await uploadFile(t, apiKey, 'next', 'next.txt')
      await expect.poll(() => hooks.received.length).toBe(2)
      expect(hooks.received.map((message) => (JSON.parse(message.body) as { type: string }).type)).toEqual([
        'file.uploaded',
        'file.uploaded',
      ])
    } finally {
      await hooks.close()
    }
  })

  it('a creation retried with its Idempotency-Key answers the first again and makes no second endpoint', async () => {
    const { apiKey } = await account()
    const create = () =>
      fetch(`${t.api}/webhooks`, {
        method: 'POST',
        headers: { ...bearer(apiKey), 'content-type': 'application/json', 'idempotency-key': 'create-hook-1' },
        body: JSON.stringify({ url: 'https://example.com/hooks', events: ['file.uploaded'] }),
      })
    const first = await create()
    const again = await create()
    expect([first.status, again.status]).toEqual([201, 201])
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await again.json()).toEqual(await first.json())
    expect(((await (await api(apiKey, 'GET', '/webhooks')).json()) as { webhooks: unknown[] }).webhooks).toHaveLength(1)
  })

  it('rotating the secret signs with both for a day', async () => {
    const { apiKey } = await account()
    const hooks = await receiver()
    try {
      const webhook = await createWebhook(apiKey, { url: hooks.url, events: ['webhook.test'] })
      const rotated = (await (await api(apiKey, 'POST', `/webhooks/${webhook.webhook_id}/rotate-secret`)).json()) as {
        webhook: { secret: string }
      }
      expect(rotated.webhook.secret).not.toBe(webhook.secret)
      await api(apiKey, 'POST', `/webhooks/${webhook.webhook_id}/test`)
      await expect.poll(() => hooks.received.length).toBe(1)
      const message = hooks.received[0]!
      expect(String(message.headers['webhook-signature']).split(' ')).toHaveLength(2)
      expect(verifiesStandardWebhook(rotated.webhook.secret, message)).toBe(true)
      expect(verifiesStandardWebhook(webhook.secret, message)).toBe(true)
      const got = (await (await api(apiKey, 'GET', `/webhooks/${webhook.webhook_id}`)).json()) as { webhook: Record<string, unknown> }
      expect(got.webhook.secret).toBeUndefined()
    } finally {
      await hooks.close()
    }
  })

  it('refuses bad fields, unknown events, credentials, too many endpoints, and unknown ids', async () => {
    const { apiKey } = await account()
    const code = async (response: Response) => `${response.status} ${((await response.json()) as { error: { code: string } }).error.code}`
    expect(await code(await api(apiKey, 'POST', '/webhooks', { url: 'not a url', events: ['*'] }))).toBe('400 invalid_parameter')
    expect(await code(await api(apiKey, 'POST', '/webhooks', { url: 'https://user:pw@example.com/', events: ['*'] }))).toBe(
      '400 invalid_parameter',
    )
    expect(await code(await api(apiKey, 'POST', '/webhooks', { url: 'https://example.com/', events: ['file.exploded'] }))).toBe(
      '400 invalid_parameter',
    )
    expect(await code(await api(apiKey, 'POST', '/webhooks', { url: 'https://example.com/', events: [] }))).toBe('400 invalid_parameter')
    expect(await code(await api(apiKey, 'POST', '/webhooks', { url: 'https://example.com/', events: ['*'], extra: 1 }))).toBe(
      '400 invalid_parameter',
    )
    expect(await code(await api(apiKey, 'POST', '/webhooks', { url: 'ftp://example.com/', events: ['*'] }))).toBe(
      '400 webhook_url_not_allowed',
    )
    for (let i = 0; i < 20; i++) await createWebhook(apiKey, { url: `http://127.0.0.1:9/${i}`, events: ['*'] })
    expect(await code(await api(apiKey, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/21', events: ['*'] }))).toBe(
      '403 webhook_limit_exceeded',
    )
    expect(await code(await api(apiKey, 'GET', '/webhooks/999999'))).toBe('404 not_found')
    const other = await account()
    const mine = ((await (await api(apiKey, 'GET', '/webhooks')).json()) as { webhooks: Array<{ webhook_id: number }> }).webhooks[0]!
    expect(await code(await api(other.apiKey, 'GET', `/webhooks/${mine.webhook_id}`))).toBe('404 not_found')
    expect(await code(await api(other.apiKey, 'DELETE', `/webhooks/${mine.webhook_id}`))).toBe('404 not_found')
  })
})

describe('webhooks without FILESHARE_WEBHOOKS_ALLOW_PRIVATE', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_WEBHOOKS_ALLOW_HTTP: 'true' })
  })
  afterAll(async () => {
    await t.close()
  })

  it('refuses every private, loopback and link-local target, IPv4-mapped forms included', async () => {
    const { apiKey } = await t.createAccount('pro')
    for (const host of [
      '127.0.0.1',
      '[::1]',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '[fc00::1]',
      '[fe80::1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:10.0.0.1]',
      'localhost',
    ]) {
      const response = await fetch(`${t.api}/webhooks`, {
        method: 'POST',
        headers: { ...bearer(apiKey), 'content-type': 'application/json' },
        body: JSON.stringify({ url: `http://${host}/hooks`, events: ['*'] }),
      })
      expect(`${host} ${response.status}`).toBe(`${host} 400`)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('webhook_url_not_allowed')
    }
  })
})

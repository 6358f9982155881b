// client.webhooks against the fake fetch: paths, methods, JSON bodies, the records (Webhook with
// created, the secret of create and rotateSecret, WebhookDelivery with its dates), which calls are
// retried, the errors of webhooks, and paging the deliveries.
import { describe, expect, it } from 'vitest'
import {
  APIConnectionError,
  BadRequestError,
  ConfigurationError,
  ERROR_CODES,
  FileshareError,
  InsufficientScopeError,
  LimitExceededError,
  NotFoundError,
  WEBHOOK_DELIVERY_FIELDS,
  WEBHOOK_FIELDS,
  Webhooks,
  type Webhook,
  type WebhookDelivery,
  type WebhookWithSecret,
} from '../../src/index.js'
import { apiError, connectionFailure, fakeClient, json, type Recorded } from '../helpers/fake-fetch.js'

const WEBHOOK = {
  webhook_id: 3,
  url: 'https://hooks.example.com/fileshare',
  events: ['file.uploaded', 'link.downloaded'],
  description: 'billing',
  enabled: true,
  disabled_reason: null,
  created_at: '2026-11-27 10:00:00',
}
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

function delivery(id: number, state = 'succeeded'): Record<string, unknown> {
  return {
    delivery_id: id,
    event_type: 'file.uploaded',
    message_id: `msg_${id}`,
    attempts: 1,
    last_status: 200,
    last_error: null,
    next_attempt_at: null,
    state,
    created_at: '2026-11-27 10:05:00',
  }
}

const created = (webhook: Record<string, unknown> = WEBHOOK) =>
  json(201, { success: true, webhook: { ...webhook, secret: SECRET } }, { location: `/api/v1/webhooks/${String(webhook.webhook_id)}` })
const answer = (webhook: Record<string, unknown> = WEBHOOK) => json(200, { success: true, webhook })
const call = (r: Recorded) => `${r.method} ${r.url.replace('http://fake.test/api/v1', '')}`
const bodyOf = (r: Recorded) => (r.body ? (JSON.parse(new TextDecoder().decode(r.body)) as unknown) : undefined)

/** A scripted delivery log of one endpoint: answers its deliveries newest first, by before_id. */
function deliveryServer(ids: number[]) {
  return (request: Recorded): Response => {
    const url = new URL(request.url)
    const limit = Number(url.searchParams.get('limit') ?? 20)
    const before = url.searchParams.get('before_id')
    const below = [...ids].sort((a, b) => b - a).filter((id) => before === null || id < Number(before))
    const page = below.slice(0, limit)
    return json(200, {
      success: true,
      deliveries: page.map((id) => delivery(id)),
      pagination: { limit, next_before_id: below.length > limit ? page.at(-1)! : null },
    })
  }
}

describe('client.webhooks', () => {
  it('is an instance of Webhooks, the class of Webhooks.verify', () => {
    const { client } = fakeClient([])
    expect(client.webhooks).toBeInstanceOf(Webhooks)
    expect(typeof Webhooks.verify).toBe('function')
  })

  it('create: POST /webhooks with url, events and description; the answer holds the secret', async () => {
    const { client, requests } = fakeClient([() => created()])
    const webhook: WebhookWithSecret = await client.webhooks.create({
      url: 'https://hooks.example.com/fileshare',
      events: ['file.uploaded', 'link.downloaded'],
      description: 'billing',
    })
    expect(requests.map(call)).toEqual(['POST /webhooks'])
    expect(requests[0]!.headers.get('content-type')).toBe('application/json')
    expect(bodyOf(requests[0]!)).toEqual({
      url: 'https://hooks.example.com/fileshare',
      events: ['file.uploaded', 'link.downloaded'],
      description: 'billing',
    })
    expect(webhook.secret).toBe(SECRET)
    expect(webhook).toEqual({ ...WEBHOOK, secret: SECRET })
    expect(webhook.created.toISOString()).toBe('2026-11-27T10:00:00.000Z')
    // The extras are not enumerable: the record is the API's object.
    expect(JSON.parse(JSON.stringify(webhook))).toEqual({ ...WEBHOOK, secret: SECRET })
  })

  it('create: ["*"], description null sent, undefined left out, the call options not sent', async () => {
    const { client, requests } = fakeClient([() => created(), () => created()])
    await client.webhooks.create({ url: 'https://h.example/x', events: ['*'], description: null, timeoutMs: 5000 })
    await client.webhooks.create({ url: 'https://h.example/x', events: ['*'], description: undefined })
    expect(bodyOf(requests[0]!)).toEqual({ url: 'https://h.example/x', events: ['*'], description: null })
    expect(bodyOf(requests[1]!)).toEqual({ url: 'https://h.example/x', events: ['*'] })
  })

  it('create carries one Idempotency-Key per call and is retried with it, also after a lost connection', async () => {
    const retried = fakeClient([() => connectionFailure(), () => apiError(500, 'internal_error'), () => created()])
    const webhook = await retried.client.webhooks.create({ url: 'https://h.example/x', events: ['*'] })
    expect(webhook.secret).toBe(SECRET)
    expect(retried.requests.map(call)).toEqual(Array(3).fill('POST /webhooks'))
    const keys = retried.requests.map((r) => r.headers.get('idempotency-key'))
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(new Set(keys).size).toBe(1)

    const own = fakeClient([() => created()])
    await own.client.webhooks.create({ url: 'https://h.example/x', events: ['*'], idempotencyKey: 'my-hook' })
    expect(own.requests[0]!.headers.get('idempotency-key')).toBe('my-hook')
    expect(bodyOf(own.requests[0]!)).toEqual({ url: 'https://h.example/x', events: ['*'] })
  })

  it('an answer without the secret, or without the webhook, is a FileshareError', async () => {
    const { client } = fakeClient([() => json(201, { success: true, webhook: WEBHOOK }), () => json(200, { success: true })])
    await expect(client.webhooks.create({ url: 'https://h.example/x', events: ['*'] })).rejects.toThrow(/no webhook secret/)
    await expect(client.webhooks.get(3)).rejects.toThrow(/no webhook object/)
  })

  it('list, get: no secret; a disabled endpoint says why', async () => {
    const disabled = { ...WEBHOOK, webhook_id: 4, enabled: false, disabled_reason: 'gone', description: null, events: ['*'] }
    const { client, requests } = fakeClient([() => json(200, { success: true, webhooks: [WEBHOOK, disabled] }), () => answer(disabled)])
    const list: Webhook[] = await client.webhooks.list()
    expect(list).toEqual([WEBHOOK, disabled])
    expect(list[1]!.created.toISOString()).toBe('2026-11-27T10:00:00.000Z')
    expect(Object.keys(list[0]!)).toEqual([...WEBHOOK_FIELDS])
    const one = await client.webhooks.get('4')
    expect(one).toMatchObject({ enabled: false, disabled_reason: 'gone' })
    expect(one).not.toHaveProperty('secret')
    expect(requests.map(call)).toEqual(['GET /webhooks', 'GET /webhooks/4'])
  })

  it('an answer without a webhook list is a FileshareError', async () => {
    const { client } = fakeClient([() => json(200, { success: true })])
    await expect(client.webhooks.list()).rejects.toThrow(/no webhook list/)
  })

  it('update: PATCH /webhooks/{id}; null is sent (it clears), undefined is not, the signal is not', async () => {
    const { client, requests } = fakeClient([() => answer({ ...WEBHOOK, enabled: false, disabled_reason: 'owner', description: null })])
    const webhook = await client.webhooks.update(3, {
      enabled: false,
      description: null,
      url: undefined,
      signal: new AbortController().signal,
    })
    expect(requests.map(call)).toEqual(['PATCH /webhooks/3'])
    expect(bodyOf(requests[0]!)).toEqual({ enabled: false, description: null })
    expect(webhook).toMatchObject({ enabled: false, disabled_reason: 'owner' })
  })

  it('update: events and url; a misspelt field reaches the server, which refuses it', async () => {
    const { client, requests } = fakeClient([() => answer(), () => apiError(400, 'invalid_parameter')])
    await client.webhooks.update(3, { events: ['link.created', 'link.revoked'], url: 'https://h.example/new' })
    expect(bodyOf(requests[0]!)).toEqual({ events: ['link.created', 'link.revoked'], url: 'https://h.example/new' })
    const error = await client.webhooks.update(3, { enable: true } as never).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BadRequestError)
    expect(bodyOf(requests[1]!)).toEqual({ enable: true })
  })

  it('delete: DELETE /webhooks/{id}, nothing answered', async () => {
    const { client, requests } = fakeClient([() => json(200, { success: true, message: 'Webhook deleted.' })])
    await expect(client.webhooks.delete(3)).resolves.toBeUndefined()
    expect(requests.map(call)).toEqual(['DELETE /webhooks/3'])
  })

  it('rotateSecret: POST /webhooks/{id}/rotate-secret without a body; the new secret', async () => {
    const next = 'whsec_' + Buffer.alloc(32, 7).toString('base64')
    const { client, requests } = fakeClient([() => json(200, { success: true, webhook: { ...WEBHOOK, secret: next } })])
    const webhook = await client.webhooks.rotateSecret(3)
    expect(webhook.secret).toBe(next)
    expect(webhook.created).toBeInstanceOf(Date)
    expect(requests.map(call)).toEqual(['POST /webhooks/3/rotate-secret'])
    expect(requests[0]!.body).toBeUndefined()
    expect(requests[0]!.headers.get('idempotency-key')).toBeNull()
  })

  it('test: POST /webhooks/{id}/test, 202 with the message id', async () => {
    const { client, requests } = fakeClient([() => json(202, { success: true, message_id: 'msg_abc' }), () => json(202, { success: true })])
    expect(await client.webhooks.test(3)).toEqual({ message_id: 'msg_abc' })
    expect(requests.map(call)).toEqual(['POST /webhooks/3/test'])
    expect(requests[0]!.body).toBeUndefined()
    await expect(client.webhooks.test(3)).rejects.toThrow(/no message_id/)
  })

  it('retryDelivery: POST /webhooks/{id}/deliveries/{delivery_id}/retry, 202', async () => {
    const { client, requests } = fakeClient([() => json(202, { success: true })])
    await expect(client.webhooks.retryDelivery(3, 41)).resolves.toBeUndefined()
    expect(requests.map(call)).toEqual(['POST /webhooks/3/deliveries/41/retry'])
  })

  it('rotateSecret, test and retryDelivery are retried after 429 and 503, never after a lost connection or another 5xx', async () => {
    const calls = [
      (c: ReturnType<typeof fakeClient>['client']) => c.webhooks.rotateSecret(3),
      (c: ReturnType<typeof fakeClient>['client']) => c.webhooks.test(3),
      (c: ReturnType<typeof fakeClient>['client']) => c.webhooks.retryDelivery(3, 41),
    ]
    const ok = () => json(200, { success: true, message_id: 'msg_1', webhook: { ...WEBHOOK, secret: SECRET } })
    for (const run of calls) {
      const retried = fakeClient([() => apiError(503, 'service_unavailable'), () => apiError(429, 'rate_limited'), ok])
      await run(retried.client)
      expect(retried.requests).toHaveLength(3)
      for (const failure of [() => connectionFailure(), () => apiError(500, 'internal_error')]) {
        const once = fakeClient([failure, ok])
        await expect(run(once.client)).rejects.toBeInstanceOf(FileshareError)
        expect(once.requests).toHaveLength(1)
      }
    }
    await expect(fakeClient([() => connectionFailure()]).client.webhooks.test(3)).rejects.toBeInstanceOf(APIConnectionError)
    // Reading and changing an endpoint is retried as any GET, PATCH or DELETE.
    const read = fakeClient([() => connectionFailure(), () => answer(), () => connectionFailure(), () => answer()])
    await read.client.webhooks.get(3)
    await read.client.webhooks.update(3, { enabled: true })
    expect(read.requests.map(call)).toEqual(['GET /webhooks/3', 'GET /webhooks/3', 'PATCH /webhooks/3', 'PATCH /webhooks/3'])
  })

  it('checks ids before sending', async () => {
    const { client, requests } = fakeClient([() => answer()])
    await expect(client.webhooks.get(0)).rejects.toThrow(/a webhook id is a positive integer/)
    await expect(client.webhooks.update('x', {})).rejects.toBeInstanceOf(ConfigurationError)
    await expect(client.webhooks.retryDelivery(3, 1.5)).rejects.toThrow(/a delivery id is a positive integer/)
    await expect(client.webhooks.deliveries(-1)).rejects.toBeInstanceOf(ConfigurationError)
    expect(requests).toHaveLength(0)
  })

  it('the errors of webhooks: webhook_url_not_allowed, webhook_limit_exceeded (not retried), not_found, insufficient_scope', async () => {
    const { client, requests } = fakeClient(
      [
        () => apiError(400, 'webhook_url_not_allowed'),
        () => apiError(403, 'webhook_limit_exceeded'),
        () => apiError(404, 'not_found'),
        () =>
          json(
            403,
            { success: false, error: { code: 'insufficient_scope', message: 'm', required_scope: 'webhooks:manage' } },
            { 'www-authenticate': 'Bearer error="insufficient_scope", scope="webhooks:manage"' },
          ),
      ],
      { maxRetries: 3 },
    )
    const params = { url: 'http://10.0.0.1/hook', events: ['*'] }
    await expect(client.webhooks.create(params)).rejects.toMatchObject({
      name: 'BadRequestError',
      status: 400,
      code: 'webhook_url_not_allowed',
    })
    const limit = await client.webhooks.create(params).catch((e: unknown) => e)
    expect(limit).toBeInstanceOf(LimitExceededError)
    expect(limit).toMatchObject({ status: 403, code: 'webhook_limit_exceeded' })
    await expect(client.webhooks.get(99)).rejects.toBeInstanceOf(NotFoundError)
    const scope = await client.webhooks.list().catch((e: unknown) => e)
    expect(scope).toBeInstanceOf(InsufficientScopeError)
    expect(scope).toMatchObject({ requiredScope: 'webhooks:manage' })
    expect(requests).toHaveLength(4)
    expect(ERROR_CODES).toContain('webhook_url_not_allowed')
    expect(ERROR_CODES).toContain('webhook_limit_exceeded')
  })
})

describe('client.webhooks: deliveries', () => {
  it('deliveries() sends limit and before_id; deliveries have created and next_attempt', async () => {
    const pending = {
      ...delivery(9, 'pending'),
      attempts: 2,
      last_status: 503,
      last_error: 'HTTP 503',
      next_attempt_at: '2026-11-27 10:35:00',
    }
    const { client, requests } = fakeClient([
      () => json(200, { success: true, deliveries: [pending, delivery(8)], pagination: { limit: 2, next_before_id: 8 } }),
    ])
    const list = await client.webhooks.deliveries(3, { limit: 2, before_id: 10 })
    expect(requests.map(call)).toEqual(['GET /webhooks/3/deliveries?limit=2&before_id=10'])
    expect(list.pagination).toEqual({ limit: 2, next_before_id: 8 })
    const first: WebhookDelivery = list.deliveries[0]!
    expect(first).toEqual(pending)
    expect(first.created.toISOString()).toBe('2026-11-27T10:05:00.000Z')
    expect(first.next_attempt?.toISOString()).toBe('2026-11-27T10:35:00.000Z')
    expect(list.deliveries[1]!.next_attempt).toBeNull()
    expect(Object.keys(list.deliveries[1]!)).toEqual([...WEBHOOK_DELIVERY_FIELDS])
  })

  it('deliveries() without options sends no query; beforeId is accepted; two different ones are refused', async () => {
    const { client, requests } = fakeClient([deliveryServer([1]), deliveryServer([1])])
    await client.webhooks.deliveries(3)
    await client.webhooks.deliveries(3, { beforeId: 9 })
    await expect(client.webhooks.deliveries(3, { before_id: 3, beforeId: 4 })).rejects.toBeInstanceOf(ConfigurationError)
    expect(requests.map(call)).toEqual(['GET /webhooks/3/deliveries', 'GET /webhooks/3/deliveries?before_id=9'])
  })

  it('iterateDeliveries() pages by next_before_id until it is null', async () => {
    const { client, requests } = fakeClient([deliveryServer([1, 2, 3, 4, 5, 6, 7])])
    const seen: number[] = []
    for await (const d of client.webhooks.iterateDeliveries(3, { limit: 3 })) seen.push(d.delivery_id)
    expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1])
    expect(requests.map(call)).toEqual([
      'GET /webhooks/3/deliveries?limit=3',
      'GET /webhooks/3/deliveries?limit=3&before_id=5',
      'GET /webhooks/3/deliveries?limit=3&before_id=2',
    ])
  })

  it('iterateDeliveries() asks 100 per page by default; never yields one twice, and stops when next_before_id does not move', async () => {
    const empty = fakeClient([deliveryServer([])])
    for await (const _ of empty.client.webhooks.iterateDeliveries(3)) throw new Error('nothing to yield')
    expect(empty.requests.map(call)).toEqual(['GET /webhooks/3/deliveries?limit=100'])

    const page = (ids: number[], next: number | null) => () =>
      json(200, { success: true, deliveries: ids.map((id) => delivery(id)), pagination: { limit: 2, next_before_id: next } })
    const { client } = fakeClient([page([9, 8], 8), page([8, 7], 7), page([6, 5], 7)])
    const seen: number[] = []
    const error = await (async () => {
      for await (const d of client.webhooks.iterateDeliveries(3, { limit: 2 })) seen.push(d.delivery_id)
    })().catch((e: unknown) => e)
    expect(seen).toEqual([9, 8, 7, 6, 5])
    expect((error as Error).message).toMatch(/next_before_id 7 does not move past 7/)
  })

  it('an answer without a delivery list is a FileshareError', async () => {
    const { client } = fakeClient([() => json(200, { success: true, deliveries: [] })])
    await expect(client.webhooks.deliveries(3)).rejects.toThrow(/no delivery list/)
  })

  it('the field lists', () => {
    expect(WEBHOOK_FIELDS).toEqual(['webhook_id', 'url', 'events', 'description', 'enabled', 'disabled_reason', 'created_at'])
    expect(WEBHOOK_DELIVERY_FIELDS).toEqual([
      'delivery_id',
      'event_type',
      'message_id',
      'attempts',
      'last_status',
      'last_error',
      'next_attempt_at',
      'state',
      'created_at',
    ])
  })
})

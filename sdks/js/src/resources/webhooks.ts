// Webhooks: Webhooks.verify checks a message the server sent to your endpoint; client.webhooks
// manages the endpoints (scope webhooks:manage): create, list, get, update, delete, rotateSecret,
// test, and their deliveries.
import { FileshareError } from '../errors.js'
import { call, type APIPromise } from '../api-promise.js'
import type { Http } from '../http.js'
import { toWebhook, toWebhookDeliveryList, toWebhookWithSecret, type RawWebhook } from '../records.js'
import type {
  IdempotencyOptions,
  RequestOptions,
  Webhook,
  WebhookCreateParams,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookDeliveryListOptions,
  WebhookEvent,
  WebhookTestResult,
  WebhookUpdateParams,
  WebhookWithSecret,
} from '../types.js'
import { verifyWebhook, type WebhookBody, type WebhookHeaders, type WebhookVerifyOptions } from '../webhook-verify.js'
import { beforeIdOption, idempotencyHeader, jsonBody, resourceId } from './params.js'

const webhookPath = (id: number | string) => `/webhooks/${resourceId(id, 'webhook')}`

export class Webhooks {
  /** @internal */
  constructor(private readonly http: Http) {}

  /**
   * Verifies a webhook message and returns its event (`{ type, timestamp, data }`), or throws a
   * {@link WebhookVerificationError} that says what is wrong. Standalone: no client, no request.
   *
   * - `body`: the raw body exactly as received (a Buffer / Uint8Array, an ArrayBuffer or a string):
   *   with Express, `express.raw({ type: 'application/json' })` on the route, never `express.json()`.
   * - `headers`: `req.headers`, a fetch `Headers`, a `Map` or an object, names in any case. Reads
   *   `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature` (`v1,<base64>`
   *   entries separated by spaces: any one matching is enough, other versions are ignored).
   * - `secret`: the endpoint's `whsec_…` secret (shown when it was created or rotated).
   * - `toleranceSeconds` (default 300): how far `webhook-timestamp` may be from `now` either way.
   *
   * The signature is HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>` (Standard
   * Webhooks), compared in constant time. The same message may come more than once: deduplicate
   * by `webhook-id`.
   */
  static verify(body: WebhookBody, headers: WebhookHeaders, secret: string, options: WebhookVerifyOptions = {}): WebhookEvent {
    return verifyWebhook(body, headers, secret, options)
  }

  /**
   * A new endpoint that receives the `events` given (`['*']`: all). The answer holds its `secret`,
   * which no other call shows again: keep it for {@link Webhooks.verify}. Every attempt carries
   * the call's `Idempotency-Key`, so a retry after a lost answer gets the endpoint made the first
   * time. A URL the server refuses (not https, credentials in it, a private address) is a
   * `BadRequestError` (`webhook_url_not_allowed`); the 21st endpoint of an account a
   * `LimitExceededError` (`webhook_limit_exceeded`).
   */
  create(params: WebhookCreateParams & IdempotencyOptions & RequestOptions): APIPromise<WebhookWithSecret> {
    return call(this.http, params, async (http) => {
      const headers = idempotencyHeader(params.idempotencyKey)
      const data = await http.json<{ webhook: RawWebhook }>('POST', '/webhooks', { body: jsonBody(params), headers, signal: params.signal })
      return toWebhookWithSecret(data.webhook)
    })
  }

  /** The account's endpoints (at most 20), without their secrets. */
  list(options: RequestOptions = {}): APIPromise<Webhook[]> {
    return call(this.http, options, async (http) => {
      const data = await http.json<{ webhooks: RawWebhook[] }>('GET', '/webhooks', { signal: options.signal })
      if (!Array.isArray(data?.webhooks)) throw new FileshareError('the answer holds no webhook list')
      return data.webhooks.map(toWebhook)
    })
  }

  /** One endpoint, without its secret. */
  get(webhookId: number | string, options: RequestOptions = {}): APIPromise<Webhook> {
    return call(this.http, options, async (http) => {
      const data = await http.json<{ webhook: RawWebhook }>('GET', webhookPath(webhookId), { signal: options.signal })
      return toWebhook(data.webhook)
    })
  }

  /**
   * Changes an endpoint: the fields given are set (`description: null` clears it), the others are
   * kept. `enabled: true` enables an endpoint again, whatever disabled it.
   */
  update(webhookId: number | string, changes: WebhookUpdateParams & RequestOptions = {}): APIPromise<Webhook> {
    return call(this.http, changes, async (http) => {
      const data = await http.json<{ webhook: RawWebhook }>('PATCH', webhookPath(webhookId), {
        body: jsonBody(changes),
        signal: changes.signal,
      })
      return toWebhook(data.webhook)
    })
  }

  /** Deletes an endpoint; its pending deliveries are dropped. */
  delete(webhookId: number | string, options: RequestOptions = {}): APIPromise<void> {
    return call(this.http, options, async (http) => {
      await http.json<unknown>('DELETE', webhookPath(webhookId), { signal: options.signal })
    })
  }

  /**
   * A new secret for an endpoint, in the answer only. For 24 hours the old secret signs too (two
   * `v1` signatures in `webhook-signature`), so receivers with either secret keep verifying while
   * you deploy the new one. Retried only when the server answered 429 or 503.
   */
  rotateSecret(webhookId: number | string, options: RequestOptions = {}): APIPromise<WebhookWithSecret> {
    return call(this.http, options, async (http) => {
      const path = `${webhookPath(webhookId)}/rotate-secret`
      const data = await http.json<{ webhook: RawWebhook }>('POST', path, { signal: options.signal, once: true })
      return toWebhookWithSecret(data.webhook)
    })
  }

  /**
   * Sends a `webhook.test` event (`data: { webhook_id }`) to this endpoint only; answers the
   * message's id (its `webhook-id`), which `deliveries()` lists. Retried only when the server
   * answered 429 or 503.
   */
  test(webhookId: number | string, options: RequestOptions = {}): APIPromise<WebhookTestResult> {
    return call(this.http, options, async (http) => {
      const path = `${webhookPath(webhookId)}/test`
      const data = await http.json<{ message_id?: unknown }>('POST', path, { signal: options.signal, once: true })
      if (typeof data?.message_id !== 'string') throw new FileshareError('the answer holds no message_id')
      return { message_id: data.message_id }
    })
  }

  /**
   * One page of an endpoint's deliveries, newest first (`limit` 1 to 100, default 20; the
   * deliveries older than `before_id`, a page's `pagination.next_before_id`). Kept 30 days.
   */
  deliveries(webhookId: number | string, options: WebhookDeliveryListOptions & RequestOptions = {}): APIPromise<WebhookDeliveryList> {
    return call(this.http, options, async (http) => {
      const query = { limit: options.limit, before_id: beforeIdOption(options) }
      const { data } = await http.request<Parameters<typeof toWebhookDeliveryList>[0]>({
        method: 'GET',
        url: http.url(`${webhookPath(webhookId)}/deliveries`, query),
        signal: options.signal,
      })
      return toWebhookDeliveryList(data)
    })
  }

  /**
   * Every delivery of an endpoint, newest first, `limit` per request (default 100), each page
   * asked for with the `next_before_id` of the one before: no delivery is yielded twice.
   */
  async *iterateDeliveries(
    webhookId: number | string,
    options: Omit<WebhookDeliveryListOptions, 'before_id' | 'beforeId'> & RequestOptions = {},
  ): AsyncGenerator<WebhookDelivery, void, undefined> {
    const { limit = 100, before_id: _before, beforeId: _camel, ...rest } = options as WebhookDeliveryListOptions & RequestOptions
    let result = await this.deliveries(webhookId, { ...rest, limit })
    let below: number | undefined // the last delivery yielded: every later one is older
    let asked: number | undefined
    for (;;) {
      for (const delivery of result.deliveries) {
        if (below !== undefined && delivery.delivery_id >= below) continue
        below = delivery.delivery_id
        yield delivery
      }
      const next = result.pagination.next_before_id
      if (next === null || next === undefined) return
      if (asked !== undefined && next >= asked) throw new FileshareError(`the server's next_before_id ${next} does not move past ${asked}`)
      asked = next
      result = await this.deliveries(webhookId, { ...rest, limit, before_id: next })
    }
  }

  /**
   * Has the server attempt a delivery again (202: it is queued), as the same message: the same
   * `webhook-id`, which receivers deduplicate by. Retried only when the server answered 429 or 503.
   */
  retryDelivery(webhookId: number | string, deliveryId: number | string, options: RequestOptions = {}): APIPromise<void> {
    return call(this.http, options, async (http) => {
      const path = `${webhookPath(webhookId)}/deliveries/${resourceId(deliveryId, 'delivery')}/retry`
      await http.json<unknown>('POST', path, { signal: options.signal, once: true })
    })
  }
}

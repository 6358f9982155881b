// Webhooks: Webhooks.verify checks a message the server sent to your endpoint.
import { verifyWebhook, type WebhookBody, type WebhookHeaders, type WebhookVerifyOptions } from '../webhook-verify.js'
import type { WebhookEvent } from '../types.js'

export class Webhooks {
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
}

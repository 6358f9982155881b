import { createHmac, randomBytes } from 'node:crypto'

/**
 * The signing side of the Standard Webhooks scheme (standardwebhooks.com,
 * ../shared/spec/webhooks.md "The message"): secrets, message ids and the `webhook-signature`
 * header. Verifying is the consumer's (and the SDKs') business.
 */

const SECRET_PREFIX = 'whsec_'
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const MESSAGE_ID_LENGTH = 27

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64')
}

/** `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed with the base64-decoded secret (its `whsec_` prefix removed). */
export function webhookSignature(secret: string, messageId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')
  const mac = createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`, 'utf8').digest('base64')
  return `v1,${mac}`
}

/** The `webhook-signature` header: one signature per secret, space-separated (during a rotation: new first, then old). */
export function signatureHeader(secrets: readonly string[], messageId: string, timestamp: number, body: string): string {
  return secrets.map((secret) => webhookSignature(secret, messageId, timestamp, body)).join(' ')
}

/** A new `webhook-id`: `msg_` + 27 random base62 characters (about 160 bits). */
export function newMessageId(): string {
  let id = 'msg_'
  while (id.length < 4 + MESSAGE_ID_LENGTH) {
    for (const byte of randomBytes(MESSAGE_ID_LENGTH)) {
      // 248 = 4 * 62: bytes at or above it are dropped so every character is equally likely.
      if (byte < 248 && id.length < 4 + MESSAGE_ID_LENGTH) id += BASE62[byte % 62]
    }
  }
  return id
}

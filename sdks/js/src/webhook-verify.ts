// Verifying a webhook message (Standard Webhooks, standardwebhooks.com): HMAC-SHA256 over
// `<webhook-id>.<webhook-timestamp>.<body>` keyed with the base64 part of the `whsec_` secret,
// compared in constant time, and the timestamp within the tolerance of now.
//
// In Node (and Deno, Bun, workers with Node compatibility) the HMAC and the comparison are
// node:crypto's `createHmac` and `timingSafeEqual`, reached through `process.getBuiltinModule`
// rather than an import, so that the same ESM still loads in browsers; elsewhere (browsers, Node
// before 20.16) @noble/hashes computes the HMAC and the comparison is a constant-time loop.
// Either way `verify` is synchronous, as a receiver's handler wants it.
import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { ConfigurationError, WebhookVerificationError } from './errors.js'
import type { WebhookEvent } from './types.js'

/** The raw body, exactly as received: a string, a Buffer / Uint8Array, or an ArrayBuffer. */
export type WebhookBody = string | Uint8Array | ArrayBuffer | ArrayBufferView

/**
 * The request's headers, names in any letter case: Node's `req.headers` (IncomingHttpHeaders), a
 * fetch `Headers`, a `Map`, `[name, value]` pairs, or a plain object.
 */
export type WebhookHeaders =
  | { get(name: string): string | null | undefined }
  | Iterable<readonly [string, string]>
  | Readonly<Record<string, string | readonly string[] | undefined>>

/** Options of `Webhooks.verify`. */
export interface WebhookVerifyOptions {
  /** How far the `webhook-timestamp` may be from now, in either direction, in seconds. Default 300. */
  toleranceSeconds?: number | undefined
  /** The time to check against: unix seconds or a `Date` (tests). Default: the clock. */
  now?: number | Date | undefined
}

/** Seconds `webhook-timestamp` may be off from now, either way. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300

/** @internal The two operations the verifier needs, so that tests can run both implementations. */
export interface WebhookCrypto {
  hmacSha256(key: Uint8Array, message: Uint8Array): Uint8Array
  /** Constant-time for arrays of the same length (the length itself is no secret). */
  equal(a: Uint8Array, b: Uint8Array): boolean
}

type NodeCrypto = typeof import('node:crypto')

/** @internal node:crypto's, where the runtime offers `process.getBuiltinModule` (Node >= 20.16). */
export function nodeWebhookCrypto(): WebhookCrypto | undefined {
  const process = globalThis.process as { getBuiltinModule?: (id: string) => unknown } | undefined
  if (typeof process?.getBuiltinModule !== 'function') return undefined
  const crypto = process.getBuiltinModule('node:crypto') as NodeCrypto | undefined
  if (!crypto || typeof crypto.createHmac !== 'function' || typeof crypto.timingSafeEqual !== 'function') return undefined
  return {
    hmacSha256: (key, message) => new Uint8Array(crypto.createHmac('sha256', key).update(message).digest()),
    equal: (a, b) => a.length === b.length && crypto.timingSafeEqual(a, b),
  }
}

/** @internal @noble/hashes' HMAC and a comparison that reads every byte whatever differs. */
export const portableWebhookCrypto: WebhookCrypto = {
  hmacSha256: (key, message) => hmac(sha256, key, message),
  equal: (a, b) => {
    if (a.length !== b.length) return false
    let difference = 0
    for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!
    return difference === 0
  },
}

let chosen: WebhookCrypto | undefined
function defaultCrypto(): WebhookCrypto {
  chosen ??= nodeWebhookCrypto() ?? portableWebhookCrypto
  return chosen
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** Strict base64 (padded, standard alphabet) to bytes; `undefined` when it is not that. */
function fromBase64(text: string): Uint8Array | undefined {
  if (!BASE64.test(text)) return undefined
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/** The key of a `whsec_<base64>` secret (a secret without the prefix is taken as the base64 itself). */
function secretKey(secret: unknown): Uint8Array {
  if (typeof secret !== 'string' || secret.trim() === '') {
    throw new WebhookVerificationError('no webhook secret: pass the whsec_… secret the endpoint was created with')
  }
  const text = secret.trim()
  const key = fromBase64(text.startsWith('whsec_') ? text.slice('whsec_'.length) : text)
  if (!key || key.length === 0) {
    throw new WebhookVerificationError('the webhook secret is not a whsec_ secret: "whsec_" followed by base64')
  }
  return key
}

/** The body's bytes; anything but the raw body (a parsed object) is refused with the fix. */
function bodyBytes(body: unknown): Uint8Array {
  if (typeof body === 'string') return new TextEncoder().encode(body)
  if (body instanceof Uint8Array) return body
  if (body instanceof ArrayBuffer) return new Uint8Array(body)
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength)
  const what = body === undefined || body === null ? String(body) : typeof body === 'object' ? 'a parsed object' : `a ${typeof body}`
  throw new WebhookVerificationError(
    `the body is ${what}, not the raw body: pass the bytes or text exactly as received ` +
      `(Express: express.raw({ type: 'application/json' }) on this route, not express.json())`,
  )
}

/** A case-insensitive reader of the headers, whatever their type. */
function headerReader(headers: unknown): (name: string) => string | undefined {
  if (headers === null || typeof headers !== 'object') {
    throw new WebhookVerificationError('no headers: pass the request headers (req.headers, or a Headers)')
  }
  const fromEntries = (entries: Iterable<readonly [unknown, unknown]>) => {
    const found = new Map<string, string>()
    for (const [name, value] of entries) {
      if (typeof name !== 'string' || value === undefined || value === null) continue
      const text = Array.isArray(value) ? value.map(String).join(' ') : String(value)
      const key = name.toLowerCase()
      found.set(key, found.has(key) ? `${found.get(key)} ${text}` : text)
    }
    return (name: string) => found.get(name)
  }
  if (headers instanceof Map) return fromEntries(headers)
  const getter = (headers as { get?: unknown }).get
  if (typeof getter === 'function') {
    return (name) => {
      const value: unknown = getter.call(headers, name)
      return typeof value === 'string' ? value : undefined
    }
  }
  if (Symbol.iterator in headers) return fromEntries(headers as Iterable<readonly [unknown, unknown]>)
  return fromEntries(Object.entries(headers))
}

function required(read: (name: string) => string | undefined, name: string): string {
  const value = read(name)?.trim()
  if (!value) throw new WebhookVerificationError(`the ${name} header is missing: is this a webhook message?`)
  return value
}

function nowSeconds(now: number | Date | undefined): number {
  if (now === undefined) return Date.now() / 1000
  const seconds = now instanceof Date ? now.getTime() / 1000 : now
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) throw new ConfigurationError('now must be unix seconds or a valid Date')
  return seconds
}

/**
 * Checks a webhook message and returns its event; throws a {@link WebhookVerificationError} that
 * says what is wrong otherwise. See `Webhooks.verify`.
 */
export function verifyWebhook(
  body: WebhookBody,
  headers: WebhookHeaders,
  secret: string,
  options: WebhookVerifyOptions = {},
  crypto: WebhookCrypto = defaultCrypto(),
): WebhookEvent {
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new ConfigurationError('toleranceSeconds must be a non-negative number of seconds')
  }
  const now = nowSeconds(options.now)
  const key = secretKey(secret)
  const bytes = bodyBytes(body)
  const read = headerReader(headers)
  const id = required(read, 'webhook-id')
  const timestamp = required(read, 'webhook-timestamp')
  const signatures = required(read, 'webhook-signature')

  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new WebhookVerificationError(`the webhook-timestamp header is not unix seconds: ${JSON.stringify(timestamp.slice(0, 40))}`)
  }
  const age = now - Number(timestamp)
  if (age > tolerance) {
    throw new WebhookVerificationError(
      `the message timestamp is ${Math.round(age)} s old, more than the ${tolerance} s allowed: a stale or replayed message (or a wrong clock)`,
    )
  }
  if (-age > tolerance) {
    throw new WebhookVerificationError(
      `the message timestamp is ${Math.round(-age)} s in the future, more than the ${tolerance} s allowed (a wrong clock?)`,
    )
  }

  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`)
  const signed = new Uint8Array(prefix.length + bytes.length)
  signed.set(prefix)
  signed.set(bytes, prefix.length)
  const expected = crypto.hmacSha256(key, signed)
  let v1 = 0
  let matched = false
  for (const entry of signatures.split(/\s+/)) {
    const comma = entry.indexOf(',')
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue // other versions are not ours to check
    v1 += 1
    const candidate = fromBase64(entry.slice(comma + 1))
    // Every v1 entry is compared, also after a match, so that the time taken does not say which matched.
    if (candidate && crypto.equal(candidate, expected)) matched = true
  }
  if (v1 === 0) throw new WebhookVerificationError('the webhook-signature header holds no v1 signature')
  if (!matched) {
    throw new WebhookVerificationError(
      `no signature matches (${v1} v1 signature${v1 === 1 ? '' : 's'} checked): a wrong secret, or a body changed on its way (verify the raw body)`,
    )
  }

  let event: unknown
  try {
    event = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch {
    throw new WebhookVerificationError('the body is signed but is not JSON')
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    throw new WebhookVerificationError('the body is signed but is not a JSON object')
  }
  return event as WebhookEvent
}

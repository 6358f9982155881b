import https from 'node:https'
import type { LookupFunction } from 'node:net'
import { isIP } from 'node:net'
import { performance } from 'node:perf_hooks'
import { http } from '../lib/node-http.js'

/**
 * One delivery attempt of a webhook message: ../shared/spec/webhooks.md, "Delivery". The connection
 * goes to the address resolveWebhookTarget checked (never to a fresh DNS answer), while the Host
 * header and TLS (SNI and the certificate check) keep the URL's name. Redirects are not followed;
 * the whole attempt is bounded; nothing throws: every outcome is an attempt to record.
 */

export interface WebhookAttempt {
  /** The answer's status code; null when no answer came (refused, reset, TLS, timeout). */
  status: number | null
  durationMs: number
  /** A short error (a socket or TLS code such as ECONNREFUSED, or 'timeout'); null when an answer came. */
  error: string | null
  /** From a Retry-After header (seconds or an HTTP date), on any status. */
  retryAfterSeconds: number | null
}

export interface WebhookSendTarget {
  url: URL
  address: string
  family: 4 | 6
  /** Every checked address of the host, in the resolver's order: the connection may fall back to the next. */
  addresses?: readonly { address: string; family: 4 | 6 }[]
}

export interface WebhookSendMessage {
  id: string
  timestamp: number
  body: string
  signature: string
  userAgent: string
}

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 15_000
/** At most this much of an answer's body is read (and thrown away) before the socket is closed. */
export const MAX_ANSWER_BYTES = 64 * 1024
const MAX_ERROR_LENGTH = 200

/** Retry-After as seconds from `nowMs`: delta-seconds or an HTTP date (a past date is 0); null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number = Date.now()): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim()
  if (text === undefined || text === '') return null
  if (/^\d+$/.test(text)) {
    const seconds = Number(text)
    return Number.isSafeInteger(seconds) ? seconds : null
  }
  // An HTTP date names its day and its zone (RFC 9110: IMF-fixdate, or the obsolete RFC 850 and asctime forms).
  if (!/^[A-Za-z]{3}/.test(text)) return null
  const at = Date.parse(text)
  if (Number.isNaN(at)) return null
  return Math.max(0, Math.ceil((at - nowMs) / 1000))
}

function shortError(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  const text = typeof code === 'string' && code !== '' ? code : typeof message === 'string' && message !== '' ? message : String(error)
  return text.length > MAX_ERROR_LENGTH ? text.slice(0, MAX_ERROR_LENGTH) : text
}

/** POSTs the signed message to the target and reports the attempt. */
export function sendWebhook(
  target: WebhookSendTarget,
  message: WebhookSendMessage,
  options: { timeoutMs?: number } = {},
): Promise<WebhookAttempt> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS
  const started = performance.now()
  const { url } = target
  const name = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  const isLiteral = isIP(name) !== 0
  const body = Buffer.from(message.body, 'utf8')

  // Every lookup the socket makes answers the checked addresses only (Node asks with `all: true` when
  // it tries several in turn, "happy eyeballs": a host whose first address does not answer from
  // here is reached on the next; otherwise it asks for one).
  const checked = target.addresses && target.addresses.length > 0 ? target.addresses : [{ address: target.address, family: target.family }]
  const pinnedLookup: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all === true) {
      ;(callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [...checked])
    } else {
      callback(null, target.address, target.family)
    }
  }

  return new Promise<WebhookAttempt>((resolve) => {
    let status: number | null = null
    let retryAfterSeconds: number | null = null
    let settled = false

    const finish = (error: string | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      request.destroy()
      resolve({ status, durationMs: Math.round((performance.now() - started) * 1000) / 1000, error, retryAfterSeconds })
    }

    const request = (url.protocol === 'https:' ? https : http).request({
      method: 'POST',
      protocol: url.protocol,
      // An IP literal is connected to as it is (Node asks no resolver for it): use the checked one.
      host: isLiteral ? target.address : name,
      // No family: Node then tries every checked address in turn (autoSelectFamily).
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      lookup: pinnedLookup,
      // A fresh connection for each attempt: no pooled socket to some earlier address.
      agent: false,
      // TLS checks the certificate against the URL's name (SNI carries no IP literal).
      ...(url.protocol === 'https:' && !isLiteral ? { servername: name } : {}),
      headers: {
        host: url.host,
        'content-type': 'application/json',
        'content-length': String(body.length),
        'user-agent': message.userAgent,
        'webhook-id': message.id,
        'webhook-timestamp': String(message.timestamp),
        'webhook-signature': message.signature,
      },
    })

    // Connecting, sending and the answer's headers share one deadline; after the headers the status
    // is known, and the rest of the time only bounds reading the body that is thrown away.
    const timer = setTimeout(() => finish(status === null ? 'timeout' : null), timeoutMs)

    request.on('error', (error) => finish(status === null ? shortError(error) : null))
    request.on('response', (response) => {
      status = response.statusCode ?? null
      retryAfterSeconds = parseRetryAfter(response.headers['retry-after'])
      let read = 0
      response.on('data', (chunk: Buffer) => {
        read += chunk.length
        if (read >= MAX_ANSWER_BYTES) finish(null)
      })
      response.on('end', () => finish(null))
      response.on('error', () => finish(null))
      response.on('aborted', () => finish(null))
    })
    request.end(body)
  })
}

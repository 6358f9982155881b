import type { ErrorCode } from './types.js'

/** `RateLimit-*` values of a response, where the server sent them. */
export interface RateLimitInfo {
  /** The limit of the window that binds first. */
  readonly limit: number | undefined
  /** Requests left in that window. */
  readonly remaining: number | undefined
  /** Seconds until that window frees a request. */
  readonly reset: number | undefined
}

export interface FileshareErrorInit {
  status?: number | undefined
  code?: string | undefined
  requestId?: string | undefined
  retryAfter?: number | undefined
  rateLimit?: RateLimitInfo | undefined
  /** The response's headers, when there was a response. */
  headers?: Headers | undefined
  /** The response's body: its JSON parsed, else its text. */
  body?: unknown
  cause?: unknown
}

/** Base class of every error the SDK throws (except an `AbortError` from your own signal). */
export class FileshareError extends Error {
  /** HTTP status, when there was a response. */
  readonly status: number | undefined
  /** The body's `error.code` (snake_case), when there was one: one of {@link ErrorCode}, or a code newer than this SDK. */
  readonly code: ErrorCode | (string & {}) | undefined
  /** `X-Request-Id` of the response: quote it when reporting a problem. */
  readonly requestId: string | undefined
  /** Seconds the server asked to wait (`Retry-After`), when it did. */
  readonly retryAfter: number | undefined
  /** The response's headers (`RateLimit-*`, `Retry-After`, …), when there was a response. */
  readonly headers: Headers | undefined
  /** The response's body: its JSON parsed, else its text; `undefined` when there was no response. */
  readonly body: unknown

  /** The message ends in `(request id …)` whenever the server named one, for every error class. */
  constructor(message: string, init: FileshareErrorInit = {}) {
    const withId = init.requestId && !message.includes(init.requestId) ? `${message} (request id ${init.requestId})` : message
    super(withId, init.cause === undefined ? undefined : { cause: init.cause })
    this.name = new.target.name
    this.status = init.status
    this.code = init.code
    this.requestId = init.requestId
    this.retryAfter = init.retryAfter
    this.headers = init.headers
    this.body = init.body
  }
}

/** 401: missing, malformed, unknown, revoked or expired API key; `invalid_password`: a link's password is missing or wrong. */
export class AuthenticationError extends FileshareError {}

/**
 * 403 that no retry can change: `plan_not_supported` (the account's plan has no API access),
 * `insufficient_scope` ({@link InsufficientScopeError}) and `ip_not_allowed`
 * ({@link IpNotAllowedError}). Never retried.
 */
export class PermissionDeniedError extends FileshareError {
  /**
   * The scope the call needs and the key lacks (`files:delete`, …): the body's
   * `error.required_scope`, else the `scope="…"` of `WWW-Authenticate`; `null` when the answer
   * names none (always for `plan_not_supported` and `ip_not_allowed`).
   */
  readonly requiredScope: string | null
  constructor(message: string, init: FileshareErrorInit & { requiredScope?: string | null | undefined } = {}) {
    super(message, init)
    this.requiredScope = init.requiredScope ?? null
  }
}

/**
 * 403 `insufficient_scope`: the key does not hold the scope the call needs (`requiredScope`).
 * `client.key()` lists the scopes it holds; a key's scopes are set in the dashboard or with the
 * operator CLI, never through the API.
 */
export class InsufficientScopeError extends PermissionDeniedError {}

/** 403 `ip_not_allowed`: the key has `allowed_ips`, and the address the server sees is not among them. */
export class IpNotAllowedError extends PermissionDeniedError {}

/**
 * 403 `file_too_large` / `daily_upload_limit_exceeded` / `storage_quota_exceeded` (the upload would
 * take the account past its `max_storage`) / `link_limit_exceeded` / `webhook_limit_exceeded` /
 * `upload_request_full` (an upload request has no room left for the file) / `file_not_scannable`
 * (the file is larger than the server's virus scanner can scan, and the server serves only scanned
 * files: refused at upload, or a download of a file whose scan `status` is `error`), and 413
 * `file_too_large` of resumable uploads.
 */
export class LimitExceededError extends FileshareError {}

/** 404: no such file or link (or not this account's), no such upload, a dead link (unknown, expired, exhausted, revoked or rotated away). */
export class NotFoundError extends FileshareError {}

/**
 * Any other 4xx (409 `default_link_required` among them, and 409 `scan_pending`: {@link ScanPendingError}; and a 3xx: redirects are not followed):
 * the request was refused as it is; retrying it unchanged will not help. 422
 * `idempotency_key_reused`: the idempotency key was first used for another request. (409
 * `idempotency_in_progress`, the same key still at work, is retried by the SDK itself.)
 */
export class BadRequestError extends FileshareError {}

/**
 * 409 `scan_pending`: the file behind a download link has not been scanned for malware yet (the
 * server serves only scanned files). `retryAfter` says when to ask again (the server sends 10 s).
 * `download()` already waits that long and asks again, up to `maxRetries` times, before it throws
 * this. A {@link BadRequestError}, so code that catches those still catches it.
 */
export class ScanPendingError extends BadRequestError {}

/** 429: a request rate limit. `retryAfter` says how long to wait; `rateLimit` holds `RateLimit-*`. */
export class RateLimitError extends FileshareError {
  readonly rateLimit: RateLimitInfo
  constructor(message: string, init: FileshareErrorInit = {}) {
    super(message, init)
    this.rateLimit = init.rateLimit ?? { limit: undefined, remaining: undefined, reset: undefined }
  }
}

/** 5xx. */
export class ServerError extends FileshareError {}

/** No response: the connection failed, dropped, or stayed idle past `timeoutMs` ({@link APITimeoutError}). */
export class APIConnectionError extends FileshareError {}

/** Nothing moved for `timeoutMs` (connecting, sending or receiving): an {@link APIConnectionError}. */
export class APITimeoutError extends APIConnectionError {}

/** The bytes do not match their SHA-256 (an upload's `sha256`, a download's `ETag`). */
export class IntegrityError extends FileshareError {
  /** The SHA-256 the SDK expected (the server's or the link's). */
  readonly expected: string | undefined
  /** The SHA-256 of the bytes the SDK sent or received. */
  readonly actual: string | undefined
  constructor(message: string, init: FileshareErrorInit & { expected?: string; actual?: string } = {}) {
    super(message, init)
    this.expected = init.expected
    this.actual = init.actual
  }
}

/** The client is not set up right: no base URL, no key, a source this platform cannot read, ... */
export class ConfigurationError extends FileshareError {}

/**
 * A webhook message that `Webhooks.verify` refuses: a header missing or malformed, a secret that is
 * not a `whsec_…` secret, a timestamp outside the tolerance (stale or in the future), no signature
 * that matches, or a body that is not the raw JSON. The message says which. Answer such a request
 * with a 400 and do not act on it.
 */
export class WebhookVerificationError extends FileshareError {}

function headerNumber(headers: Headers, name: string): number | undefined {
  const raw = headers.get(name)
  if (raw === null || !/^\d+$/.test(raw.trim())) return undefined
  return Number(raw.trim())
}

/** `Retry-After` in seconds (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed)
  const date = Date.parse(trimmed)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, Math.ceil((date - now) / 1000))
}

/** The 403 codes of {@link LimitExceededError}. */
const LIMIT_CODES = new Set([
  'file_too_large',
  'daily_upload_limit_exceeded',
  'storage_quota_exceeded',
  'link_limit_exceeded',
  'webhook_limit_exceeded',
  'upload_request_full',
  'file_not_scannable',
])

/**
 * The `scope="…"` parameter of a `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`
 * header (RFC 6750), or undefined.
 */
export function scopeFromWwwAuthenticate(value: string | null): string | undefined {
  if (value === null) return undefined
  const match = /(?:^|[\s,])scope\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))/i.exec(value)
  if (!match) return undefined
  const scope = match[1] !== undefined ? match[1].replace(/\\(.)/g, '$1') : match[2]!
  return scope.trim() === '' ? undefined : scope.trim()
}

/** The `error="…"` parameter of a `WWW-Authenticate` header, or undefined. */
function errorFromWwwAuthenticate(value: string | null): string | undefined {
  if (value === null) return undefined
  return /(?:^|[\s,])error\s*=\s*"?([A-Za-z_]+)"?/i.exec(value)?.[1]
}

/** The error for a response that is not a success, from its status, body and headers. */
export function errorFromResponse(status: number, headers: Headers, bodyText: string): FileshareError {
  let code: string | undefined
  let serverMessage: string | undefined
  let requiredScope: string | undefined
  let parsed: unknown = bodyText === '' ? undefined : bodyText
  try {
    const body = JSON.parse(bodyText) as { error?: { code?: unknown; message?: unknown; required_scope?: unknown } }
    parsed = body
    if (typeof body?.error?.code === 'string') code = body.error.code
    if (typeof body?.error?.message === 'string') serverMessage = body.error.message
    if (typeof body?.error?.required_scope === 'string' && body.error.required_scope !== '') requiredScope = body.error.required_scope
  } catch {
    // not JSON (a proxy's page, an empty body)
  }
  const requestId = headers.get('x-request-id') ?? undefined
  const retryAfter = parseRetryAfter(headers.get('retry-after'))
  const init: FileshareErrorInit = { status, code, requestId, retryAfter, headers, body: parsed }
  let detail = serverMessage ?? (bodyText.trim().slice(0, 200) || 'no message')
  if (status >= 300 && status < 400) {
    // Redirects are not followed (the key is never sent elsewhere): a 3xx is refused as sent.
    const location = headers.get('location')
    detail = `a redirect${location ? ` to ${location.slice(0, 200)}` : ''}, which is not followed: check baseUrl`
  }
  const message = `${status}${code ? ` ${code}` : ''}: ${detail}`
  if (status === 401) return new AuthenticationError(message, init)
  if (status === 403) {
    if (code !== undefined && LIMIT_CODES.has(code)) return new LimitExceededError(message, init)
    const challenge = headers.get('www-authenticate')
    if (code === 'insufficient_scope' || (code === undefined && errorFromWwwAuthenticate(challenge) === 'insufficient_scope')) {
      return new InsufficientScopeError(message, { ...init, requiredScope: requiredScope ?? scopeFromWwwAuthenticate(challenge) })
    }
    if (code === 'ip_not_allowed') return new IpNotAllowedError(message, init)
    return new PermissionDeniedError(message, init)
  }
  if (status === 413 && (code === 'file_too_large' || code === undefined)) return new LimitExceededError(message, init)
  if (status === 404) return new NotFoundError(message, init)
  if (status === 429) {
    return new RateLimitError(message, {
      ...init,
      rateLimit: {
        limit: headerNumber(headers, 'ratelimit-limit'),
        remaining: headerNumber(headers, 'ratelimit-remaining'),
        reset: headerNumber(headers, 'ratelimit-reset'),
      },
    })
  }
  if (status >= 500) return new ServerError(message, init)
  if (status === 409 && code === 'scan_pending') return new ScanPendingError(message, init)
  return new BadRequestError(message, init)
}

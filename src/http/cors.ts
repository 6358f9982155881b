import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * Cross-origin access to /api/v1. The API authenticates with keys in the Authorization header and
 * never with cookies, so any origin may call it (a browser app with its own key): no credentials
 * are allowed, and a page of another site learns nothing it could not fetch with that key itself.
 */
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  // Resumable uploads (tus).
  'Upload-Offset',
  'Upload-Length',
  'Upload-Metadata',
  'Upload-Defer-Length',
  'Upload-Checksum',
  'Tus-Resumable',
  'X-HTTP-Method-Override',
  'X-Requested-With',
  // A file's lifetime (links.md) and safe retries (api-semantics.md).
  'Fileshare-Expires-In',
  'Idempotency-Key',
  // A guest's grant for a password-protected upload request (upload-requests.md).
  'Fileshare-Upload-Grant',
]
const EXPOSED_HEADERS = [
  'Location',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'X-Request-Id',
  // Resumable uploads (tus).
  'Upload-Offset',
  'Upload-Length',
  'Upload-Metadata',
  'Upload-Defer-Length',
  'Upload-Expires',
  'Tus-Resumable',
  'Tus-Version',
  'Tus-Extension',
  'Tus-Max-Size',
  'Tus-Checksum-Algorithm',
  'Fileshare-File-Id',
  'Idempotent-Replayed',
  // The scope a 403 insufficient_scope names (RFC 6750), also in its body as required_scope.
  'WWW-Authenticate',
]
const ALLOWED_METHODS = 'GET, HEAD, POST, PATCH, DELETE, OPTIONS'

const EXPOSED_HEADERS_VALUE = EXPOSED_HEADERS.join(', ')

/**
 * On every answer of the API, refusals included: a browser shows a page the error only with it.
 * A callback hook: an async one would cost a promise on every request.
 */
export function corsHeaders(_request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.header('Access-Control-Allow-Origin', '*')
  reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS_VALUE)
  done()
}

/** A browser's preflight asks with OPTIONS and Access-Control-Request-Method. */
export function isPreflight(request: FastifyRequest): boolean {
  return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined
}

/** The answer to a preflight (cached by the browser for a day). */
export const PREFLIGHT_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Access-Control-Allow-Methods': ALLOWED_METHODS,
  'Access-Control-Allow-Headers': ALLOWED_HEADERS.join(', '),
  'Access-Control-Max-Age': '86400',
})

/**
 * The error registry: every error a client can see, with its HTTP status and stable code.
 * Services and adapters throw these; the HTTP error handler is the only place that writes them.
 */
export const ERROR_REGISTRY = {
  missing_file: { status: 400, message: 'The request must be multipart/form-data with one file part named "file".' },
  invalid_parameter: { status: 400, message: 'A parameter is invalid.' },
  invalid_request: { status: 400, message: 'The request is malformed.' },
  unauthorized: { status: 401, message: 'The API key is missing or invalid.' },
  plan_not_supported: { status: 403, message: 'The account plan does not include API access.' },
  file_too_large: { status: 403, message: 'The file exceeds the maximum file size of the account.' },
  daily_upload_limit_exceeded: { status: 403, message: 'The daily upload limit of the account is reached.' },
  not_found: { status: 404, message: 'Resource not found.' },
  // Scoped keys (../shared/spec/keys-and-audit.md).
  insufficient_scope: { status: 403, message: 'The API key does not hold the scope this call needs.' },
  ip_not_allowed: { status: 403, message: 'The API key may not be used from this address.' },
  // Webhooks (../shared/spec/webhooks.md).
  webhook_url_not_allowed: { status: 400, message: 'The webhook URL is not allowed: it must reach a public address over HTTPS.' },
  webhook_limit_exceeded: { status: 403, message: 'The account has as many webhook endpoints as it may have.' },
  // Links (../shared/spec/links.md).
  invalid_password: { status: 401, message: 'The password of this link is missing or wrong.' },
  link_limit_exceeded: { status: 403, message: 'The file has as many links as it may have.' },
  // Upload requests (../shared/spec/upload-requests.md).
  upload_request_full: { status: 403, message: 'This upload request has no room left for this file.' },
  // Virus scanning (../shared/spec/upload-requests.md, second half).
  scan_pending: { status: 409, message: 'The file has not been scanned for malware yet; try again shortly.' },
  file_not_scannable: {
    status: 403,
    message: 'The file is larger than the virus scanner can scan (FILESHARE_SCAN_MAX_BYTES), and this server serves only scanned files.',
  },
  // Safe retries and quotas (../shared/spec/api-semantics.md).
  storage_quota_exceeded: { status: 403, message: 'The upload would take the account past its storage quota.' },
  idempotency_in_progress: { status: 409, message: 'A request with this Idempotency-Key is still running; retry shortly.' },
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was used for a different request.' },
  default_link_required: { status: 409, message: "A file's default link cannot be deleted; rotate it or limit it instead." },
  // Resumable uploads (tus, /api/v1/uploads): the statuses the tus protocol gives these cases.
  upload_expired: { status: 410, message: 'The upload expired unfinished; its bytes are gone. Start a new upload.' },
  tus_version_not_supported: { status: 412, message: 'Only version 1.0.0 of the tus protocol is supported (Tus-Resumable: 1.0.0).' },
  upload_offset_mismatch: {
    status: 409,
    message: 'Upload-Offset does not match the bytes the upload holds; ask with HEAD and resume there.',
  },
  upload_length_exceeded: { status: 413, message: 'The bytes go past the Upload-Length of the upload.' },
  unsupported_media_type: {
    status: 415,
    message: 'The bytes of a resumable upload must have Content-Type: application/offset+octet-stream.',
  },
  upload_locked: { status: 423, message: 'Another request is writing to this upload; retry shortly.' },
  checksum_mismatch: { status: 460, message: 'The chunk does not match its Upload-Checksum; it was not kept.' },
  range_not_satisfiable: { status: 416, message: 'The requested range cannot be satisfied.' },
  rate_limited: { status: 429, message: 'Rate limit exceeded.' },
  internal_error: { status: 500, message: 'An internal error occurred.' },
  service_unavailable: { status: 503, message: 'A backend the service depends on is unavailable.' },
  insufficient_storage: { status: 507, message: 'The service has no space left to store the file.' },
  // The web dashboard's own errors (docs/dashboard.md); never answered by /api/v1.
  sign_in_required: { status: 401, message: 'Sign in to continue.', dashboardOnly: true },
  sign_in_failed: { status: 401, message: 'The email address or the password is wrong.', dashboardOnly: true },
  csrf_failed: { status: 403, message: 'The request did not come from the dashboard; reload the page and try again.', dashboardOnly: true },
  invalid_invite: {
    status: 400,
    message: 'This invitation link is invalid, already used or expired; ask the operator for a new one.',
    dashboardOnly: true,
  },
  wrong_password: { status: 400, message: 'The current password is wrong.', dashboardOnly: true },
  // Two-factor sign-in (docs/dashboard.md, "Two-factor sign-in").
  // 400 as wrong_password: the dashboard's pages read a 401 as "the session ended".
  two_factor_failed: {
    status: 400,
    message: 'The code is wrong, or was already used. Enter the current code of your authenticator app, or a recovery code.',
    dashboardOnly: true,
  },
  sign_in_expired: { status: 401, message: 'This sign-in has expired; enter your email address and password again.', dashboardOnly: true },
  two_factor_enrolment_required: {
    status: 403,
    message: 'This server requires two-factor sign-in: set it up in Account settings, Security, before anything else.',
    dashboardOnly: true,
  },
} as const satisfies Record<string, { status: number; message: string; dashboardOnly?: true }>

export type ErrorCode = keyof typeof ERROR_REGISTRY

/** The codes the API (/api/v1 and the public routes) can answer: the enum of the OpenAPI document. */
export const API_ERROR_CODES = (Object.keys(ERROR_REGISTRY) as ErrorCode[]).filter((code) => !('dashboardOnly' in ERROR_REGISTRY[code]))

export class AppError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_REGISTRY[code].message,
    options?: { cause?: unknown },
  ) {
    const status = ERROR_REGISTRY[code].status
    // A refusal (4xx) is an answer, not a fault: nobody reads its stack, and capturing one cost a
    // tenth of the server's CPU under a flood of 429s. Faults (5xx) keep theirs for the log.
    const stackTraceLimit = Error.stackTraceLimit
    if (status < 500) Error.stackTraceLimit = 0
    super(message, options)
    Error.stackTraceLimit = stackTraceLimit
    this.name = 'AppError'
    this.status = status
  }
}

export class MissingFileError extends AppError {
  constructor(message?: string) {
    super('missing_file', message)
  }
}
export class InvalidParameterError extends AppError {
  constructor(message?: string) {
    super('invalid_parameter', message)
  }
}
export class InvalidRequestError extends AppError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super('invalid_request', message, options)
  }
}
export class UnauthorizedError extends AppError {
  constructor(message?: string) {
    super('unauthorized', message)
  }
}
/** A guest's upload link that is unknown, or whose request expired, was closed or is full: all look alike. */
export class UploadRequestUnavailableError extends UnauthorizedError {
  constructor() {
    super('This upload link is unknown, or its request expired, was closed or is full.')
  }
}
export class PlanNotSupportedError extends AppError {
  constructor(plan: string) {
    super('plan_not_supported', `The ${plan} plan does not include API access; upgrade to pro, business or enterprise.`)
  }
}
export class FileTooLargeError extends AppError {
  constructor(readonly maxBytes: number) {
    super('file_too_large', `The file exceeds the maximum file size of ${maxBytes} bytes.`)
  }
}
export class DailyUploadLimitExceededError extends AppError {
  constructor(readonly limit: number) {
    super('daily_upload_limit_exceeded', `The daily upload limit of ${limit} uploads is reached; it resets at 00:00 UTC.`)
  }
}
export class InsufficientScopeError extends AppError {
  /** The scope to ask for: the first of those that allow the call. */
  readonly requiredScope: string
  constructor(allowing: readonly string[]) {
    const named = allowing.length === 1 ? `the scope ${allowing[0]}` : `one of the scopes ${allowing.join(', ')}`
    super('insufficient_scope', `This API key does not hold ${named}, which this call needs; create a key with it in the dashboard.`)
    this.requiredScope = allowing[0] ?? ''
  }
}

export class WebhookUrlNotAllowedError extends AppError {
  constructor(message?: string) {
    super('webhook_url_not_allowed', message)
  }
}

export class WebhookLimitExceededError extends AppError {
  constructor(limit: number) {
    super('webhook_limit_exceeded', `An account may have at most ${limit} webhook endpoints; delete one first.`)
  }
}

export class IpNotAllowedError extends AppError {
  constructor() {
    super('ip_not_allowed', 'This API key may not be used from this address (its allowed addresses are set when it is created).')
  }
}

export class NotFoundError extends AppError {
  constructor(message?: string) {
    super('not_found', message)
  }
}
export class InvalidPasswordError extends AppError {
  constructor(message?: string) {
    super('invalid_password', message)
  }
}
export class LinkLimitExceededError extends AppError {
  constructor(readonly limit: number) {
    super('link_limit_exceeded', `The file has ${limit} links that are not revoked, as many as a file may have; revoke one first.`)
  }
}
export class StorageQuotaExceededError extends AppError {
  constructor(readonly quota: number) {
    super('storage_quota_exceeded', `The upload would take the account past its storage quota of ${quota} bytes.`)
  }
}
export class UploadRequestFullError extends AppError {
  constructor(message?: string) {
    super('upload_request_full', message)
  }
}
export class ScanPendingError extends AppError {
  constructor(readonly retryAfterSeconds: number) {
    super('scan_pending')
  }
}
export class FileNotScannableError extends AppError {
  constructor(readonly maxBytes: number) {
    super(
      'file_not_scannable',
      `The file is larger than the ${maxBytes} bytes the virus scanner can scan, and this server serves only scanned files; ` +
        "the operator can raise clamd's StreamMaxLength and FILESHARE_SCAN_MAX_BYTES.",
    )
  }
}
export class IdempotencyInProgressError extends AppError {
  constructor() {
    super('idempotency_in_progress')
  }
}
export class IdempotencyKeyReusedError extends AppError {
  constructor() {
    super('idempotency_key_reused')
  }
}
export class DefaultLinkRequiredError extends AppError {
  constructor() {
    super('default_link_required')
  }
}
export class UploadExpiredError extends AppError {
  constructor() {
    super('upload_expired')
  }
}
export class TusVersionNotSupportedError extends AppError {
  constructor() {
    super('tus_version_not_supported')
  }
}
export class UploadOffsetMismatchError extends AppError {
  constructor(
    readonly offset: number,
    readonly given: number,
  ) {
    super('upload_offset_mismatch', `Upload-Offset is ${given} but the upload holds ${offset} bytes; resume at ${offset}.`)
  }
}
export class UploadLengthExceededError extends AppError {
  constructor(readonly length: number) {
    super('upload_length_exceeded', `The bytes go past the Upload-Length of ${length}.`)
  }
}
export class UnsupportedMediaTypeError extends AppError {
  constructor() {
    super('unsupported_media_type')
  }
}
export class UploadLockedError extends AppError {
  constructor() {
    super('upload_locked')
  }
}
export class ChecksumMismatchError extends AppError {
  constructor(readonly algorithm: string) {
    super('checksum_mismatch', `The chunk does not match its Upload-Checksum (${algorithm}); it was not kept.`)
  }
}
export class RangeNotSatisfiableError extends AppError {
  constructor(readonly size: number) {
    super('range_not_satisfiable')
  }
}
export class RateLimitedError extends AppError {
  constructor(
    readonly retryAfterSeconds: number,
    message?: string,
  ) {
    super('rate_limited', message)
  }
}
export class ServiceUnavailableError extends AppError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super('service_unavailable', message, options)
  }
}
export class SignInRequiredError extends AppError {
  constructor() {
    super('sign_in_required')
  }
}
export class SignInFailedError extends AppError {
  constructor() {
    super('sign_in_failed')
  }
}
export class CsrfFailedError extends AppError {
  constructor(message?: string) {
    super('csrf_failed', message)
  }
}
export class InvalidInviteError extends AppError {
  constructor() {
    super('invalid_invite')
  }
}
export class WrongPasswordError extends AppError {
  constructor() {
    super('wrong_password')
  }
}
export class TwoFactorFailedError extends AppError {
  constructor(message?: string) {
    super('two_factor_failed', message)
  }
}
export class SignInExpiredError extends AppError {
  constructor() {
    super('sign_in_expired')
  }
}
export class TwoFactorEnrolmentRequiredError extends AppError {
  constructor() {
    super('two_factor_enrolment_required')
  }
}

export class InsufficientStorageError extends AppError {
  constructor(options?: { cause?: unknown }) {
    super('insufficient_storage', undefined, options)
  }
}

/** Raised by a blob store when a key has no bytes; services turn it into NotFoundError. */
export class BlobNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`No blob stored under ${key}`)
    this.name = 'BlobNotFoundError'
  }
}

/**
 * A backend the service cannot start without does not answer: an operator's matter, told in one
 * line (server.ts) rather than a stack. The message names the variable, never its value.
 */
export class BackendUnreachableError extends Error {
  constructor(backend: string, cause: unknown) {
    super(`${backend} cannot be reached: ${rootMessage(cause)}`, { cause })
    this.name = 'BackendUnreachableError'
  }
}

/** The innermost cause's message: "connect ECONNREFUSED 127.0.0.1:5432" rather than a wrapper's. */
function rootMessage(error: unknown): string {
  let current = error
  while (current instanceof Error && current.cause instanceof Error) current = current.cause
  return current instanceof Error ? current.message : String(current)
}

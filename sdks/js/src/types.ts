// Record types. The `Api*` types mirror the components of the server's OpenAPI document
// (GET /api/v1/openapi.json) field for field; test/openapi-drift.test.ts fails when they drift.

/** Field names of the `File` schema, in the order of the OpenAPI document. */
export const FILE_FIELDS = [
  'file_id',
  'filename',
  'size',
  'upload_date',
  'download_count',
  'public_link',
  'content_type',
  'sha256',
  'expires_at',
  'source',
  'scan',
] as const
/** Field names of the `FileScan` schema (a file record's `scan` when it is not `null`). */
export const FILE_SCAN_FIELDS = ['status', 'signature', 'scanned_at'] as const
/** The statuses of a file's virus scan ({@link FileScanStatus}), in the API's order. */
export const FILE_SCAN_STATUSES = ['pending', 'clean', 'infected', 'error', 'skipped'] as const
/** Field names of the `Link` schema. */
export const LINK_FIELDS = [
  'link_id',
  'file_id',
  'url',
  'default',
  'label',
  'expires_at',
  'max_downloads',
  'download_count',
  'password_protected',
  'status',
  'created_at',
] as const
export const PAGINATION_FIELDS = ['page', 'limit', 'total', 'pages', 'next_before_id'] as const
export const STATS_FIELDS = ['total_files', 'total_size', 'total_downloads', 'uploads_today', 'storage_reserved'] as const
export const LIMITS_FIELDS = ['max_file_size', 'daily_uploads', 'requests_per_minute', 'requests_per_day', 'max_storage'] as const

/** A file as the API returns it (`components.schemas.File`). */
export interface ApiFile {
  /** Unique across the service, never reused. */
  file_id: number
  filename: string
  /** Bytes. */
  size: number
  /** UTC, `YYYY-MM-DD HH:MM:SS`. See {@link FileRecord.uploaded_at} for a `Date`. */
  upload_date: string
  download_count: number
  /** `<public URL>/download/<token>`; works without a key. */
  public_link: string
  content_type: string
  /** Lower-case hex SHA-256 of the content; also the download `ETag`. */
  sha256: string
  /** UTC, `YYYY-MM-DD HH:MM:SS`: from then on the file and its links are gone; `null`: no expiry. See {@link FileRecord.expiry}. */
  expires_at: string | null
  /**
   * How the file came: `{ type: 'api' }` (an API key), `{ type: 'dashboard' }`, or
   * `{ type: 'upload_request', request_id }` (a guest sent it through an upload request).
   */
  source: FileSource
  /**
   * The file's virus scan (ClamAV), or `null` when the server does not scan files (or did not when
   * this file was stored). See {@link FileScan}.
   */
  scan: FileScan | null
}

/**
 * A file's virus scan status:
 * - `pending`: not scanned yet. Where the server serves only scanned files, its links answer 409
 *   `scan_pending` ({@link ScanPendingError}) meanwhile.
 * - `clean`: scanned, nothing found.
 * - `infected`: a signature was found (`signature`). The file's bytes and links are gone, it left
 *   the list, the quota and the stats; only `files.get()` still answers its record, for its owner,
 *   until `files.delete()` removes it.
 * - `error`: the scanner could not scan it (larger than its own limit); a server that serves only
 *   scanned files never serves it (403 `file_not_scannable`, a {@link LimitExceededError}).
 * - `skipped`: too large to scan, served unscanned (servers that scan after serving only).
 */
export type FileScanStatus = (typeof FILE_SCAN_STATUSES)[number]

/** A file's virus scan (`FileScan` in every SDK): a file record's `scan` when the server scans. */
export interface FileScan {
  status: FileScanStatus
  /** The signature the scanner found (`Win.Test.EICAR_HDB-1`); `null` unless `infected`. */
  signature: string | null
  /** UTC, `YYYY-MM-DD HH:MM:SS`: when the verdict came; `null` while `pending`. */
  scanned_at: string | null
}

/**
 * Where a file came from (a file record's `source`): uploaded with an API key, in the dashboard,
 * or by a guest through an upload request (`request_id`: see {@link UploadRequests}).
 */
export type FileSource = { type: 'api' } | { type: 'dashboard' } | { type: 'upload_request'; request_id: number }

/** A link to a file as the API returns it (`components.schemas.Link`). */
export interface ApiLink {
  /** Unique across the service. */
  link_id: number
  file_id: number
  /** `<public URL>/download/<token>`; works without a key (see {@link DownloadOptions.password}). */
  url: string
  /** The file's default link (its `public_link`): it cannot be deleted, only rotated. */
  default: boolean
  label: string | null
  /** UTC, `YYYY-MM-DD HH:MM:SS`, or `null` (no expiry). */
  expires_at: string | null
  /** `null`: unlimited. */
  max_downloads: number | null
  download_count: number
  password_protected: boolean
  /** `active`, `expired`, `exhausted` (`download_count` reached `max_downloads`) or `revoked` (listed for 30 days). */
  status: LinkStatus
  /** UTC, `YYYY-MM-DD HH:MM:SS`. */
  created_at: string
}

export type LinkStatus = 'active' | 'expired' | 'exhausted' | 'revoked'

/** `components.schemas.Pagination`. */
export interface ApiPagination {
  /** The page asked for (from 1); `null` in a `before_id` request, where no page number applies. */
  page: number | null
  limit: number
  /** Number of files the account has now. */
  total: number
  /** `ceil(total / limit)`; 0 when there are no files. */
  pages: number
  /**
   * The `file_id` of this page's last file when more files follow it, else `null`: pass it as
   * `before_id` for the next page, which no upload or deletion meanwhile can shift.
   */
  next_before_id: number | null
}

/** `components.schemas.Stats`: the inner `stats` of {@link StatsResult} (`Stats` in every SDK). */
export interface Stats {
  total_files: number
  total_size: number
  total_downloads: number
  uploads_today: number
  /** Bytes held against `limits.max_storage` by uploads in progress (`total_size` is the bytes stored). */
  storage_reserved: number
}

/** `components.schemas.Limits`: the `limits` of {@link StatsResult} (`Limits` in every SDK). */
export interface Limits {
  max_file_size: number
  daily_uploads: number
  requests_per_minute: number
  requests_per_day: number
  /** Bytes the account may keep (its files and its uploads in progress together); `null`: unlimited. */
  max_storage: number | null
}

/** @deprecated The name before 0.2.0: {@link Stats}. */
export type ApiStats = Stats
/** @deprecated The name before 0.2.0: {@link Limits}. */
export type ApiLimits = Limits

/** The nine scopes a key can hold, in the API's order (a full key holds them all). */
export const SCOPES = [
  'files:read',
  'files:write',
  'files:delete',
  'links:read',
  'links:write',
  'stats:read',
  'webhooks:manage',
  'requests:manage',
  'audit:read',
] as const
/** A scope name: one of {@link SCOPES}, or a scope newer than this SDK. */
export type Scope = (typeof SCOPES)[number] | (string & {})

/** Field names of the key object of `GET /key` (`CurrentKey` without `plan`). */
export const CURRENT_KEY_FIELDS = ['key_id', 'name', 'prefix', 'scopes', 'allowed_ips', 'created_at', 'expires_at', 'last_used_at'] as const
/** Field names of an audit event. */
export const AUDIT_EVENT_FIELDS = ['event_id', 'at', 'action', 'actor', 'ip', 'user_agent', 'target', 'details'] as const

/** The key a call is made with, as `GET /api/v1/key` returns it (its `key` object). */
export interface ApiCurrentKey {
  key_id: number
  name: string
  /** The first characters of the key (`fsk_Ab12Cd`): enough to recognise it, never the key. */
  prefix: string
  /** The scopes the key holds, in the order of {@link SCOPES} (all nine for a full key). */
  scopes: Scope[]
  /** Addresses and CIDR ranges the key may be used from; `[]`: anywhere. */
  allowed_ips: string[]
  /** UTC, `YYYY-MM-DD HH:MM:SS`. */
  created_at: string
  /** UTC, `YYYY-MM-DD HH:MM:SS`, or `null` (no expiry). */
  expires_at: string | null
  /** UTC, `YYYY-MM-DD HH:MM:SS`, or `null` (never used before). */
  last_used_at: string | null
}

/**
 * What `client.key()` answers (`CurrentKey` in every SDK): the key's fields, the account's `plan`,
 * and its dates as `Date`s (`created`, `expiry`, `last_used`; UTC). Fields this SDK does not know
 * yet are kept.
 */
export interface CurrentKey extends Readonly<ApiCurrentKey> {
  /** Lower-case plan name of the key's account: `pro`, `business` or `enterprise`. */
  readonly plan: string
  /** `created_at` as a `Date`. */
  readonly created: Date
  /** `expires_at` as a `Date`, or `null` when the key does not expire. */
  readonly expiry: Date | null
  /** `last_used_at` as a `Date`, or `null`. */
  readonly last_used: Date | null
}

/**
 * Who did what an audit event records: `key` (a call with an API key; `id` is its `key_id`),
 * `session` (the dashboard), `operator` (the `fileshare` CLI), `public` (someone with a link),
 * `guest` (someone who sent a file through an upload request; `id` is its `request_id`) or
 * `system` (the server itself: expiry, the collector, the virus scanner).
 */
export type AuditActorType = 'key' | 'session' | 'operator' | 'public' | 'guest' | 'system'

/**
 * The actions of the audit log (`file.uploaded`, …), or one newer than this SDK. Through the API a
 * key causes `file.uploaded`, `file.updated`, `file.deleted` and the `link.*` ones. `scan.infected`:
 * the virus scanner found a signature in a file and removed it (actor `system`, target the file,
 * details `{ filename, size, signature }`).
 */
export type AuditAction =
  | 'key.created'
  | 'key.revoked'
  | 'key.expired_use'
  | 'session.signed_in'
  | 'session.sign_in_failed'
  | 'session.signed_out'
  | 'session.signed_out_everywhere'
  | 'password.changed'
  | 'file.uploaded'
  | 'file.deleted'
  | 'file.expired'
  | 'file.updated'
  | 'link.created'
  | 'link.updated'
  | 'link.revoked'
  | 'link.rotated'
  | 'link.password_failed'
  | 'link.exhausted'
  | 'webhook.created'
  | 'webhook.updated'
  | 'webhook.deleted'
  | 'webhook.disabled'
  | 'upload_request.created'
  | 'upload_request.updated'
  | 'upload_request.closed'
  | 'upload_request.deleted'
  | 'scan.infected'
  | (string & {})

/** An audit event as `GET /api/v1/audit-events` returns it. */
export interface ApiAuditEvent {
  /** Positive, increasing: a later event has a larger id. */
  event_id: number
  /** UTC, `YYYY-MM-DD HH:MM:SS`. See {@link AuditEvent.occurred_at} for a `Date`. */
  at: string
  action: AuditAction
  /** `id` may be `null` (a public download, the system); `name` may be absent. */
  actor: { type: AuditActorType; id: number | null; name?: string | undefined }
  /** The client's address, cut to its /24 (IPv4) or /48 (IPv6) unless the server keeps it whole; `null` when off or unknown. */
  ip: string | null
  user_agent: string | null
  /** What the event is about (`{ type: 'file', id: 7 }`), or `null`. */
  target: { type: string; id: number | null } | null
  /** A small object (a file's `filename` and `size`, …), may be `{}`; never a secret. */
  details: Record<string, unknown>
}

/** An audit event (`AuditEvent` in every SDK): the API's fields plus `occurred_at`, `at` as a `Date`. */
export interface AuditEvent extends Readonly<ApiAuditEvent> {
  /** `at` as a `Date` (UTC). */
  readonly occurred_at: Date
}

/** Options of {@link AuditEvents.list}. */
export interface AuditEventListOptions {
  /** Events per page, 1 to 100 (default 20). */
  limit?: number | undefined
  /** The events whose `event_id` is lower than this (a page's `pagination.next_before_id`). */
  before_id?: number | undefined
  /** The same as `before_id`. */
  beforeId?: number | undefined
  /** One action (`file.deleted`) or a family (`file.*`). */
  action?: AuditAction | undefined
  /** Events at or after this time: a `Date` (sent in UTC), or a string `YYYY-MM-DD` / `YYYY-MM-DDTHH:MM:SSZ` (UTC) sent as it is. */
  since?: Date | string | undefined
}

/** Options of {@link AuditEvents.iterate}. */
export interface AuditEventIterateOptions {
  /** Events per request, 1 to 100 (default 100). */
  limit?: number | undefined
  action?: AuditAction | undefined
  since?: Date | string | undefined
}

/** The answer of `auditEvents.list()`. */
export interface AuditEventList {
  readonly events: AuditEvent[]
  readonly pagination: Readonly<{
    limit: number
    /** The last event's `event_id` when older events follow, else `null`: pass it as `before_id`. */
    next_before_id: number | null
  }>
}

/** The event types the server sends to webhook endpoints, in the order of the spec. */
export const WEBHOOK_EVENT_TYPES = [
  'file.uploaded',
  'file.deleted',
  'link.created',
  'link.updated',
  'link.revoked',
  'link.exhausted',
  'link.downloaded',
  'upload.expired',
  'webhook.test',
  'upload_request.file_received',
  'upload_request.full',
] as const
/** A webhook event type: one of {@link WEBHOOK_EVENT_TYPES}. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** The `data` of each webhook event type: the API's JSON, as sent. */
export interface WebhookEventData {
  /** A file was stored (multipart, resumable, upload request): the file record. */
  'file.uploaded': ApiFile
  /** A file was deleted by its owner, expired, or was removed by an operator (or found infected). */
  'file.deleted': { file_id: number; filename: string; reason: 'owner' | 'expired' | 'operator' | 'infected' | (string & {}) }
  /** A link was made: the link record. */
  'link.created': ApiLink
  /** A link's policy changed: the link record. */
  'link.updated': ApiLink
  /** A link was revoked: the link record. */
  'link.revoked': ApiLink
  /** A limited link gave its last download: the link record. */
  'link.exhausted': ApiLink
  /** A link with a policy granted a download (never per range); `downloads_left` is `null` when unlimited. */
  'link.downloaded': { link_id: number; file_id: number; downloads_left: number | null }
  /** A resumable upload expired unfinished; `length` is `null` when it was never declared. */
  'upload.expired': { upload_id: string; filename: string; offset: number; length: number | null }
  /** `client.webhooks.test(id)` sent it, to this endpoint only. */
  'webhook.test': { webhook_id: number }
  /** A guest sent a file through an upload request: the request's counts after it, and the file record. */
  'upload_request.file_received': {
    request_id: number
    label: string
    files_received: number
    bytes_received: number
    file: ApiFile
  }
  /** An upload request reached its `max_files` or `max_total_size`: it takes no more files. */
  'upload_request.full': { request_id: number; label: string; files_received: number; bytes_received: number }
}

/**
 * A verified webhook message (`Webhooks.verify`): its `type`, `timestamp` (ISO 8601, UTC, when the
 * event happened) and `data`. Switch on `type` to get the `data` of that type. A type newer than
 * this SDK comes through as it was sent.
 */
export type WebhookEvent = {
  [T in WebhookEventType]: { type: T; timestamp: string; data: WebhookEventData[T] }
}[WebhookEventType]

/** Field names of a webhook endpoint (`webhook` of the webhook calls; `secret` comes on top, once). */
export const WEBHOOK_FIELDS = ['webhook_id', 'url', 'events', 'description', 'enabled', 'disabled_reason', 'created_at'] as const
/** Field names of a delivery of `GET /webhooks/{webhook_id}/deliveries`. */
export const WEBHOOK_DELIVERY_FIELDS = [
  'delivery_id',
  'event_type',
  'message_id',
  'attempts',
  'last_status',
  'last_error',
  'next_attempt_at',
  'state',
  'created_at',
] as const

/** What an endpoint subscribes to: event types, or `'*'` for every type (also later ones). */
export type WebhookEventSelector = WebhookEventType | '*' | (string & {})

/**
 * Why the server disabled an endpoint: `gone` (it answered 410), `failing` (no success for 5 days),
 * `owner` (disabled with `update(id, { enabled: false })`); `null` while it is enabled.
 */
export type WebhookDisabledReason = 'gone' | 'failing' | 'owner'

/** A webhook endpoint as the API returns it (`webhook`). */
export interface ApiWebhook {
  webhook_id: number
  /** Where the messages are POSTed. */
  url: string
  events: WebhookEventSelector[]
  description: string | null
  enabled: boolean
  disabled_reason: WebhookDisabledReason | null
  /** UTC, `YYYY-MM-DD HH:MM:SS`. */
  created_at: string
}

/** A webhook endpoint (`Webhook` in every SDK): the API's fields plus `created`, `created_at` as a `Date`. */
export interface Webhook extends Readonly<ApiWebhook> {
  /** `created_at` as a `Date` (UTC). */
  readonly created: Date
}

/**
 * What `webhooks.create()` and `webhooks.rotateSecret()` answer: the endpoint with its `secret`,
 * which no other call shows again. Keep it where the receiver reads it, for `Webhooks.verify`.
 */
export interface WebhookWithSecret extends Webhook {
  /** `whsec_<base64>`: the key the messages are signed with. */
  readonly secret: string
}

/** `pending` (attempts remain), `succeeded` (a 2xx came back) or `failed` (every attempt failed). */
export type WebhookDeliveryState = 'pending' | 'succeeded' | 'failed'

/** A delivery of one message to one endpoint as the API returns it. */
export interface ApiWebhookDelivery {
  delivery_id: number
  event_type: WebhookEventType | (string & {})
  /** The message's `webhook-id` (the same on every attempt): what receivers deduplicate by. */
  message_id: string
  /** Attempts made so far. */
  attempts: number
  /** The HTTP status of the last attempt; `null` before one, or when no answer came. */
  last_status: number | null
  /** A short reason the last attempt failed (a timeout, a refused connection, …), or `null`. */
  last_error: string | null
  /** UTC, `YYYY-MM-DD HH:MM:SS`: when the next attempt is due; `null` when none is. */
  next_attempt_at: string | null
  state: WebhookDeliveryState
  /** UTC, `YYYY-MM-DD HH:MM:SS`. */
  created_at: string
}

/** A delivery (`WebhookDelivery` in every SDK): the API's fields plus its dates as `Date`s. */
export interface WebhookDelivery extends Readonly<ApiWebhookDelivery> {
  /** `created_at` as a `Date` (UTC). */
  readonly created: Date
  /** `next_attempt_at` as a `Date`, or `null`. */
  readonly next_attempt: Date | null
}

/** The answer of `webhooks.deliveries()`: newest first. */
export interface WebhookDeliveryList {
  readonly deliveries: WebhookDelivery[]
  readonly pagination: Readonly<{
    limit: number
    /** The last delivery's `delivery_id` when older ones follow, else `null`: pass it as `before_id`. */
    next_before_id: number | null
  }>
}

/** The fields of {@link Webhooks.create} (the API's names). */
export interface WebhookCreateParams {
  /** An absolute https URL (at most 2,048 characters, no credentials in it) that reaches a public address. */
  url: string
  /** The event types to send, or `['*']` for all of them. */
  events: WebhookEventSelector[]
  description?: string | null | undefined
}

/** The fields of {@link Webhooks.update}: those given are set, the others kept. */
export interface WebhookUpdateParams {
  url?: string | undefined
  events?: WebhookEventSelector[] | undefined
  description?: string | null | undefined
  /** `false` disables the endpoint (`disabled_reason: 'owner'`); `true` enables it again, whatever disabled it. */
  enabled?: boolean | undefined
}

/** Options of {@link Webhooks.deliveries}. */
export interface WebhookDeliveryListOptions {
  /** Deliveries per page, 1 to 100 (default 20). */
  limit?: number | undefined
  /** The deliveries whose `delivery_id` is lower than this (a page's `pagination.next_before_id`). */
  before_id?: number | undefined
  /** The same as `before_id`. */
  beforeId?: number | undefined
}

/** What `webhooks.test()` answers: the id of the `webhook.test` message on its way (its `webhook-id`). */
export interface WebhookTestResult {
  readonly message_id: string
}

/** Field names of an upload request (`upload_request` of the upload request calls). */
export const UPLOAD_REQUEST_FIELDS = [
  'request_id',
  'url',
  'label',
  'message',
  'expires_at',
  'max_files',
  'max_file_size',
  'max_total_size',
  'file_expires_in',
  'password_protected',
  'files_received',
  'bytes_received',
  'status',
  'created_at',
] as const

/**
 * `active` (it takes files), `expired` (`expires_at` passed), `closed` (its holder closed or
 * deleted it) or `full` (`files_received` reached `max_files`, or `bytes_received` reached
 * `max_total_size`). When several apply: closed, then expired, then full.
 */
export type UploadRequestStatus = 'active' | 'expired' | 'closed' | 'full'

/** An upload request as the API returns it (`upload_request`). */
export interface ApiUploadRequest {
  /** Unique across the service, never reused. */
  request_id: number
  /** `<public URL>/r/<token>`: the page to give the guest (no account, no key needed). */
  url: string
  /** What the guest sees as the request's title (1 to 200 characters, one line). */
  label: string
  /** Plain text shown to the guest (at most 2,000 characters), or `null`. */
  message: string | null
  /** UTC, `YYYY-MM-DD HH:MM:SS`: from then on the request takes no files. */
  expires_at: string
  /** At most this many files; `null`: no limit of its own. */
  max_files: number | null
  /** Bytes per file; `null`: the holder plan's `max_file_size`. */
  max_file_size: number | null
  /** Bytes of all its files together; `null`: no limit of its own. */
  max_total_size: number | null
  /** Seconds each received file lives from its upload; `null`: received files do not expire. */
  file_expires_in: number | null
  /** Guests give a password before they can upload. */
  password_protected: boolean
  files_received: number
  bytes_received: number
  status: UploadRequestStatus
  /** UTC, `YYYY-MM-DD HH:MM:SS`. */
  created_at: string
}

/**
 * An upload request (`UploadRequest` in every SDK): the API's fields plus `created` and `expiry`
 * (its dates as `Date`s) and `files_left` / `bytes_left`.
 */
export interface UploadRequest extends Readonly<ApiUploadRequest> {
  /** `created_at` as a `Date` (UTC). */
  readonly created: Date
  /** `expires_at` as a `Date` (UTC). */
  readonly expiry: Date
  /** `max_files - files_received` (never below 0), or `null` when `max_files` is. */
  readonly files_left: number | null
  /** `max_total_size - bytes_received` (never below 0), or `null` when `max_total_size` is. */
  readonly bytes_left: number | null
}

/**
 * The fields of {@link UploadRequests.create} (the API's names). Give `expires_in` or
 * `expires_at`, exactly one.
 */
export interface UploadRequestCreateParams {
  /** What the guest sees as the title: 1 to 200 characters, one line. */
  label: string
  /** Plain text for the guest: at most 2,000 characters, newlines allowed. */
  message?: string | null | undefined
  /** The request takes files for this many seconds from now (1 to 7,776,000, 90 days, unless the operator allows more). */
  expires_in?: number | undefined
  /** The request takes files until this time (in the future, within the same maximum). */
  expires_at?: DateInput | undefined
  /** At most this many files (1 to 10,000). */
  max_files?: number | undefined
  /** Bytes per file, 1 up to the plan's `max_file_size` (the default). */
  max_file_size?: number | undefined
  /** Bytes of all its files together (at least 1). */
  max_total_size?: number | undefined
  /** 8 to 1024 characters; guests give it before they upload. Stored only as a slow salted hash. */
  password?: string | undefined
  /** Each received file expires this many seconds after its upload (1 to 315360000). */
  file_expires_in?: number | undefined
}

/**
 * The fields of {@link UploadRequests.update}: those given are set, the others kept; `null`
 * removes a limit, the message or the password (`label` and the expiry cannot be `null`).
 * A later expiry opens an expired request again; a closed one stays closed.
 */
export interface UploadRequestUpdateParams {
  label?: string | undefined
  message?: string | null | undefined
  expires_in?: number | undefined
  expires_at?: DateInput | undefined
  max_files?: number | null | undefined
  max_file_size?: number | null | undefined
  max_total_size?: number | null | undefined
  password?: string | null | undefined
  file_expires_in?: number | null | undefined
}

/** Options of {@link UploadRequests.files}. */
export interface UploadRequestFileListOptions {
  /** Files per page, 1 to 100 (default 20). */
  limit?: number | undefined
  /** The files whose `file_id` is lower than this (a page's `pagination.next_before_id`). */
  before_id?: number | undefined
  /** The same as `before_id`. */
  beforeId?: number | undefined
}

/** The answer of `uploadRequests.files()`: the files a request received, newest first. */
export interface UploadRequestFileList {
  readonly files: FileRecord[]
  readonly pagination: Readonly<{
    limit: number
    /** The last file's `file_id` when older ones follow, else `null`: pass it as `before_id`. */
    next_before_id: number | null
  }>
}

/** The error codes of `components.schemas.Error` (`error.code`). */
export const ERROR_CODES = [
  'missing_file',
  'invalid_parameter',
  'invalid_request',
  'unauthorized',
  'plan_not_supported',
  'file_too_large',
  'daily_upload_limit_exceeded',
  'not_found',
  'upload_expired',
  'tus_version_not_supported',
  'upload_offset_mismatch',
  'upload_length_exceeded',
  'unsupported_media_type',
  'upload_locked',
  'checksum_mismatch',
  'range_not_satisfiable',
  'rate_limited',
  'internal_error',
  'service_unavailable',
  'insufficient_storage',
  'link_limit_exceeded',
  'default_link_required',
  'invalid_password',
  'storage_quota_exceeded',
  'idempotency_in_progress',
  'idempotency_key_reused',
  'insufficient_scope',
  'ip_not_allowed',
  'webhook_url_not_allowed',
  'webhook_limit_exceeded',
  'upload_request_full',
  'scan_pending',
  'file_not_scannable',
] as const
export type ErrorCode = (typeof ERROR_CODES)[number]

/** A file record: the API's fields plus `uploaded_at` and `expiry`, its dates as `Date`s (UTC). */
export interface FileRecord extends Readonly<ApiFile> {
  /** `upload_date` as a `Date` (the API's value is UTC). */
  readonly uploaded_at: Date
  /** `expires_at` as a `Date`, or `null` when the file does not expire. */
  readonly expiry: Date | null
}

/**
 * A link (`client.links`): the API's fields plus `created`, `expiry` (its dates as `Date`s) and
 * `downloads_left`. Every file has a default link (its `public_link`) and may have more, each
 * with its own token, expiry, download limit and password.
 */
export interface Link extends Readonly<ApiLink> {
  /** `created_at` as a `Date`. */
  readonly created: Date
  /** `expires_at` as a `Date`, or `null` when the link does not expire. */
  readonly expiry: Date | null
  /** `max_downloads - download_count` (never below 0), or `null` when unlimited. */
  readonly downloads_left: number | null
}

/** A time for the API: a `Date`, or a string `YYYY-MM-DD HH:MM:SS` (UTC). */
export type DateInput = Date | string

/**
 * The policy fields of {@link Links.create} and {@link Links.update} (the API's names). On
 * update, `null` clears a field and a field left out is kept.
 */
export interface LinkOptions {
  /** Up to 100 characters, one line. */
  label?: string | null | undefined
  /** The link expires this many seconds from now (1 to 315360000). Not together with `expires_at`. */
  expires_in?: number | undefined
  /** The link expires at this time (in the future). */
  expires_at?: DateInput | null | undefined
  /** At most this many downloads (1 to 1000000; on update, not below `download_count`). */
  max_downloads?: number | null | undefined
  /** 8 to 1024 characters; stored only as a slow salted hash. */
  password?: string | null | undefined
}

/** The fields of {@link Files.update} (the API's names). */
export interface FileUpdate {
  /** The file expires this many seconds from now (1 to 315360000). Not together with `expires_at`. */
  expires_in?: number | undefined
  /** The file expires at this time; `null` removes the expiry. */
  expires_at?: DateInput | null | undefined
  /** A new name. */
  filename?: string | undefined
}

/** What `files.list()` and `files.iterate()` can order by (`sort`): upload time (the default), name, size, downloads. */
export const FILE_SORTS = ['upload_date', 'filename', 'size', 'download_count'] as const
/** One of {@link FILE_SORTS}. */
export type FileSort = (typeof FILE_SORTS)[number]

/** The direction of a sort (`order`): `desc` (the default, newest, largest, Z first) or `asc`. */
export const SORT_ORDERS = ['asc', 'desc'] as const
/** One of {@link SORT_ORDERS}. */
export type SortOrder = (typeof SORT_ORDERS)[number]

/**
 * What `files.list()` and `files.iterate()` can filter by (`state`): `expiring` (the file has an
 * expiry), `expired_links` (one of its links expired or used up its downloads; revoked ones do not
 * count), `from_upload_request` (a guest brought it through an upload request).
 */
export const FILE_STATES = ['expiring', 'expired_links', 'from_upload_request'] as const
/** One of {@link FILE_STATES}. */
export type FileState = (typeof FILE_STATES)[number]

/** Which files, in which order: the search, filters and sort of `files.list()` and `files.iterate()`. */
export interface FileQuery {
  /** Only the files whose name contains this, ignoring case (a plain substring: `%` and `_` are literal). */
  q?: string | undefined
  /**
   * Only the files of this content type: a top-level type (`image` for `image/png`, `image/jpeg`,
   * ...) or an exact `type/subtype` (`application/pdf`), any case; no wildcards or parameters.
   * Several (at most 20): any of them. Sent as a repeated `type` parameter.
   */
  type?: string | readonly string[] | undefined
  /** Only the files in this state; several (at most 20): any of them. Sent as a repeated `state` parameter. */
  state?: FileState | readonly FileState[] | undefined
  /** Order by `upload_date` (the default), `filename`, `size` or `download_count`; ties by `file_id`. */
  sort?: FileSort | undefined
  /** `desc` (the default) or `asc`. */
  order?: SortOrder | undefined
}

/** Options of {@link Files.list}: `page` or `before_id`, not both, with a search and an order. */
export interface ListOptions extends FileQuery {
  /** The page, from 1 (default 1). Pages shift when files are added or deleted meanwhile. */
  page?: number | undefined
  /** Files per page, 1 to 100 (default 20). */
  limit?: number | undefined
  /**
   * The files after this one in the listing's order (a page's `pagination.next_before_id`): with
   * the default order, the files whose `file_id` is lower. Pages that no upload or deletion can shift.
   */
  before_id?: number | undefined
}

/** Options of {@link Files.iterate}: files per request, with a search and an order kept on every page. */
export interface IterateOptions extends FileQuery {
  /** Files per request, 1 to 100 (default 100). */
  limit?: number | undefined
}

/** The answer of `files.list()`. */
export interface FileList {
  readonly files: FileRecord[]
  readonly pagination: Readonly<ApiPagination>
}

/** The answer of `stats()` (`StatsResult` in every SDK). Fields the SDK does not know yet are kept. */
export interface StatsResult {
  readonly stats: Readonly<Stats> & Readonly<Record<string, unknown>>
  readonly limits: Readonly<Limits> & Readonly<Record<string, unknown>>
  /** Lower-case plan name: `pro`, `business` or `enterprise`. */
  readonly plan: string
  readonly [field: string]: unknown
}

/** `(bytesSent, totalBytes)`; `totalBytes` is `undefined` for a stream of unknown length. */
export type ProgressCallback = (bytesDone: number, totalBytes: number | undefined) => void

/** The option of the calls that create (an upload, {@link Links.create}). */
export interface IdempotencyOptions {
  /**
   * The call's `Idempotency-Key` (1 to 255 printable ASCII characters). Default: a new UUID v4 for
   * each call, sent on every attempt of it, so that a retry after a lost answer gets the first
   * answer back instead of creating again. Pass your own to make a later call (another process,
   * after a crash) the same request: within 24 hours it answers what the first one did.
   */
  idempotencyKey?: string | undefined
}

/** Options of {@link Files.upload}. */
export interface UploadOptions extends IdempotencyOptions, RequestOptions {
  /** The file name to store. Default: the path's or File's name, else `file`. */
  filename?: string | undefined
  /** Sent as the part's type and tus `filetype`; the server derives `content_type` from the name. */
  contentType?: string | undefined
  /** Called as bytes go out: `(bytesSent, totalBytes)`. */
  onProgress?: ProgressCallback | undefined
  /**
   * `true`: always use resumable uploads (tus); `false`: always the one-request multipart upload;
   * unset: resumable when the server offers it and the source has at least `resumableThreshold` bytes.
   */
  resumable?: boolean | undefined
  /** Length of a stream source, when known (paths, bytes and Blobs know theirs). */
  size?: number | undefined
  /** Chunk size of resumable uploads. Default: the client's `chunkSize` (16 MiB). */
  chunkSize?: number | undefined
  /** The file expires this many seconds after the upload (1 to 315360000): sent as `Fileshare-Expires-In`. */
  expires_in?: number | undefined
  /**
   * Resumable uploads: called with the upload's URL as soon as the server created it (before any
   * byte is sent; also when an upload is continued). Keep it (a file, a database row): `uploadUrl`
   * continues the upload from any process.
   */
  onUploadCreated?: ((url: string) => void | Promise<void>) | undefined
  /**
   * Continue this resumable upload (a URL `onUploadCreated` gave) with the same source: a `HEAD`
   * tells where it stands, the bytes the server holds are read from the source and hashed (not sent
   * again), the rest follows. Implies `resumable: true`.
   */
  uploadUrl?: string | undefined
  /**
   * What becomes of a resumable upload that failed or was cancelled. `false`: deleted (its daily
   * upload slot and reserved storage come back). `true`: kept, for `uploadUrl` to continue (the
   * server expires it after 24 hours). Default: kept when it can be continued (you passed
   * `idempotencyKey`, `onUploadCreated` or `uploadUrl`) and the server did not refuse it for good.
   */
  keepOnFailure?: boolean | undefined
}

/** Options of {@link Fileshare.download}. */
export interface DownloadOptions extends RequestOptions {
  /** Called as bytes arrive: `(bytesReceived, totalBytes)`, counting a resumed part. */
  onProgress?: ProgressCallback | undefined
  /** Continue a partial destination file with `Range` + `If-Range` (default true). */
  resume?: boolean | undefined
  /** The link's password, when it has one (sent in the POST body, never in a URL). */
  password?: string | undefined
  /**
   * Called once the link granted the download: `(grantUrl, expiresAt)`. The grant URL serves the
   * file for an hour without counting again; `download(grantUrl, …)` resumes through it.
   */
  onGrant?: ((grantUrl: string, expiresAt: string | undefined) => void) | undefined
}

/** What {@link Files.deleteMany} did: the API's `deleted` and `not_found`, each in the order given. */
export interface BulkDeleteResult {
  /** The ids deleted by this call. */
  readonly deleted: number[]
  /** The ids that name none of your files (never one, another account's, deleted already or expired). */
  readonly not_found: number[]
}

export interface ArchiveDownloadOptions extends RequestOptions {
  /** Called as bytes arrive: `(bytesReceived, archiveBytes)`. */
  onProgress?: ProgressCallback | undefined
}

/** What {@link Files.downloadArchive} did. */
export interface ArchiveDownloadResult {
  /** Bytes of the ZIP written. */
  readonly size: number
  /** The name the server suggests (`files-YYYYMMDD-HHMMSS.zip`, from `Content-Disposition`). */
  readonly filename: string | undefined
}

/** What {@link Fileshare.download} did. */
export interface DownloadResult {
  /** Bytes in the finished file. */
  readonly size: number
  /** Hex SHA-256 of the finished file, equal to the link's `ETag`. */
  readonly sha256: string
  /** Bytes that were already there and were kept (0 when the download started at the beginning). */
  readonly resumedFrom: number
}

/**
 * Options every call takes (as openai-node's and stripe-node's do): they change this call only.
 * `client.withOptions({...})` changes them for every call of a client copy.
 */
export interface RequestOptions {
  /** Cancels the call: the transfer stops at once and the call rejects with the signal's reason (an `AbortError`). */
  signal?: AbortSignal | undefined
  /** Idle timeout of this call in ms (connect, each read or write); never a deadline for a whole transfer. */
  timeoutMs?: number | undefined
  /** Retries of this call (see the client's `maxRetries`). */
  maxRetries?: number | undefined
  /** Extra headers of this call's requests; `null` drops a default header. `Authorization` cannot be changed. */
  headers?: Record<string, string | null | undefined> | undefined
}

import type { Generated, Insertable, Selectable } from 'kysely'

/** Times are UTC epoch milliseconds; sizes are bytes. */
export interface AccountsTable {
  id: Generated<number>
  email: string
  plan: string
  created_at: number
  requests_per_minute: number | null
  requests_per_day: number | null
  max_file_size: number | null
  daily_uploads: number | null
  /** Override of the plan's max_storage: null follows the plan, -1 is unlimited (account-limits.ts). */
  max_storage: number | null
  /** Bytes held by uploads in progress: the sum of the account's storage_reservations. */
  storage_reserved: Generated<number>
  // Kept counters, so that /stats never scans the account's files.
  total_files: Generated<number>
  total_size: Generated<number>
  total_downloads: Generated<number>
  // Successful uploads on `uploads_day` (YYYY-MM-DD, UTC); a new day starts from zero.
  uploads_day: Generated<string>
  uploads_today: Generated<number>
}

export interface ApiKeysTable {
  id: Generated<number>
  account_id: number
  name: string
  prefix: string
  key_hash: string
  created_at: number
  last_used_at: number | null
  revoked_at: number | null
  expires_at: number | null
  /** The key's scopes separated by spaces, or '*' for every scope (services/scopes.ts). */
  scopes: Generated<string>
  /** The addresses and CIDR ranges it may be used from, separated by spaces; null: anywhere. */
  allowed_ips: string | null
  last_used_ip: string | null
}

export interface FilesTable {
  id: Generated<number>
  account_id: number
  token: string
  filename: string
  size: number
  content_type: string
  sha256: string
  storage_key: string
  created_at: number
  /** The sum of its links' download_count. */
  download_count: Generated<number>
  /** When the file is gone for everyone (null: never); the collector removes it later. */
  expires_at: number | null
  /** How it came in: 'api', 'dashboard' or 'upload_request' (then with the request's id). */
  source_type: Generated<FileSourceType>
  upload_request_id: number | null
  /** The virus scan (null: the server did not scan it); `infected` files move to infected_files. */
  scan_status: ScanStatus | null
  scan_signature: string | null
  scanned_at: number | null
  scan_attempts: Generated<number>
  /** When a pending scan is due (again), and until when a scanner holds it. */
  scan_next_at: number | null
  scan_lease_until: number | null
}

export type ScanStatus = 'pending' | 'clean' | 'infected' | 'error' | 'skipped'

/** A file found infected: its row, bytes and links are gone; its owner can still read what it was. */
export interface InfectedFilesTable {
  file_id: number
  account_id: number
  token: string
  filename: string
  size: number
  content_type: string
  sha256: string
  created_at: number
  download_count: number
  expires_at: number | null
  source_type: FileSourceType
  upload_request_id: number | null
  scan_signature: string
  scanned_at: number
}

export type FileSourceType = 'api' | 'dashboard' | 'upload_request'

/**
 * A link to a file (../shared/spec/links.md). The default link is the contract's public_link; its
 * token is also kept in files.token (migrations/007-links.ts says why).
 */
export interface LinksTable {
  id: Generated<number>
  file_id: number
  account_id: number
  /** The secret of the link's URL; a rotation replaces it. */
  token: string
  /** 1 for the file's default link (exactly one per file), else 0. */
  is_default: number
  label: string | null
  expires_at: number | null
  max_downloads: number | null
  download_count: Generated<number>
  /** `scrypt$...` (lib/passwords.ts), or null when the link needs no password. */
  password_hash: string | null
  created_at: number
  /** Set when its owner deleted it: dead at once, shown to the owner for 30 days, then removed. */
  revoked_at: number | null
}

/** A one-hour permission to download through a link, counted once when it was given. */
export interface DownloadGrantsTable {
  /** SHA-256 (hex) of the grant's token; the token itself is only in the grant URL. */
  token_hash: string
  link_id: number
  created_at: number
  expires_at: number
}

/** The dashboard password of an account holder, apart from `accounts` so that it never travels with an account row. */
export interface AccountPasswordsTable {
  account_id: number
  /** `scrypt$N$r$p$salt$hash` (lib/passwords.ts). */
  password_hash: string
  updated_at: number
}

/** A signed-in dashboard session. Only the SHA-256 of the session id (the cookie's value) is stored. */
export interface SessionsTable {
  id: Generated<number>
  account_id: number
  token_hash: string
  created_at: number
  /** The 12-hour lifetime's end. */
  expires_at: number
  /** The last request made with it (at most a minute behind): the idle timeout counts from here. */
  last_seen_at: number
  /** The browser's User-Agent at sign-in, cut to 200 characters (migration 014); null before it. */
  user_agent: string | null
  /** The client address at sign-in as FILESHARE_AUDIT_IP keeps it (full, truncated, none). */
  ip: string | null
}

/** A holder's TOTP second factor (services/two-factor.ts); `enabled_at` null while enrolment waits for a code. */
export interface AccountTwoFactorTable {
  account_id: number
  /** As services/two-factor-secret.ts stores it: `aes256gcm:...` under the operator's key, or `plain:...`. */
  secret: string
  created_at: number
  enabled_at: number | null
  /** The time step of the last code accepted: a code of that step or an earlier one is refused (replay). */
  last_step: Generated<number>
}

/** One-time recovery codes of a second factor: only their SHA-256. */
export interface AccountRecoveryCodesTable {
  id: Generated<number>
  account_id: number
  code_hash: string
  used_at: number | null
}

/** A sign-in whose password was right, waiting for its second factor. Only the SHA-256 of its token is stored. */
export interface SignInChallengesTable {
  id: Generated<number>
  account_id: number
  token_hash: string
  created_at: number
  expires_at: number
  failures: Generated<number>
}

/** An email change a holder asked for, waiting for the operator's confirmation (`fileshare account confirm-email`). */
export interface EmailChangesTable {
  id: Generated<number>
  account_id: number
  new_email: string
  requested_at: number
}

/** A one-time link to set a dashboard password. Only the SHA-256 of its token is stored. */
export interface AccountInvitesTable {
  id: Generated<number>
  account_id: number
  token_hash: string
  created_at: number
  expires_at: number
  used_at: number | null
}

export type UploadStatus = 'open' | 'complete' | 'terminated' | 'expired'

/** A resumable (tus) upload; see migrations/004-uploads.ts and services/resumable-uploads.ts. */
export interface UploadsTable {
  /** 128 random bits, base64url: the upload's URL is its only name. */
  id: string
  account_id: number
  /** Upload-Length; null while deferred. */
  length: number | null
  /** Bytes durably received (tus's Upload-Offset). */
  upload_offset: Generated<number>
  /** The most bytes the upload may hold: its length, or the account's max_file_size while deferred. */
  max_length: number
  /** Upload-Metadata as the client sent it, echoed on HEAD. */
  metadata: string
  filename: string
  /** The blob's key once completed; also what gc must not touch while the upload is open. */
  storage_key: string
  /** The blob store's opaque state of the resumable write (storage/resumable.ts). */
  store_state: string
  /** The next S3 part number to hand out (fenced: never the same twice). */
  next_part_number: Generated<number>
  /** Empty: the SHA-256 is kept in the writer's memory (services/upload-hashes.ts). Rows of the previous version hold a saved hash-wasm state, no longer read. */
  hash_state: string
  /** The UTC day whose upload slot the upload took at creation. */
  slot_day: string
  status: UploadStatus
  file_id: number | null
  /** Requests on this upload that the rate limits do not count (see docs/api.md, resumable uploads). */
  free_requests: number
  created_at: number
  expires_at: number
  /** The lease of the request writing to the upload: only the holder of the token may commit. */
  lease_token: string | null
  lease_expires_at: number | null
  /** 1 when another request asked the holder to stop and hand the upload over. */
  release_requested: Generated<number>
  /** Fileshare-Expires-In of the creation (seconds): the file expires that long after completion. */
  file_expires_in: number | null
  /** A guest's upload: the request it was made through, whose room it holds until it ends. */
  upload_request_id: Generated<number | null>
}

/** Bytes an upload in progress holds against its account's storage quota (migrations/008). */
export interface StorageReservationsTable {
  /** A multipart upload's random id, or the resumable upload's id. */
  id: string
  account_id: number
  bytes: number
  /** Past this, nobody holds it any more (a crashed instance): the collector gives the bytes back. */
  expires_at: number
}

export type IdempotencyState = 'running' | 'done'

/** A request sent with an Idempotency-Key, and its stored answer (api-semantics.md). */
export interface IdempotencyKeysTable {
  account_id: number
  key: string
  /** What the server knew of the request before its body (method, path, declared sizes, JSON body). */
  fingerprint: string
  state: IdempotencyState
  /** While running: the instance's lease, renewed while the request runs (a crash lets it lapse). */
  locked_until: number
  status: number | null
  /** JSON object of the replayed headers. */
  headers: string | null
  body: string | null
  created_at: number
  /** 24 hours after the first request. */
  expires_at: number
}

/** One change of an account, recorded in the change's own transaction (services/audit.ts). */
export interface AuditEventsTable {
  id: Generated<number>
  account_id: number
  at: number
  action: string
  actor_type: string
  actor_id: number | null
  actor_name: string | null
  ip: string | null
  user_agent: string | null
  target_type: string | null
  target_id: number | null
  /** A small JSON object. */
  details: string
}

export interface WebhooksTable {
  id: Generated<number>
  account_id: number
  url: string
  /** '*' for every event type, else the types separated by spaces. */
  events: string
  description: string | null
  enabled: Generated<number>
  disabled_reason: string | null
  secret: string
  previous_secret: string | null
  previous_secret_until: number | null
  failing_since: number | null
  created_at: number
}

/** The outbox: one row per message, written in the transaction of its change. */
export interface WebhookMessagesTable {
  id: Generated<number>
  account_id: number
  message_id: string
  event_type: string
  body: string
  created_at: number
}

export interface WebhookDeliveriesTable {
  id: Generated<number>
  webhook_id: number
  message_id: number
  state: 'pending' | 'succeeded' | 'failed'
  attempts: Generated<number>
  next_attempt_at: number | null
  locked_until: number | null
  last_status: number | null
  last_error: string | null
  created_at: number
}

export interface WebhookAttemptsTable {
  id: Generated<number>
  delivery_id: number
  at: number
  status: number | null
  duration_ms: number
  error: string | null
}

export interface Database {
  accounts: AccountsTable
  api_keys: ApiKeysTable
  files: FilesTable
  account_passwords: AccountPasswordsTable
  sessions: SessionsTable
  account_invites: AccountInvitesTable
  account_two_factor: AccountTwoFactorTable
  account_recovery_codes: AccountRecoveryCodesTable
  sign_in_challenges: SignInChallengesTable
  email_changes: EmailChangesTable
  uploads: UploadsTable
  links: LinksTable
  download_grants: DownloadGrantsTable
  storage_reservations: StorageReservationsTable
  idempotency_keys: IdempotencyKeysTable
  audit_events: AuditEventsTable
  webhooks: WebhooksTable
  webhook_messages: WebhookMessagesTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
  upload_requests: UploadRequestsTable
  infected_files: InfectedFilesTable
}

/** An upload request (../shared/spec/upload-requests.md, migrations/011). */
export interface UploadRequestsTable {
  id: Generated<number>
  account_id: number
  token: string
  label: string
  message: string | null
  expires_at: number
  max_files: number | null
  max_file_size: number | null
  max_total_size: number | null
  password_hash: string | null
  file_expires_in: number | null
  files_received: Generated<number>
  bytes_received: Generated<number>
  /** Guests' uploads in progress: one file and their declared length each. */
  files_reserved: Generated<number>
  bytes_reserved: Generated<number>
  closed_at: number | null
  created_at: number
}

export type AccountRow = Selectable<AccountsTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
export type AuditEventRow = Selectable<AuditEventsTable>
export type WebhookRow = Selectable<WebhooksTable>
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>
export type NewAuditEventRow = Insertable<AuditEventsTable>
export type FileRow = Selectable<FilesTable>
export type NewFileRow = Insertable<FilesTable>
/** A file as a list page reads it: the columns it is shown with, not its owner or storage key. */
export type ListedFile = Omit<FileRow, 'account_id' | 'storage_key' | 'scan_attempts' | 'scan_next_at' | 'scan_lease_until'>
export type LinkRow = Selectable<LinksTable>
export type NewLinkRow = Insertable<LinksTable>
export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>
export type SessionRow = Selectable<SessionsTable>
export type AccountInviteRow = Selectable<AccountInvitesTable>
export type AccountTwoFactorRow = Selectable<AccountTwoFactorTable>
export type EmailChangeRow = Selectable<EmailChangesTable>
export type UploadRow = Selectable<UploadsTable>
export type UploadRequestRow = Selectable<UploadRequestsTable>
export type InfectedFileRow = Selectable<InfectedFilesTable>
export type NewUploadRow = Insertable<UploadsTable>

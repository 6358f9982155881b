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
  download_count: Generated<number>
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
  expires_at: number
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

export interface Database {
  accounts: AccountsTable
  api_keys: ApiKeysTable
  files: FilesTable
  account_passwords: AccountPasswordsTable
  sessions: SessionsTable
  account_invites: AccountInvitesTable
}

export type AccountRow = Selectable<AccountsTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
export type FileRow = Selectable<FilesTable>
export type NewFileRow = Insertable<FilesTable>
export type SessionRow = Selectable<SessionsTable>
export type AccountInviteRow = Selectable<AccountInvitesTable>

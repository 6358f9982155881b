import { allowedIpList, grantedScopes } from '../services/key-policy.js'
import type { AccountRow } from '../db/schema.js'
import { UNLIMITED_STORAGE } from '../services/account-limits.js'
import type { ApiKey } from '../services/api-keys.js'

/** `--json` output of the account commands: ids and epoch milliseconds, as operators' scripts read them. */
export function presentAccount(account: AccountRow) {
  return {
    account_id: account.id,
    email: account.email,
    plan: account.plan,
    created_at: account.created_at,
    overrides: {
      requests_per_minute: account.requests_per_minute,
      requests_per_day: account.requests_per_day,
      max_file_size: account.max_file_size,
      daily_uploads: account.daily_uploads,
      max_storage: account.max_storage === UNLIMITED_STORAGE ? 'unlimited' : account.max_storage,
    },
  }
}

/** `--json` output of the key commands: never the hash. */
export function presentKey(key: ApiKey) {
  const { id, account_id, name, prefix, created_at, last_used_at, last_used_ip, revoked_at, expires_at } = key
  return {
    key_id: id,
    account_id,
    name,
    prefix,
    scopes: grantedScopes(key.scopes),
    allowed_ips: allowedIpList(key.allowed_ips),
    created_at,
    last_used_at,
    last_used_ip,
    revoked_at,
    expires_at,
  }
}

/**
 * `--json` output of `account email-changes`: epoch milliseconds, as the other commands give times;
 * `taken_by`: the id of another account that has the new address (confirming then declines it).
 */
export function presentEmailChange(change: {
  accountId: number
  email: string
  newEmail: string
  requestedAt: number
  takenBy: number | null
}) {
  return {
    account_id: change.accountId,
    email: change.email,
    new_email: change.newEmail,
    requested_at: change.requestedAt,
    taken_by: change.takenBy,
  }
}

/**
 * Control characters (C0, DEL, C1), line and paragraph separators and the bidi controls, as
 * lib/filename.ts names them: what a terminal acts on (ESC starts a sequence that can rewrite the
 * line or set the clipboard) or shows out of order (U+202E reverses what follows).
 */
const UNPRINTABLE = /[\p{Cc}\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu

/**
 * Text from a holder (an email address) as the CLI shows it: each unprintable character as a
 * `\uXXXX` escape, so that the operator sees it instead of the terminal acting on it. Addresses
 * are refused with such characters now (services/email-changes.ts); rows stored before that still
 * reach this output. Also for `--json` text: JSON.stringify escapes C0 controls but leaves DEL, C1
 * and U+202E raw, and inside a JSON string `\uXXXX` is the same character to the script reading it.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (char) => `\\u${char.codePointAt(0)!.toString(16).padStart(4, '0')}`)
}

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

/** `--json` output of `account email-changes`: epoch milliseconds, as the other commands give times. */
export function presentEmailChange(change: { accountId: number; email: string; newEmail: string; requestedAt: number }) {
  return { account_id: change.accountId, email: change.email, new_email: change.newEmail, requested_at: change.requestedAt }
}

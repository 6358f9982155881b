import { allowedIpList, grantedScopes } from '../services/key-policy.js'
import type { ApiKey } from '../services/api-keys.js'
import type { SignedIn } from '../services/sessions.js'

const iso = (epochMs: number | null) => (epochMs === null ? null : new Date(epochMs).toISOString())

/** A key in the dashboard's JSON: never its hash; dates as ISO 8601. */
export function presentDashboardKey(key: ApiKey) {
  return {
    key_id: key.id,
    name: key.name,
    prefix: key.prefix,
    created_at: iso(key.created_at),
    last_used_at: iso(key.last_used_at),
    revoked_at: iso(key.revoked_at),
    expires_at: iso(key.expires_at),
    scopes: grantedScopes(key.scopes),
    allowed_ips: allowedIpList(key.allowed_ips),
    last_used_ip: key.last_used_ip,
  }
}

/** The signed-in holder as the dashboard's pages read it (GET /session, and after sign-in). */
export function presentSession(
  { account, limits, expiresAt }: SignedIn,
  extra: { csrfToken: string; apiBaseUrl: string; apiPlans: readonly object[]; scanMode: 'off' | 'async' | 'required' },
) {
  return {
    success: true as const,
    account: { account_id: account.id, email: account.email, plan: account.plan, api_access: limits.apiAccess },
    csrf_token: extra.csrfToken,
    expires_at: iso(expiresAt),
    api_base_url: extra.apiBaseUrl,
    api_plans: extra.apiPlans,
    // Whether a file's links wait for its virus scan (required), or not (async), or there is none (off).
    scan_mode: extra.scanMode,
  }
}

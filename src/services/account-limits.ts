import { PLAN_NAMES, type Config, type PlanLimits, type PlanName } from '../config.js'
import type { AccountRow } from '../db/schema.js'

export interface AccountLimits {
  apiAccess: boolean
  requestsPerMinute: number
  requestsPerDay: number
  maxFileSize: number
  dailyUploads: number
  /** Bytes the account may keep (files and uploads in progress); null: unlimited. */
  maxStorage: number | null
}

/** accounts.max_storage: null follows the plan; this value means "unlimited" whatever the plan says. */
export const UNLIMITED_STORAGE = -1

/** The plan table's figures for the account's plan, with the account's own overrides on top. */
export function effectiveLimits(account: AccountRow, plans: Config['plans']): AccountLimits {
  const plan: PlanLimits = plans[account.plan as PlanName] ?? plans.free
  return {
    apiAccess: plan.api_access,
    requestsPerMinute: account.requests_per_minute ?? plan.requests_per_minute,
    requestsPerDay: account.requests_per_day ?? plan.requests_per_day,
    maxFileSize: account.max_file_size ?? plan.max_file_size,
    dailyUploads: account.daily_uploads ?? plan.daily_uploads,
    maxStorage: account.max_storage === null ? plan.max_storage : account.max_storage === UNLIMITED_STORAGE ? null : account.max_storage,
  }
}

/** The plans that include the API, with their figures, in the plan table's order (for upgrade hints). */
export function plansWithApiAccess(plans: Config['plans']): Array<{ name: PlanName } & PlanLimits> {
  return PLAN_NAMES.filter((name) => plans[name].api_access).map((name) => ({ name, ...plans[name] }))
}

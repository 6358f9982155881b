import type { Config, PlanLimits, PlanName } from '../config.js'
import type { AccountRow } from '../db/schema.js'

export interface AccountLimits {
  apiAccess: boolean
  requestsPerMinute: number
  requestsPerDay: number
  maxFileSize: number
  dailyUploads: number
}

/** The plan table's figures for the account's plan, with the account's own overrides on top. */
export function effectiveLimits(account: AccountRow, plans: Config['plans']): AccountLimits {
  const plan: PlanLimits = plans[account.plan as PlanName] ?? plans.free
  return {
    apiAccess: plan.api_access,
    requestsPerMinute: account.requests_per_minute ?? plan.requests_per_minute,
    requestsPerDay: account.requests_per_day ?? plan.requests_per_day,
    maxFileSize: account.max_file_size ?? plan.max_file_size,
    dailyUploads: account.daily_uploads ?? plan.daily_uploads,
  }
}

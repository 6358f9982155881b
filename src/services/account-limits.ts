import { PLAN_NAMES, type Config, type PlanLimits, type PlanName } from '../config.js'
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

/** The plans that include the API, with their figures, in the plan table's order (for upgrade hints). */
export function plansWithApiAccess(plans: Config['plans']): Array<{ name: PlanName } & PlanLimits> {
  return PLAN_NAMES.filter((name) => plans[name].api_access).map((name) => ({ name, ...plans[name] }))
}

import { PLAN_NAMES, type Config, type PlanName } from '../config.js'
import { InvalidParameterError, NotFoundError } from '../errors.js'
import type { AccountsRepository, LimitOverrides } from '../db/repositories/accounts-repository.js'
import type { AccountRow } from '../db/schema.js'
import { utcDay } from '../limits/utc-day.js'
import { effectiveLimits } from './account-limits.js'
import type { ApiKeyService } from './api-keys.js'

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/

export interface AccountSummary {
  account_id: number
  email: string
  plan: string
  created_at: number
  overrides: LimitOverrides
}

export function parsePlan(plan: string): PlanName {
  const name = plan.toLowerCase()
  if (!(PLAN_NAMES as readonly string[]).includes(name)) {
    throw new InvalidParameterError(`Unknown plan "${plan}"; expected one of ${PLAN_NAMES.join(', ')}.`)
  }
  return name as PlanName
}

function summarize(row: AccountRow): AccountSummary {
  return {
    account_id: row.id,
    email: row.email,
    plan: row.plan,
    created_at: row.created_at,
    overrides: {
      requests_per_minute: row.requests_per_minute,
      requests_per_day: row.requests_per_day,
      max_file_size: row.max_file_size,
      daily_uploads: row.daily_uploads,
    },
  }
}

export class AccountService {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly keys: ApiKeyService,
    private readonly config: Pick<Config, 'plans'>,
  ) {}

  /** Creates an account with its first API key; the key is shown only in this result. */
  async create(email: string, plan: string) {
    if (!EMAIL_PATTERN.test(email)) throw new InvalidParameterError(`"${email}" is not an email address.`)
    const planName = parsePlan(plan)
    if (await this.accounts.findByEmail(email)) throw new InvalidParameterError(`An account with email ${email} already exists.`)
    const row = await this.accounts.create(email, planName, Date.now())
    const { key, apiKey } = await this.keys.create(row.id)
    return { account: summarize(row), keyId: key.key_id, apiKey }
  }

  async list(): Promise<AccountSummary[]> {
    return (await this.accounts.list()).map(summarize)
  }

  async setPlan(id: number, plan: string): Promise<AccountSummary> {
    return summarize(this.found(id, await this.accounts.update(id, { plan: parsePlan(plan) })))
  }

  /** Sets per-account overrides of the plan table; null clears one. */
  async setLimits(id: number, overrides: LimitOverrides): Promise<AccountSummary> {
    for (const [name, value] of Object.entries(overrides)) {
      // As in the plan table: a request rate of 0 would lock the account out with a 429 forever.
      const minimum = name === 'requests_per_minute' || name === 'requests_per_day' ? 1 : 0
      if (value !== null && value !== undefined && !(Number.isSafeInteger(value) && value >= minimum)) {
        throw new InvalidParameterError(`${name} must be an integer of at least ${minimum}.`)
      }
    }
    if (Object.keys(overrides).length === 0) return summarize(this.found(id, await this.accounts.findById(id)))
    return summarize(this.found(id, await this.accounts.update(id, overrides)))
  }

  /** Exact figures from the account's kept counters: no scan of its files. */
  async stats(id: number, now = Date.now()) {
    const row = this.found(id, await this.accounts.findById(id))
    const limits = effectiveLimits(row, this.config.plans)
    return {
      plan: row.plan,
      stats: {
        total_files: row.total_files,
        total_size: row.total_size,
        total_downloads: row.total_downloads,
        uploads_today: row.uploads_day === utcDay(now) ? row.uploads_today : 0,
      },
      limits: {
        max_file_size: limits.maxFileSize,
        daily_uploads: limits.dailyUploads,
        requests_per_minute: limits.requestsPerMinute,
        requests_per_day: limits.requestsPerDay,
      },
    }
  }

  private found(id: number, row: AccountRow | undefined): AccountRow {
    if (!row) throw new NotFoundError(`No account with id ${id}.`)
    return row
  }
}

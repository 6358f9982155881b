import { PLAN_NAMES, type Config, type PlanName } from '../config.js'
import { InvalidParameterError, NotFoundError } from '../errors.js'
import type { AccountsRepository, LimitOverrides } from '../db/repositories/accounts-repository.js'
import type { AccountRow } from '../db/schema.js'
import { utcDay } from '../lib/utc-day.js'
import type { RequestLimiter } from '../limits/request-limiter.js'
import { effectiveLimits, UNLIMITED_STORAGE, type AccountLimits } from './account-limits.js'
import type { ApiKeyService } from './api-keys.js'
import { refuseUnsafeEmail } from './email-changes.js'

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/

/** An account's figures, read from its kept counters, and its effective limits. */
export interface AccountStats {
  plan: string
  totalFiles: number
  totalSize: number
  totalDownloads: number
  uploadsToday: number
  /** Bytes held by uploads in progress against the storage quota. */
  storageReserved: number
  limits: AccountLimits
}

export function parsePlan(plan: string): PlanName {
  const name = plan.toLowerCase()
  if (!(PLAN_NAMES as readonly string[]).includes(name)) {
    throw new InvalidParameterError(`Unknown plan "${plan}"; expected one of ${PLAN_NAMES.join(', ')}.`)
  }
  return name as PlanName
}

export class AccountService {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly keys: ApiKeyService,
    private readonly config: Pick<Config, 'plans'>,
    private readonly requests: RequestLimiter,
    private readonly now: () => number = Date.now,
  ) {}

  /** Creates an account with its first API key; the key is shown only in this result. */
  async create(email: string, plan: string) {
    // First: the message below repeats the address, which must not carry an escape to the terminal.
    refuseUnsafeEmail(email)
    if (!EMAIL_PATTERN.test(email)) throw new InvalidParameterError(`"${email}" is not an email address.`)
    const planName = parsePlan(plan)
    // In any letter case (ASCII, as findByEmail compares): the existing address is the one named.
    const existing = await this.accounts.findByEmail(email)
    if (existing) throw new InvalidParameterError(`An account with email ${existing.email} already exists.`)
    const row = await this.accounts.create(email, planName, this.now())
    const { key, apiKey } = await this.keys.create(row.id)
    return { account: row, keyId: key.id, apiKey }
  }

  async list(): Promise<AccountRow[]> {
    return this.accounts.list()
  }

  async setPlan(id: number, plan: string): Promise<AccountRow> {
    return this.found(id, await this.accounts.update(id, { plan: parsePlan(plan) }))
  }

  /** Sets per-account overrides of the plan table; null clears one. */
  async setLimits(id: number, overrides: LimitOverrides): Promise<AccountRow> {
    for (const [name, value] of Object.entries(overrides)) {
      // As in the plan table: a request rate of 0 would lock the account out with a 429 forever.
      const minimum = name === 'requests_per_minute' || name === 'requests_per_day' ? 1 : 0
      // max_storage takes UNLIMITED_STORAGE too: unlimited, whatever the plan says.
      const unlimited = name === 'max_storage' && value === UNLIMITED_STORAGE
      if (value !== null && value !== undefined && !unlimited && !(Number.isSafeInteger(value) && value >= minimum)) {
        throw new InvalidParameterError(`${name} must be an integer of at least ${minimum}.`)
      }
    }
    if (Object.keys(overrides).length === 0) return this.found(id, await this.accounts.findById(id))
    return this.found(id, await this.accounts.update(id, overrides))
  }

  /**
   * Exact figures from the account's kept counters, less what files past their expiry still hold
   * there until the collector removes them: no scan of the account's files.
   */
  async stats(id: number, now = this.now()): Promise<AccountStats> {
    const { account: row, expired } = this.found(id, await this.accounts.findWithExpiredTotals(id, now))
    return {
      plan: row.plan,
      totalFiles: row.total_files - expired.files,
      totalSize: row.total_size - expired.size,
      totalDownloads: row.total_downloads - expired.downloads,
      // A later day than this instance's clock is the account's current day (slots never go back).
      uploadsToday: row.uploads_day >= utcDay(now) ? row.uploads_today : 0,
      storageReserved: row.storage_reserved,
      limits: effectiveLimits(row, this.config.plans),
    }
  }

  /** The stats plus the API requests made today (UTC), as counted by the request limiter. */
  async usage(id: number): Promise<AccountStats & { requestsToday: number }> {
    const [stats, requestsToday] = await Promise.all([this.stats(id), this.requests.dayUsage(String(id))])
    return { ...stats, requestsToday }
  }

  private found<Row>(id: number, row: Row | undefined): Row {
    if (!row) throw new NotFoundError(`No account with id ${id}.`)
    return row
  }
}

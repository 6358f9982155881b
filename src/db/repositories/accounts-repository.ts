import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely'
import type { AccountRow, Database } from '../schema.js'
import { InvalidParameterError } from '../../errors.js'
import { isUniqueViolation } from '../translate-errors.js'
import { compiledOnce } from './compiled-query.js'
import { foldEmailCase } from '../../lib/email-case.js'

export type LimitOverrides = Partial<
  Pick<AccountRow, 'requests_per_minute' | 'requests_per_day' | 'max_file_size' | 'daily_uploads' | 'max_storage'>
>

/**
 * Whether the account has an upload slot left on `day`: the one rule that taking a slot and asking
 * for one share. A day after the account's current one starts from zero.
 */
function slotLeft(eb: ExpressionBuilder<Database, 'accounts'>, day: string, limit: number) {
  return eb.and([sql<boolean>`${limit} > 0`, eb.or([eb('uploads_day', '<', day), eb('uploads_today', '<', limit)])])
}

/**
 * Takes one of the day's upload slots in a single conditional UPDATE, so that concurrent uploads
 * (from any number of server processes) never pass the limit; in the caller's transaction when
 * given one. Returns the day the slot counts on, undefined when none is left. A day never goes
 * back: a request dated before the account's current day (an instance whose clock is behind, or
 * one that read the clock just before midnight) counts on the current day instead of restarting
 * the count on its own.
 */
export async function takeUploadSlotIn(
  db: Kysely<Database> | Transaction<Database>,
  id: number,
  day: string,
  limit: number,
): Promise<string | undefined> {
  const row = await db
    .updateTable('accounts')
    .set({
      uploads_today: sql`case when uploads_day < ${day} then 1 else uploads_today + 1 end`,
      uploads_day: sql`case when uploads_day < ${day} then ${day} else uploads_day end`,
    })
    .where('id', '=', id)
    .where((eb) => slotLeft(eb, day, limit))
    .returning('uploads_day')
    .executeTakeFirst()
  return row?.uploads_day
}

/** Gives back a slot taken on `day`, in the caller's transaction when given one; a slot of a past day is left alone. */
export async function releaseUploadSlotIn(db: Kysely<Database> | Transaction<Database>, id: number, day: string): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ uploads_today: sql`uploads_today - 1` })
    .where('id', '=', id)
    .where('uploads_day', '=', day)
    .where('uploads_today', '>', 0)
    .execute()
}

/** What the account's kept counters still hold of its files expired but not yet collected. */
export interface ExpiredTotals {
  files: number
  size: number
  downloads: number
}

export class AccountsRepository {
  private readonly findByIdQuery
  private readonly withExpiredTotalsQuery

  constructor(private readonly db: Kysely<Database>) {
    this.findByIdQuery = compiledOnce(db, 1, (id: number) => db.selectFrom('accounts').selectAll().where('id', '=', id))
    // Three correlated subqueries, each finding the account's expiring files through the partial index
    // files_account_expiry (account_id, expires_at; only rows with an expiry). It does not cover them: the
    // count needs only the index, the sums read size and download_count from each such file's row, which
    // costs little while few files carry an expiry. On SQLite about half the time of the row and an
    // aggregate read apart (a join on the aggregate ran it as a co-routine, 5x slower).
    // `now` goes in once per subquery: compiledOnce places each argument once.
    this.withExpiredTotalsQuery = compiledOnce(db, 4, (id: number, filesAt: number, sizeAt: number, downloadsAt: number) =>
      db
        .selectFrom('accounts')
        .selectAll('accounts')
        .select((eb) => {
          const expired = (now: number) =>
            eb.selectFrom('files').whereRef('files.account_id', '=', 'accounts.id').where('files.expires_at', '<=', now)
          return [
            expired(filesAt)
              .select((files) => files.fn.countAll<number | string>().as('count'))
              .as('expired_files'),
            expired(sizeAt)
              .select((files) => files.fn.coalesce(files.fn.sum<number | string>('files.size'), sql<number>`0`).as('sum'))
              .as('expired_size'),
            expired(downloadsAt)
              .select((files) => files.fn.coalesce(files.fn.sum<number | string>('files.download_count'), sql<number>`0`).as('sum'))
              .as('expired_downloads'),
          ]
        })
        .where('accounts.id', '=', id),
    )
  }

  /**
   * Inserts the account. An email taken meanwhile, in any letter case (two creations at once, past
   * the service's own check), is the same refusal as the check's, not the driver's message.
   */
  async create(email: string, plan: string, now: number): Promise<AccountRow> {
    try {
      return await this.db.insertInto('accounts').values({ email, plan, created_at: now }).returningAll().executeTakeFirstOrThrow()
    } catch (error) {
      if (isUniqueViolation(error)) throw new InvalidParameterError(`An account with email ${email} (in some letter case) already exists.`)
      throw error
    }
  }

  async findById(id: number): Promise<AccountRow | undefined> {
    return (await this.findByIdQuery(id))[0]
  }

  /**
   * The account with what its kept counters still hold of files expired at `now` that the
   * collector has not removed yet (the figures subtract it, so that a file leaves them at its expiry
   * exactly), in one query: GET /stats and the listings read both on every call.
   */
  async findWithExpiredTotals(id: number, now: number): Promise<{ account: AccountRow; expired: ExpiredTotals } | undefined> {
    const row = (await this.withExpiredTotalsQuery(id, now, now, now))[0]
    if (!row) return undefined
    const { expired_files: files, expired_size: size, expired_downloads: downloads, ...account } = row
    return { account, expired: { files: Number(files ?? 0), size: Number(size ?? 0), downloads: Number(downloads ?? 0) } }
  }

  /**
   * The account with `email` in any letter case (ASCII: A-Z folds to a-z, as SQLite's lower() does,
   * and PostgreSQL's on the "C" column: migration 006). At most one exists: lower(email) is unique.
   */
  findByEmail(email: string): Promise<AccountRow | undefined> {
    const folded = foldEmailCase(email)
    return this.db
      .selectFrom('accounts')
      .selectAll()
      .where(sql<string>`lower(email)`, '=', folded)
      .executeTakeFirst()
  }

  list(): Promise<AccountRow[]> {
    return this.db.selectFrom('accounts').selectAll().orderBy('id').execute()
  }

  async update(id: number, changes: LimitOverrides & { plan?: string }): Promise<AccountRow | undefined> {
    return this.db.updateTable('accounts').set(changes).where('id', '=', id).returningAll().executeTakeFirst()
  }

  /**
   * Whether a slot is left today, without taking it: the multipart upload asks before reading its
   * bytes and takes the slot only when it records the file (takeUploadSlotIn, with the file's row).
   */
  async hasUploadSlot(id: number, day: string, limit: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('accounts')
      .select('id')
      .where('id', '=', id)
      .where((eb) => slotLeft(eb, day, limit))
      .executeTakeFirst()
    return row !== undefined
  }
}

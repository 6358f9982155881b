import { sql, type Kysely } from 'kysely'
import type { Database, FileRow, InfectedFileRow } from '../schema.js'
import { recordChangeIn, type PendingEvent } from './audit-events-repository.js'
import { lowerCountersIn } from './files-repository.js'

/** A pending file a scanner took: no other scanner takes it while `leasedUntil` holds. */
export interface ClaimedScan {
  id: number
  accountId: number
  storageKey: string
  size: number
  attempts: number
  /** The lease claimDue or renewLease set: every write of the result is conditional on it. */
  leasedUntil: number
}

/**
 * The scans of files (../shared/spec/upload-requests.md, virus scanning). A pending file is taken by
 * one scanner at a time, on any number of instances (PostgreSQL's SKIP LOCKED, SQLite's single
 * writer), under a lease that a crashed scanner's successor waits out; each result is written only
 * by the holder of the lease, so that a scanner that lost it changes nothing.
 */
export class ScansRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {}

  /** Takes up to `limit` pending files that are due at `now`, oldest due first. */
  async claimDue(now: number, limit: number, leaseMs: number): Promise<ClaimedScan[]> {
    const leasedUntil = now + leaseMs
    const ids = await this.db.transaction().execute(async (trx) => {
      let due = trx
        .selectFrom('files')
        .select('id')
        .where('scan_status', '=', 'pending')
        .where('scan_next_at', '<=', now)
        .where((eb) => eb.or([eb('scan_lease_until', 'is', null), eb('scan_lease_until', '<=', now)]))
        .orderBy('scan_next_at')
        .limit(limit)
      if (this.dialect === 'postgres') due = due.forUpdate().skipLocked()
      const taken = (await due.execute()).map((row) => row.id)
      if (taken.length === 0) return []
      await trx.updateTable('files').set({ scan_lease_until: leasedUntil }).where('id', 'in', taken).execute()
      return taken
    })
    if (ids.length === 0) return []
    const rows = await this.db
      .selectFrom('files')
      .select(['id', 'account_id', 'storage_key', 'size', 'scan_attempts'])
      .where('id', 'in', ids)
      .where('scan_lease_until', '=', leasedUntil)
      .execute()
    return rows.map((row) => ({
      id: row.id,
      accountId: row.account_id,
      storageKey: row.storage_key,
      size: row.size,
      attempts: row.scan_attempts,
      leasedUntil,
    }))
  }

  /** Extends a held lease; the new lease, or undefined when it is no longer this scanner's. */
  async renewLease(claim: ClaimedScan, until: number): Promise<number | undefined> {
    const result = await this.db
      .updateTable('files')
      .set({ scan_lease_until: until })
      .where('id', '=', claim.id)
      .where('scan_status', '=', 'pending')
      .where('scan_lease_until', '=', claim.leasedUntil)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n ? until : undefined
  }

  /** Writes a verdict that keeps the file (clean, or not scannable); false when the lease was lost. */
  async recordVerdict(claim: ClaimedScan, status: 'clean' | 'skipped' | 'error', now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('files')
      .set({ scan_status: status, scanned_at: now, scan_lease_until: null, scan_next_at: null, scan_attempts: sql`scan_attempts + 1` })
      .where('id', '=', claim.id)
      .where('scan_status', '=', 'pending')
      .where('scan_lease_until', '=', claim.leasedUntil)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /** No verdict (clamd unreachable, a timeout): the file stays pending and is due again at `nextAt`. */
  async retryLater(claim: ClaimedScan, nextAt: number): Promise<void> {
    await this.db
      .updateTable('files')
      .set({ scan_lease_until: null, scan_next_at: nextAt, scan_attempts: sql`scan_attempts + 1` })
      .where('id', '=', claim.id)
      .where('scan_status', '=', 'pending')
      .where('scan_lease_until', '=', claim.leasedUntil)
      .execute()
  }

  /**
   * An infected file, in one transaction: its row goes (its links and grants with it, its size and
   * count out of the account's counters), what it was stays for its owner in infected_files, and
   * its event is recorded. The row as it was, or undefined when the lease was lost. Its bytes are
   * the caller's to delete (and the collector's, should that fail: nothing references them).
   */
  recordInfected(claim: ClaimedScan, signature: string, now: number, event?: PendingEvent<FileRow>): Promise<FileRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .deleteFrom('files')
        .where('id', '=', claim.id)
        .where('scan_status', '=', 'pending')
        .where('scan_lease_until', '=', claim.leasedUntil)
        .returningAll()
        .executeTakeFirst()
      if (!row) return undefined
      await lowerCountersIn(trx, row)
      await trx
        .insertInto('infected_files')
        .values({
          file_id: row.id,
          account_id: row.account_id,
          token: row.token,
          filename: row.filename,
          size: row.size,
          content_type: row.content_type,
          sha256: row.sha256,
          created_at: row.created_at,
          download_count: row.download_count,
          expires_at: row.expires_at,
          source_type: row.source_type,
          upload_request_id: row.upload_request_id,
          scan_signature: signature,
          scanned_at: now,
        })
        .execute()
      const infected = { ...row, scan_status: 'infected' as const, scan_signature: signature, scanned_at: now }
      await recordChangeIn(trx, event, infected)
      return infected
    })
  }

  /** What an infected file of the account was; undefined for any other id. */
  findInfected(accountId: number, fileId: number): Promise<InfectedFileRow | undefined> {
    return this.db
      .selectFrom('infected_files')
      .selectAll()
      .where('file_id', '=', fileId)
      .where('account_id', '=', accountId)
      .executeTakeFirst()
  }

  /** Forgets an infected file's record (its owner deleted it); false when there was none. */
  async deleteInfected(accountId: number, fileId: number): Promise<boolean> {
    const result = await this.db
      .deleteFrom('infected_files')
      .where('file_id', '=', fileId)
      .where('account_id', '=', accountId)
      .executeTakeFirst()
    return result.numDeletedRows > 0n
  }

  /** How many files wait for a scan (the metrics). */
  async pending(): Promise<number> {
    const row = await this.db
      .selectFrom('files')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('scan_status', '=', 'pending')
      .executeTakeFirst()
    return Number(row?.count ?? 0)
  }
}

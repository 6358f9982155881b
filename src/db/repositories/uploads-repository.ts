import { recordChangeIn, type PendingEvent } from './audit-events-repository.js'
import { sql, type Kysely } from 'kysely'
import type { Database, FileRow, NewFileRow, NewUploadRow, UploadRequestRow, UploadRow } from '../schema.js'
import { releaseUploadSlotIn, takeUploadSlotIn } from './accounts-repository.js'
import { insertFileIn } from './files-repository.js'
import { keysInBatches } from './keys-in-batches.js'
import { releaseStorageIn, reserveStorageIn, shrinkStorageIn } from './storage-reservations-repository.js'
import { receiveIntoRequestIn, releaseRequestRoomIn, reserveRequestRoomIn } from './upload-requests-repository.js'

/** How long after its upload's expiry a reservation is left for expireDue before the collector frees it. */
const RESERVATION_GRACE_MS = 3_600_000

/** What a commit moves forward: the durable offset and everything that must match it. */
export interface UploadCommit {
  upload_offset: number
  store_state: string
  hash_state: string
  expires_at: number
  /** Free requests earned by the bytes of this commit; the total stays at most `free_requests_cap`. */
  free_requests_earned: number
  free_requests_cap: number
}

/** A guest's file as its request received it, with the request as it is after. */
export interface ReceivedFile {
  request: UploadRequestRow
  file: FileRow
}

/** Thrown inside a transaction to roll it back with a reason. */
class Refused extends Error {
  constructor(readonly reason: 'quota' | 'request') {
    super(reason)
  }
}

/**
 * Resumable uploads. Every write that changes what the upload holds is conditional on the lease
 * token of the request doing it: a request whose lease was taken over can no longer commit.
 */
export class UploadsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Takes one of the day's upload slots (on `slot_day`, or the account's later current day) and
   * inserts the upload holding it, and reserves `reserveBytes` of the account's storage quota
   * under the upload's id, in one transaction. Refused, with nothing written, when no slot is left
   * (`daily`) or the quota has no room (`quota`). A slot is then never taken for an upload that was
   * not recorded. A guest's upload (`upload_request_id`) also reserves one file and its length of
   * its request's room at `now`: refused (`request`) when the request no longer takes files or has
   * no room. The account's row is locked before the request's, as everywhere.
   */
  insertTakingUploadSlot(
    upload: NewUploadRow,
    dailyUploads: number,
    storage: { reserveBytes: number; quota: number | null } = { reserveBytes: 0, quota: null },
    now = Date.now(),
  ): Promise<UploadRow | 'daily' | 'quota' | 'request'> {
    return this.db
      .transaction()
      .execute(async (trx) => {
        const day = await takeUploadSlotIn(trx, upload.account_id, upload.slot_day, dailyUploads)
        if (day === undefined) return 'daily' as const
        const reservation = { id: upload.id, accountId: upload.account_id, expiresAt: upload.expires_at + RESERVATION_GRACE_MS }
        if (!(await reserveStorageIn(trx, reservation, storage.reserveBytes, storage.quota))) throw new Refused('quota')
        const requestId = upload.upload_request_id
        if (requestId != null && !(await reserveRequestRoomIn(trx, requestId, upload.length ?? 0, now))) throw new Refused('request')
        return trx
          .insertInto('uploads')
          .values({ ...upload, slot_day: day })
          .returningAll()
          .executeTakeFirstOrThrow()
      })
      .catch((error: unknown) => {
        if (error instanceof Refused) return error.reason
        throw error
      })
  }

  /**
   * Makes the upload's reservation at least `bytes` (its length, or what a deferred length may
   * reach with the next chunk) if the quota has room; false, with nothing written, if it has not.
   */
  reserveUpTo(upload: Pick<UploadRow, 'id' | 'account_id'>, bytes: number, quota: number | null, expiresAt: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const held = await trx.selectFrom('storage_reservations').select('bytes').where('id', '=', upload.id).executeTakeFirst()
      const missing = bytes - (held?.bytes ?? 0)
      const reservation = { id: upload.id, accountId: upload.account_id, expiresAt: expiresAt + RESERVATION_GRACE_MS }
      if (missing <= 0) {
        await trx.updateTable('storage_reservations').set({ expires_at: reservation.expiresAt }).where('id', '=', upload.id).execute()
        return true
      }
      return reserveStorageIn(trx, reservation, missing, quota)
    })
  }

  /** Gives back what the upload's reservation holds above `bytes` (a deferred length's unused room). */
  shrinkReservation(id: string, bytes: number): Promise<void> {
    return this.db.transaction().execute((trx) => shrinkStorageIn(trx, id, bytes))
  }

  findById(id: string): Promise<UploadRow | undefined> {
    return this.db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** Takes the lease when no one holds it or its holder's lease ran out; false otherwise. */
  async acquireLease(id: string, token: string, now: number, leaseMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable('uploads')
      .set({ lease_token: token, lease_expires_at: now + leaseMs, release_requested: 0 })
      .where('id', '=', id)
      .where('status', '=', 'open')
      .where((eb) => eb.or([eb('lease_token', 'is', null), eb('lease_expires_at', '<', now)]))
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /** Asks the lease holder to stop at its next heartbeat and hand the upload over. */
  async requestRelease(id: string): Promise<void> {
    await this.db.updateTable('uploads').set({ release_requested: 1 }).where('id', '=', id).where('lease_token', 'is not', null).execute()
  }

  /**
   * Extends the holder's lease. Resolves `lost` when the lease is no longer the holder's, and
   * `releaseRequested` when another request asked for the upload.
   */
  async renewLease(id: string, token: string, now: number, leaseMs: number): Promise<'held' | 'lost' | 'releaseRequested'> {
    const row = await this.db
      .updateTable('uploads')
      .set({ lease_expires_at: now + leaseMs })
      .where('id', '=', id)
      .where('lease_token', '=', token)
      .returning('release_requested')
      .executeTakeFirst()
    if (!row) return 'lost'
    return Number(row.release_requested) === 1 ? 'releaseRequested' : 'held'
  }

  async releaseLease(id: string, token: string): Promise<void> {
    await this.db
      .updateTable('uploads')
      .set({ lease_token: null, lease_expires_at: null })
      .where('id', '=', id)
      .where('lease_token', '=', token)
      .execute()
  }

  /** Records a commit of the store; false (nothing written) when the lease or the offset moved meanwhile. */
  async commit(id: string, token: string, expectedOffset: number, commit: UploadCommit): Promise<boolean> {
    const { free_requests_earned, free_requests_cap, ...columns } = commit
    const result = await this.db
      .updateTable('uploads')
      .set({
        ...columns,
        // LEAST on PostgreSQL is min() on SQLite: CASE reads the same on both.
        free_requests: sql`case when free_requests + ${free_requests_earned} > ${free_requests_cap} then ${free_requests_cap} else free_requests + ${free_requests_earned} end`,
      })
      .where('id', '=', id)
      .where('lease_token', '=', token)
      .where('upload_offset', '=', expectedOffset)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /** Hands out the next part number of the upload's S3 multipart upload; undefined without the lease. */
  async reservePartNumber(id: string, token: string): Promise<number | undefined> {
    const row = await this.db
      .updateTable('uploads')
      .set({ next_part_number: sql`next_part_number + 1` })
      .where('id', '=', id)
      .where('lease_token', '=', token)
      .returning('next_part_number')
      .executeTakeFirst()
    return row ? Number(row.next_part_number) - 1 : undefined
  }

  /** Sets a deferred Upload-Length; false without the lease. */
  async declareLength(id: string, token: string, length: number): Promise<boolean> {
    const result = await this.db
      .updateTable('uploads')
      .set({ length, max_length: length })
      .where('id', '=', id)
      .where('lease_token', '=', token)
      .where('length', 'is', null)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /**
   * Completes the upload into its file in one transaction: the file row, the account's counters,
   * and the upload's status. Undefined (nothing written) when the lease is no longer the caller's.
   * A guest's upload (`request`) also moves its reservation into the request's received files:
   * `request_closed`, with nothing written, when the request no longer takes files.
   */
  complete(
    id: string,
    token: string,
    file: NewFileRow,
    event?: PendingEvent<FileRow>,
    request?: { id: number; reservedBytes: number; now: number; events: readonly PendingEvent<ReceivedFile>[] },
  ): Promise<FileRow | undefined | 'request_closed'> {
    return this.db
      .transaction()
      .execute(async (trx) => {
        const claimed = await trx
          .updateTable('uploads')
          .set({ status: 'complete', lease_token: null, lease_expires_at: null })
          .where('id', '=', id)
          .where('lease_token', '=', token)
          .where('status', '=', 'open')
          .executeTakeFirst()
        if (claimed.numUpdatedRows === 0n) return undefined
        await releaseStorageIn(trx, id)
        const row = await insertFileIn(trx, file)
        await trx.updateTable('uploads').set({ file_id: row.id }).where('id', '=', id).execute()
        await recordChangeIn(trx, event, row)
        if (request) {
          const received = await receiveIntoRequestIn(trx, request.id, request.reservedBytes, row.size, request.now)
          if (!received) throw new Refused('request')
          for (const event of request.events) await recordChangeIn(trx, event, { request: received, file: row })
        }
        return row
      })
      .catch((error: unknown) => {
        if (error instanceof Refused) return 'request_closed' as const
        throw error
      })
  }

  /**
   * Ends an open upload the caller holds the lease of: terminated (the row goes) or expired (a
   * tombstone stays), and gives its daily slot back in the same transaction. False, with nothing
   * changed, when the upload is no longer open under that lease.
   */
  close<Closed extends Pick<UploadRow, 'id' | 'account_id' | 'slot_day' | 'upload_request_id' | 'length'>>(
    upload: Closed,
    token: string,
    status: 'terminated' | 'expired',
    event?: PendingEvent<Closed>,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const query =
        status === 'terminated'
          ? trx.deleteFrom('uploads').where('id', '=', upload.id).where('lease_token', '=', token).where('status', '=', 'open')
          : trx
              .updateTable('uploads')
              .set({ status, lease_token: null, lease_expires_at: null })
              .where('id', '=', upload.id)
              .where('lease_token', '=', token)
              .where('status', '=', 'open')
      const result = await query.executeTakeFirst()
      const changed = 'numDeletedRows' in result ? result.numDeletedRows : result.numUpdatedRows
      if (changed === 0n) return false
      await releaseUploadSlotIn(trx, upload.account_id, upload.slot_day)
      await releaseStorageIn(trx, upload.id)
      if (upload.upload_request_id !== null) await releaseRequestRoomIn(trx, upload.upload_request_id, upload.length ?? 0)
      await recordChangeIn(trx, event, upload)
      return true
    })
  }

  /** Forgets a completed upload (its file stays). */
  async deleteCompleted(id: string): Promise<void> {
    await this.db.deleteFrom('uploads').where('id', '=', id).where('status', '=', 'complete').execute()
  }

  /** Spends one of the upload's free requests; false when none is left. */
  async spendFreeRequest(id: string): Promise<boolean> {
    const result = await this.db
      .updateTable('uploads')
      .set({ free_requests: sql`free_requests - 1` })
      .where('id', '=', id)
      .where('free_requests', '>', 0)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /** Ids of open uploads past their expiry, oldest first. */
  async listExpired(now: number, limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('uploads')
      .select('id')
      .where('status', '=', 'open')
      .where('expires_at', '<', now)
      .orderBy('expires_at')
      .limit(limit)
      .execute()
    return rows.map((row) => row.id)
  }

  /**
   * Ids of open guest uploads whose request no longer takes files (closed, expired or deleted): they
   * end at once rather than at their own expiry, giving the holder's slot and storage back. Of one
   * request only, when `requestId` is given (its holder just closed or deleted it).
   */
  async listOrphanedByRequests(now: number, limit: number, requestId?: number): Promise<string[]> {
    let query = this.db
      .selectFrom('uploads')
      .leftJoin('upload_requests', 'upload_requests.id', 'uploads.upload_request_id')
      .select('uploads.id')
      .where('uploads.status', '=', 'open')
    query =
      requestId === undefined
        ? query.where('uploads.upload_request_id', 'is not', null)
        : query.where('uploads.upload_request_id', '=', requestId)
    const rows = await query
      .where((eb) =>
        eb.or([
          eb('upload_requests.id', 'is', null),
          eb('upload_requests.closed_at', 'is not', null),
          eb('upload_requests.expires_at', '<=', now),
        ]),
      )
      .limit(limit)
      .execute()
    return rows.map((row) => row.id)
  }

  /** Removes the rows of ended uploads (completed, expired) whose expiry passed before `before`. */
  async deleteEndedBefore(before: number): Promise<number> {
    const result = await this.db.deleteFrom('uploads').where('status', '<>', 'open').where('expires_at', '<', before).executeTakeFirst()
    return Number(result.numDeletedRows)
  }

  /** Which of `storageKeys` belong to open uploads (garbage collection must leave those alone). */
  openStorageKeys(storageKeys: readonly string[]): Promise<Set<string>> {
    return keysInBatches(storageKeys, async (batch) =>
      (
        await this.db.selectFrom('uploads').select('storage_key').where('status', '=', 'open').where('storage_key', 'in', batch).execute()
      ).map((row) => row.storage_key),
    )
  }
}

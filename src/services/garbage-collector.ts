import { SYSTEM_ACTOR, type AuditLogService, type AuditTrail } from './audit.js'
import type { WebhookDispatcher } from './webhook-dispatcher.js'
import { fileEvent } from './files.js'
import type { FilesRepository } from '../db/repositories/files-repository.js'
import type { FileRow } from '../db/schema.js'
import type { LinksRepository } from '../db/repositories/links-repository.js'
import type { BlobEntry, BlobStore } from '../storage/blob-store.js'
import type { ResumableBlobStore } from '../storage/resumable.js'
import type { ResumableUploadService } from './resumable-uploads.js'
import { REVOKED_LINK_RETENTION_MS } from './links.js'
import type { StorageQuota } from './storage-quota.js'
import type { IdempotencyService } from './idempotency.js'

export interface GarbageCollectionOptions {
  /**
   * Nothing written more recently than this is touched: an upload stores its blob before its row
   * commits, so a young blob without a row may be an upload in flight.
   */
  graceMs: number
  /** Count what would go, remove nothing. */
  dryRun?: boolean
  /** Ends the sweep early, between two items (the server is shutting down). */
  signal?: AbortSignal
}

export interface GarbageCollectionReport {
  dryRun: boolean
  graceMs: number
  /** Blobs in the store when it was listed. */
  blobsScanned: number
  /** Blobs no file row references, older than the grace period: removed (or, dry run, to remove). */
  blobsRemoved: number
  blobBytesRemoved: number
  /** Blobs written within the grace period, not judged. */
  recentBlobsKept: number
  /** Leftovers of writes that never finished (temp files, open multipart uploads), older than the grace period. */
  unfinishedWritesRemoved: number
  unfinishedWriteBytesRemoved: number
  /** Unfinished writes written to within the grace period: maybe uploads in progress. */
  recentUnfinishedWritesKept: number
  /** Resumable uploads whose expiry passed: their bytes removed, their daily slot given back (none in a dry run). */
  uploadsExpired: number
  /** Files past their expires_at: their rows and counts removed, then their bytes (none in a dry run). */
  filesExpired: number
  expiredFileBytesRemoved: number
  /** Links revoked more than 30 days ago, and grants past their hour: removed (none in a dry run). */
  revokedLinksRemoved: number
  grantsRemoved: number
  /** Storage reservations of uploads whose instance died: their bytes given back to the quota. */
  reservationsReleased: number
  /** Idempotency keys past their 24 hours: removed. */
  idempotencyKeysRemoved: number
  /** Audit events past FILESHARE_AUDIT_RETENTION_DAYS. */
  auditEventsRemoved: number
  /** Webhook messages (with their deliveries) older than 30 days. */
  webhookMessagesRemoved: number
  /** Unfinished writes that belong to resumable uploads still open, whatever their age: kept. */
  openUploadWritesKept: number
  /** blobBytesRemoved + unfinishedWriteBytesRemoved + expiredFileBytesRemoved. */
  bytesFreed: number
  /** Removals that failed; each was reported to onError and is retried by the next sweep. */
  failures: number
  /** The signal stopped the sweep before it had seen everything. */
  interrupted: boolean
}

/** Blobs judged per repository query. */
const BATCH_SIZE = 500
/** Removals in flight at once. */
const PARALLEL_REMOVALS = 8

/** A report of a sweep that has not found anything yet. */
export function emptyGarbageCollectionReport({
  graceMs,
  dryRun = false,
}: Pick<GarbageCollectionOptions, 'graceMs' | 'dryRun'>): GarbageCollectionReport {
  return {
    dryRun,
    graceMs,
    blobsScanned: 0,
    blobsRemoved: 0,
    blobBytesRemoved: 0,
    recentBlobsKept: 0,
    unfinishedWritesRemoved: 0,
    unfinishedWriteBytesRemoved: 0,
    recentUnfinishedWritesKept: 0,
    uploadsExpired: 0,
    filesExpired: 0,
    expiredFileBytesRemoved: 0,
    revokedLinksRemoved: 0,
    grantsRemoved: 0,
    reservationsReleased: 0,
    idempotencyKeysRemoved: 0,
    auditEventsRemoved: 0,
    webhookMessagesRemoved: 0,
    openUploadWritesKept: 0,
    bytesFreed: 0,
    failures: 0,
    interrupted: false,
  }
}

/**
 * Finds and removes what crashes and failed cleanups leave behind: blobs no file row references
 * and leftovers of unfinished writes; and ends resumable uploads whose expiry passed. Never touches
 * anything younger than the grace period, never a blob a row references, and never the bytes of a
 * resumable upload still open (a paused upload may sit idle for hours before it expires).
 */
export class GarbageCollector {
  constructor(
    private readonly files: FilesRepository,
    private readonly links: Pick<LinksRepository, 'purge'>,
    private readonly store: BlobStore & ResumableBlobStore,
    private readonly uploads: Pick<ResumableUploadService, 'expireDue' | 'openStorageKeys'>,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly now: () => number = Date.now,
    /**
     * What else a sweep tidies: abandoned storage reservations, expired idempotency keys, audit
     * events past their retention; and the audit trail that records each expired file's removal.
     */
    private readonly housekeeping: {
      quota?: Pick<StorageQuota, 'releaseAbandoned'>
      idempotency?: Pick<IdempotencyService, 'purgeExpired'>
      auditLog?: Pick<AuditLogService, 'removeExpired'>
      trail?: Pick<AuditTrail, 'pending'>
      webhooks?: Pick<WebhookDispatcher, 'purge'>
    } = {},
  ) {}

  async collect({ graceMs, dryRun = false, signal }: GarbageCollectionOptions): Promise<GarbageCollectionReport> {
    const cutoff = this.now() - graceMs
    const report = emptyGarbageCollectionReport({ graceMs, dryRun })
    const stopped = () => (report.interrupted ||= signal?.aborted ?? false)

    // First, so that the bytes of uploads and files that expire now are removed by this sweep.
    if (!dryRun) {
      report.uploadsExpired = await this.uploads.expireDue(signal)
      await this.expireFiles(report, signal)
      const purged = await this.links.purge(this.now() - REVOKED_LINK_RETENTION_MS, this.now())
      report.revokedLinksRemoved = purged.links
      report.grantsRemoved = purged.grants
      const { quota, idempotency, auditLog, webhooks } = this.housekeeping
      if (quota) report.reservationsReleased = await quota.releaseAbandoned()
      if (idempotency) report.idempotencyKeysRemoved = await idempotency.purgeExpired()
      if (auditLog) report.auditEventsRemoved = await auditLog.removeExpired()
      if (webhooks) report.webhookMessagesRemoved = await webhooks.purge()
    }

    const removeUnreferenced = async (batch: BlobEntry[]) => {
      // Asked after the batch was listed: a row committed since then still protects its blob.
      const referenced = await this.files.referencedStorageKeys(batch.map((entry) => entry.key))
      const garbage = batch.filter((entry) => !referenced.has(entry.key))
      await this.removeAll(
        garbage,
        dryRun,
        report,
        (entry) => this.store.delete(entry.key),
        (entry) => {
          report.blobsRemoved++
          report.blobBytesRemoved += entry.size
        },
      )
    }
    let batch: BlobEntry[] = []
    for await (const entry of this.store.list()) {
      if (stopped()) break
      report.blobsScanned++
      if (entry.modifiedAt.getTime() > cutoff) {
        report.recentBlobsKept++
        continue
      }
      batch.push(entry)
      if (batch.length >= BATCH_SIZE) {
        await removeUnreferenced(batch)
        batch = []
      }
    }
    if (batch.length > 0 && !stopped()) await removeUnreferenced(batch)

    const removeUnfinished = async <T extends { key?: string; lastWrittenAt: Date; size: number }>(
      writes: AsyncIterable<T>,
      remove: (write: T) => Promise<void>,
    ) => {
      const old = []
      for await (const write of writes) {
        if (stopped()) return
        if (write.lastWrittenAt.getTime() > cutoff) report.recentUnfinishedWritesKept++
        else old.push(write)
      }
      // Asked after the listing: an upload created since then is open and listed here.
      const open = await this.uploads.openStorageKeys(old.flatMap((write) => (write.key ? [write.key] : [])))
      const leftovers = old.filter((write) => !(write.key && open.has(write.key)))
      report.openUploadWritesKept += old.length - leftovers.length
      await this.removeAll(leftovers, dryRun, report, remove, (write) => {
        report.unfinishedWritesRemoved++
        report.unfinishedWriteBytesRemoved += write.size
      })
    }
    if (!stopped()) await removeUnfinished(this.store.listUnfinishedWrites(), (write) => this.store.removeUnfinishedWrite(write.id))
    if (!stopped())
      await removeUnfinished(this.store.listResumableLeftovers(), (leftover) => this.store.removeResumableLeftover(leftover.id))
    report.bytesFreed = report.blobBytesRemoved + report.unfinishedWriteBytesRemoved + report.expiredFileBytesRemoved
    return report
  }

  /**
   * Removes the files whose expiry passed (already gone for everyone since then) with their counts,
   * then their bytes. A blob whose removal fails is left to the unreferenced-blob pass.
   */
  private async expireFiles(report: GarbageCollectionReport, signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      if (signal?.aborted) return
      const event = this.housekeeping.trail?.pending('file.expired', SYSTEM_ACTOR, (file: FileRow) =>
        fileEvent(file, { expired_at: file.expires_at }),
      )
      const expired = await this.files.deleteExpired(this.now(), BATCH_SIZE, event)
      report.filesExpired += expired.length
      await this.removeAll(
        expired,
        false,
        report,
        (file) => this.store.delete(file.storage_key),
        (file) => (report.expiredFileBytesRemoved += file.size),
      )
      if (expired.length < BATCH_SIZE) return
    }
  }

  /** Removes `items` a few at a time; a failure is counted and reported, and the rest go on. */
  private async removeAll<T>(
    items: T[],
    dryRun: boolean,
    report: GarbageCollectionReport,
    remove: (item: T) => Promise<void>,
    count: (item: T) => void,
  ): Promise<void> {
    for (let start = 0; start < items.length; start += PARALLEL_REMOVALS) {
      await Promise.all(
        items.slice(start, start + PARALLEL_REMOVALS).map(async (item) => {
          try {
            if (!dryRun) await remove(item)
            count(item)
          } catch (error) {
            report.failures++
            this.onError(error)
          }
        }),
      )
    }
  }
}

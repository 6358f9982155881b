import type { FilesRepository } from '../db/repositories/files-repository.js'
import type { BlobEntry, BlobStore } from '../storage/blob-store.js'

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
  /** blobBytesRemoved + unfinishedWriteBytesRemoved. */
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

/**
 * Finds and removes what crashes and failed cleanups leave behind: blobs no file row references
 * and leftovers of unfinished writes. Never touches anything younger than the grace period, and
 * never a blob a row references.
 */
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
    bytesFreed: 0,
    failures: 0,
    interrupted: false,
  }
}

export class GarbageCollector {
  constructor(
    private readonly files: FilesRepository,
    private readonly store: BlobStore,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  async collect({ graceMs, dryRun = false, signal }: GarbageCollectionOptions): Promise<GarbageCollectionReport> {
    const cutoff = this.now() - graceMs
    const report = emptyGarbageCollectionReport({ graceMs, dryRun })
    const stopped = () => (report.interrupted ||= signal?.aborted ?? false)

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

    if (!stopped()) {
      const leftovers = []
      for await (const write of this.store.listUnfinishedWrites()) {
        if (stopped()) break
        if (write.lastWrittenAt.getTime() > cutoff) report.recentUnfinishedWritesKept++
        else leftovers.push(write)
      }
      await this.removeAll(
        leftovers,
        dryRun,
        report,
        (write) => this.store.removeUnfinishedWrite(write.id),
        (write) => {
          report.unfinishedWritesRemoved++
          report.unfinishedWriteBytesRemoved += write.size
        },
      )
    }
    report.bytesFreed = report.blobBytesRemoved + report.unfinishedWriteBytesRemoved
    return report
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

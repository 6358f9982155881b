import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'
import type { DatabaseHandle } from '../db/dialect.js'
import { FileIntegrityRepository, type RecordedBlob } from '../db/repositories/file-integrity-repository.js'
import { FilesRepository } from '../db/repositories/files-repository.js'
import { BlobNotFoundError } from '../errors.js'
import type { BlobEntry, BlobStore } from '../storage/blob-store.js'

/** A file whose stored bytes are not what its row recorded (bit rot, a flipped byte, a truncation). */
export interface DamagedBlob {
  fileId: number
  storageKey: string
  recordedSize: number
  actualSize: number
  recordedSha256: string
  actualSha256: string
}

/** A file whose row names a blob the store does not have. */
export interface MissingBlob {
  fileId: number
  storageKey: string
}

/** A blob no file row refers to, older than the grace period. */
export interface OrphanBlob {
  storageKey: string
  size: number
}

export interface VerifyOptions {
  /** Re-hash this many files chosen at random instead of every file. */
  sample?: number
  /** A blob younger than this without a row may be an upload in flight: counted, not reported. */
  graceMs: number
}

export interface VerifyReport {
  sampled: boolean
  filesChecked: number
  bytesChecked: number
  damaged: DamagedBlob[]
  missing: MissingBlob[]
  blobsListed: number
  orphans: OrphanBlob[]
  recentUnreferencedKept: number
}

/** Rows read per query, and blobs asked about per query. */
const BATCH_SIZE = 500
/** Blobs hashed at once. */
const PARALLEL_READS = 4

/** Size and lower-case hex SHA-256 of everything `stream` yields. */
export async function digestStream(stream: Readable): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256')
  let size = 0
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk)
    size += chunk.length
  }
  return { size, sha256: hash.digest('hex') }
}

/**
 * Runs `work` on every item, `parallel` at a time, in order of starting. After a failure no new item
 * starts, and the first failure is thrown only once the items under way have ended: a caller that
 * cleans up after it (a restore removing what it wrote) never races a copy still writing.
 */
export async function forEachInParallel<T>(items: readonly T[], parallel: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  let failed = false
  const worker = async () => {
    while (!failed && next < items.length) {
      try {
        await work(items[next++]!)
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  const outcomes = await Promise.allSettled(Array.from({ length: Math.min(parallel, items.length) }, worker))
  const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')
  if (failure) throw failure.reason
}

/**
 * Re-hashes stored blobs against the SHA-256 their rows recorded, through the BlobStore interface
 * (the folder store or S3 alike), and lists the blobs no row refers to. Reads only: repairing is
 * the operator's (restore from a backup; `fileshare gc` removes orphans).
 */
export class BlobVerifier {
  constructor(
    private readonly integrity: FileIntegrityRepository,
    private readonly files: Pick<FilesRepository, 'referencedStorageKeys'>,
    private readonly store: Pick<BlobStore, 'get' | 'list'>,
    private readonly now: () => number = Date.now,
  ) {}

  async verify({ sample, graceMs }: VerifyOptions): Promise<VerifyReport> {
    const report: VerifyReport = {
      sampled: sample !== undefined,
      filesChecked: 0,
      bytesChecked: 0,
      damaged: [],
      missing: [],
      blobsListed: 0,
      orphans: [],
      recentUnreferencedKept: 0,
    }
    const checkAll = (blobs: RecordedBlob[]) => forEachInParallel(blobs, PARALLEL_READS, (blob) => this.check(blob, report))
    if (sample !== undefined) {
      await checkAll(await this.integrity.sampleFiles(sample))
    } else {
      for (let afterId = 0; ;) {
        const batch = await this.integrity.filesAfter(afterId, BATCH_SIZE)
        if (batch.length === 0) break
        await checkAll(batch)
        afterId = batch[batch.length - 1]!.fileId
      }
    }
    await this.findOrphans(this.now() - graceMs, report)
    const byFile = (a: { fileId: number }, b: { fileId: number }) => a.fileId - b.fileId
    report.damaged.sort(byFile)
    report.missing.sort(byFile)
    return report
  }

  private async check(blob: RecordedBlob, report: VerifyReport): Promise<void> {
    let stream: Readable
    try {
      stream = await this.store.get(blob.storageKey)
    } catch (error) {
      if (!(error instanceof BlobNotFoundError)) throw error
      report.missing.push({ fileId: blob.fileId, storageKey: blob.storageKey })
      return
    }
    const actual = await digestStream(stream)
    report.filesChecked++
    report.bytesChecked += actual.size
    if (actual.size !== blob.size || actual.sha256 !== blob.sha256) {
      report.damaged.push({
        fileId: blob.fileId,
        storageKey: blob.storageKey,
        recordedSize: blob.size,
        actualSize: actual.size,
        recordedSha256: blob.sha256,
        actualSha256: actual.sha256,
      })
    }
  }

  /** Blobs older than `cutoff` that no row refers to, asked a batch at a time as the store lists them. */
  private async findOrphans(cutoff: number, report: VerifyReport): Promise<void> {
    const judge = async (batch: BlobEntry[]) => {
      // Asked after the batch was listed: a row committed since then still claims its blob.
      const referenced = await this.files.referencedStorageKeys(batch.map((entry) => entry.key))
      for (const entry of batch) {
        if (referenced.has(entry.key)) continue
        if (entry.modifiedAt.getTime() > cutoff) report.recentUnreferencedKept++
        else report.orphans.push({ storageKey: entry.key, size: entry.size })
      }
    }
    let batch: BlobEntry[] = []
    for await (const entry of this.store.list()) {
      report.blobsListed++
      batch.push(entry)
      if (batch.length >= BATCH_SIZE) {
        await judge(batch)
        batch = []
      }
    }
    if (batch.length > 0) await judge(batch)
    report.orphans.sort((a, b) => a.storageKey.localeCompare(b.storageKey))
  }
}

/** The verifier over the configured database and blob store (the CLI's `fileshare verify`). */
export function createBlobVerifier({ db }: DatabaseHandle, store: Pick<BlobStore, 'get' | 'list'>): BlobVerifier {
  return new BlobVerifier(new FileIntegrityRepository(db), new FilesRepository(db), store)
}

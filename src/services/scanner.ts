import { pipeline, Transform, type Readable } from 'node:stream'
import { WorkLoop } from '../lib/work-loop.js'
import type { ClaimedScan, ScansRepository } from '../db/repositories/scans-repository.js'
import type { FileRow } from '../db/schema.js'
import type { ScanVerdict } from '../scanning/clamd-client.js'
import type { BlobStore } from '../storage/blob-store.js'
import { SYSTEM_ACTOR, type AuditTrail } from './audit.js'
import type { ScanPolicy } from './scan-policy.js'

/** What scans the bytes: clamd (scanning/clamd-client.ts); tests may put another in. */
export interface VirusScanner {
  /** The verdict on the bytes of `source`; rejects without one (and when `signal` aborts). */
  scan(source: Readable, signal?: AbortSignal): Promise<ScanVerdict>
  ping(): Promise<void>
}

export type ScanResult = 'clean' | 'infected' | 'skipped' | 'error' | 'retry'

/** Told of each scan (the server's metrics). */
export interface ScanEvents {
  /** `failure`: why a scan had no verdict (result `retry`). */
  scanned(result: ScanResult, durationMs: number, failure?: unknown): void
}

export interface ScannerOptions {
  /** Files scanned at once by this instance. */
  concurrency: number
  /** How often it looks for pending files when idle. */
  pollMs: number
  /** A scanner's hold on a file, renewed while it scans: a crashed instance's files are free again after it. */
  leaseMs: number
  /** The first wait after a scan without a verdict; doubled each time up to maxRetryMs. */
  retryMs: number
  maxRetryMs: number
}

export const DEFAULT_SCANNER_OPTIONS: Omit<ScannerOptions, 'concurrency'> = {
  pollMs: 1_000,
  leaseMs: 60_000,
  retryMs: 5_000,
  maxRetryMs: 300_000,
}

/**
 * The scanner (../shared/spec/upload-requests.md, virus scanning): takes pending files, streams each
 * from the blob store to clamd (no local copy, on S3 as on the folder), and writes the verdict. An
 * infected file loses its row, links and bytes at once and is remembered for its owner; no verdict
 * (clamd down, a timeout, the store unreadable) leaves the file pending and tries again with backoff:
 * never clean without clamd saying so. Restartable and safe on several instances: each file is held
 * by one scanner at a time under a renewed lease.
 */
export class ScanService {
  private readonly options: ScannerOptions
  private readonly inFlight = new Set<Promise<void>>()
  private readonly loop: WorkLoop
  /** Aborted by stop(): scans in flight end at once, their files stay pending for the next run. */
  private stopping = new AbortController()

  constructor(
    private readonly scans: ScansRepository,
    private readonly store: BlobStore,
    private readonly scanner: VirusScanner,
    private readonly policy: ScanPolicy,
    private readonly trail: AuditTrail,
    options: Partial<ScannerOptions> & Pick<ScannerOptions, 'concurrency'>,
    private readonly now: () => number = Date.now,
    private readonly events: ScanEvents = { scanned: () => {} },
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.options = { ...DEFAULT_SCANNER_OPTIONS, ...options }
    this.loop = new WorkLoop(
      async () => (await this.takeDue()).length,
      () => this.inFlight.size < this.options.concurrency,
      this.options.pollMs,
      this.onError,
    )
  }

  /** Whether clamd answers now (start-up's check: a warning, never a refusal to start). */
  ping(): Promise<void> {
    return this.scanner.ping()
  }

  /** Runs until stop(): polls for pending files, at once again while there is more to do. */
  start(): void {
    this.stopping = new AbortController()
    this.loop.start()
  }

  /** A file was just stored by this process: look now rather than at the next poll. */
  nudge(): void {
    this.loop.nudge(15)
  }

  /** Stops taking files and ends the scans in flight (their files stay pending, for any instance to take). */
  async stop(): Promise<void> {
    this.stopping.abort()
    await this.loop.stop()
    await Promise.all(this.inFlight)
  }

  private async takeDue(): Promise<Promise<void>[]> {
    const room = this.options.concurrency - this.inFlight.size
    if (room <= 0) return []
    const claimed = await this.scans.claimDue(this.now(), room, this.options.leaseMs)
    return claimed.map((claim) => {
      const scan: Promise<void> = this.scanOne(claim)
        .catch(this.onError)
        .finally(() => {
          this.inFlight.delete(scan)
          this.loop.wake()
        })
      this.inFlight.add(scan)
      return scan
    })
  }

  private async scanOne(claim: ClaimedScan): Promise<void> {
    const started = Date.now()
    // The lease is renewed while clamd reads, one renewal at a time: a long scan is not taken over
    // by another instance, and the verdict is written under the lease as the last renewal left it.
    let renewing: Promise<void> = Promise.resolve()
    const renewal = setInterval(
      () => {
        renewing = renewing
          .then(() => this.scans.renewLease(claim, this.now() + this.options.leaseMs))
          .then((until) => {
            if (until !== undefined) claim.leasedUntil = until
          })
          .catch(this.onError)
      },
      Math.max(50, Math.floor(this.options.leaseMs / 3)),
    )
    renewal.unref()
    let verdict: ScanVerdict | undefined
    let failure: unknown
    let bytes = 0
    try {
      const counted = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          bytes += chunk.length
          done(null, chunk)
        },
      })
      // The store's errors reach the scanner through `counted`; ending the scan ends the read.
      pipeline(await this.store.get(claim.storageKey), counted, () => {})
      verdict = await this.scanner.scan(counted, this.stopping.signal)
      // A clean verdict counts only for the whole file: a stream that ended early is no verdict.
      if (verdict.result === 'clean' && bytes !== claim.size) {
        throw new Error(`the store gave ${bytes} of the file's ${claim.size} bytes`)
      }
    } catch (error) {
      // No verdict (clamd down, a timeout, a short read, a stop): pending it stays, and it is tried
      // again later; never clean by default.
      verdict = undefined
      failure = error
    } finally {
      clearInterval(renewal)
    }
    await renewing
    let result: ScanResult = 'retry'
    if (verdict) result = await this.record(claim, verdict)
    if (result === 'retry') {
      const wait = Math.min(this.options.maxRetryMs, this.options.retryMs * 2 ** Math.min(claim.attempts, 20))
      await this.scans.retryLater(claim, this.now() + wait)
    }
    this.events.scanned(result, Date.now() - started, failure)
  }

  /** Writes a verdict: clean, infected (the file goes), or too large for clamd (skipped or error by mode). */
  private async record(claim: ClaimedScan, verdict: ScanVerdict): Promise<ScanResult> {
    const now = this.now()
    if (verdict.result === 'clean') {
      return (await this.scans.recordVerdict(claim, 'clean', now)) ? 'clean' : 'retry'
    }
    if (verdict.result === 'too_large') {
      // clamd's StreamMaxLength is below what the operator declared: served unscanned only in async mode.
      const status = this.policy.mode === 'required' ? 'error' : 'skipped'
      return (await this.scans.recordVerdict(claim, status, now)) ? status : 'retry'
    }
    const removed = await this.scans.recordInfected(
      claim,
      verdict.signature,
      now,
      this.trail.pending('scan.infected', SYSTEM_ACTOR, (file: FileRow) => ({
        accountId: file.account_id,
        target: { type: 'file', id: file.id },
        details: { filename: file.filename, size: file.size, signature: verdict.signature },
      })),
    )
    if (!removed) return 'retry'
    await this.store.delete(removed.storage_key).catch(this.onError)
    return 'infected'
  }

  /** Files waiting for a scan (the metrics' gauge). */
  pending(): Promise<number> {
    return this.scans.pending()
  }
}

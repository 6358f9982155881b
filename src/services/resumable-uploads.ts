import { createHash, type Hash } from 'node:crypto'
import { Transform, finished, type Readable } from 'node:stream'
import mime from 'mime-types'
import {
  StorageQuotaExceededError,
  ChecksumMismatchError,
  DailyUploadLimitExceededError,
  FileNotScannableError,
  FileTooLargeError,
  InvalidRequestError,
  NotFoundError,
  ServiceUnavailableError,
  UploadExpiredError,
  UploadLengthExceededError,
  UploadLockedError,
  UploadOffsetMismatchError,
  UploadRequestFullError,
  UploadRequestUnavailableError,
} from '../errors.js'
import type { AccountsRepository } from '../db/repositories/accounts-repository.js'
import type { FilesRepository } from '../db/repositories/files-repository.js'
import type { PendingEvent } from '../db/repositories/audit-events-repository.js'
import type { ReceivedFile, UploadsRepository } from '../db/repositories/uploads-repository.js'
import type { UploadRequestsRepository } from '../db/repositories/upload-requests-repository.js'
import type { FileRow, UploadRequestRow, UploadRow } from '../db/schema.js'
import { sanitizeFilename } from '../lib/filename.js'
import { randomToken } from '../lib/random-token.js'
import { utcDay } from '../lib/utc-day.js'
import type { BlobStore } from '../storage/blob-store.js'
import type { ResumableBlobStore } from '../storage/resumable.js'
import { fileEvent, sourceColumns, type Owner } from './files.js'
import { AuditTrail, OPERATOR_ACTOR, type Actor } from './audit.js'
import { NO_UPLOAD_EVENTS, type UploadEvents } from './upload-events.js'
import { SCANNING_OFF, type ScanPolicy } from './scan-policy.js'
import { isFull } from './records.js'
import { UploadHashes } from './upload-hashes.js'

/** Checksum algorithms a chunk's Upload-Checksum may name (tus checksum extension). */
export const CHECKSUM_ALGORITHMS = ['sha1', 'sha256'] as const
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number]

/**
 * The guard that keeps chunk requests from becoming a way around the rate limits: an upload starts
 * with FREE_REQUESTS_AT_CREATION requests the limits do not count, and earns one more per
 * BYTES_PER_FREE_REQUEST it stores, up to what its length needs plus the starting allowance.
 */
export const FREE_REQUESTS_AT_CREATION = 16
export const BYTES_PER_FREE_REQUEST = 256 * 1024

/** Rows of ended uploads (completed, expired) stay this long past their expiry: HEAD then still says what happened. */
export const ENDED_UPLOAD_RETENTION_MS = 7 * 86_400_000

export interface ResumableUploadTiming {
  /** Unfinished uploads expire this long after their last accepted bytes. */
  expiryMs: number
  /** A writer's lease; a crashed writer's upload is free again after this. */
  leaseMs: number
  /** How often a writer renews its lease and looks for a request to hand over. */
  heartbeatMs: number
  /** How long a request waits for another writer to hand the upload over before 423. */
  takeoverWaitMs: number
}

export const DEFAULT_TIMING: Omit<ResumableUploadTiming, 'expiryMs'> = { leaseMs: 8_000, heartbeatMs: 2_000, takeoverWaitMs: 8_000 }

/** An upload as the service shows it. */
export interface ResumableUpload {
  id: string
  length: number | null
  offset: number
  metadata: string
  expiresAt: number
  /** The file it became, once complete. */
  file: FileRow | null
}

export interface NewUpload {
  /** Upload-Length; undefined when deferred. */
  length?: number
  /** The raw Upload-Metadata header, echoed on HEAD. */
  metadata: string
  filename?: string
  /** Fileshare-Expires-In: the file expires this many seconds after the upload completes. */
  fileLifetimeSeconds?: number
}

export interface Chunk {
  /** The client's Upload-Offset. */
  offset: number
  source: Readable
  /** Upload-Length sent with this chunk (a deferred length being declared). */
  length?: number
  /** The body's Content-Length when it has one: a chunk that would pass the length is refused before it is read. */
  contentLength?: number
  checksum?: { algorithm: ChecksumAlgorithm; digest: Buffer }
  /** Called once every check passed, right before the bytes are read (HTTP sends 100 Continue there). */
  beforeRead?: () => void
}

export interface ChunkResult {
  upload: ResumableUpload
  /** Bytes this chunk added. */
  received: number
  /** Whether this chunk declared the upload's length (a deferred one, until now unknown). */
  declared: boolean
}

function present(row: UploadRow, file: FileRow | null = null): ResumableUpload {
  return {
    id: row.id,
    length: row.length,
    offset: row.upload_offset,
    metadata: row.metadata,
    expiresAt: row.expires_at,
    file,
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Resumable uploads (tus): an upload is created, receives its bytes over any number of requests
 * on any instance, and completes into a file exactly like a one-request upload (same row, same
 * sha256 of the whole file, same durability). Knows no HTTP.
 *
 * One request writes to an upload at a time: it holds a lease in the upload's row, renewed while
 * it streams, and every commit is conditional on it (fencing), so a writer that lost its lease
 * can no longer change the upload.
 *
 * The SHA-256 of the whole file is computed with node:crypto as the bytes arrive, in the process
 * that writes them, and kept in that process's memory between PATCHes (UploadHashes: a copy taken
 * at each durable commit, so it matches the committed bytes exactly, whatever happens to the rest
 * of the request). node:crypto cannot save its state in the row, as hash-wasm did, but hashes about
 * six times faster (1.65 GiB/s against 280 MiB/s of CPU here). A PATCH whose process does not hold the hash at the upload's offset (the
 * previous PATCH went to another instance, a restart, an entry evicted, a row of the version that
 * saved hash-wasm states in hash_state) does not hash; such an upload is hashed once from the store
 * at completion, before its file row is written. Rows keep an empty hash_state.
 */
export class ResumableUploadService {
  private readonly timing: ResumableUploadTiming

  constructor(
    private readonly uploads: UploadsRepository,
    private readonly accounts: AccountsRepository,
    private readonly files: FilesRepository,
    private readonly store: ResumableBlobStore & Pick<BlobStore, 'get'>,
    timing: Pick<ResumableUploadTiming, 'expiryMs'> & Partial<ResumableUploadTiming>,
    private readonly onBackgroundError: (error: unknown) => void = () => {},
    private readonly now: () => number = Date.now,
    private readonly events: UploadEvents = NO_UPLOAD_EVENTS,
    private readonly trail: AuditTrail = new AuditTrail({ auditIp: 'truncated' }, now),
    /** The upload requests guests' uploads go through (absent: no guest uploads, as in some tests). */
    private readonly requests?: UploadRequestsRepository,
    private readonly scan: ScanPolicy = SCANNING_OFF,
    private readonly hashes: UploadHashes = new UploadHashes(),
  ) {
    this.timing = { ...DEFAULT_TIMING, ...timing }
  }

  /** Creates an empty upload, taking one of the day's upload slots (given back if it never completes). */
  async create(owner: Owner, input: NewUpload): Promise<ResumableUpload> {
    const maxFileSize = owner.limits.maxFileSize
    const request = owner.uploadRequest
    // A guest's upload reserves its length of the request's room at once: it must say it.
    if (request && input.length === undefined) {
      throw new InvalidRequestError('An upload through an upload request must declare its Upload-Length (no deferred length).')
    }
    if (input.length !== undefined && input.length > maxFileSize) throw new FileTooLargeError(maxFileSize)
    if (input.length !== undefined) this.scan.checkSize(input.length)
    const now = this.now()
    const { dailyUploads } = owner.limits
    // Asked first, so that an account past its limit costs the store nothing; the slot itself is
    // taken with the upload's row.
    if (!(await this.accounts.hasUploadSlot(owner.accountId, utcDay(now), dailyUploads))) {
      throw new DailyUploadLimitExceededError(dailyUploads)
    }
    let created: { key: string; state: string } | undefined
    let row: UploadRow
    try {
      created = await this.store.createResumable()
      const inserted = await this.uploads.insertTakingUploadSlot(
        {
          id: randomToken(16),
          account_id: owner.accountId,
          length: input.length ?? null,
          // A deferred length may grow to the account's max_file_size, or, where scanning is required, what can be scanned.
          max_length: input.length ?? this.scan.uploadLimit(maxFileSize).maxBytes,
          metadata: input.metadata,
          filename: sanitizeFilename(input.filename),
          storage_key: created.key,
          store_state: created.state,
          hash_state: '',
          slot_day: utcDay(now),
          status: 'open',
          file_id: null,
          free_requests: FREE_REQUESTS_AT_CREATION,
          created_at: now,
          expires_at: now + this.timing.expiryMs,
          lease_token: null,
          lease_expires_at: null,
          // A guest's files live as their request says, whatever the guest asks.
          file_expires_in: request ? request.fileExpiresIn : (input.fileLifetimeSeconds ?? null),
          upload_request_id: request?.id ?? null,
        },
        dailyUploads,
        // A known length is reserved whole; a deferred one grows with its chunks (append).
        { reserveBytes: input.length ?? 0, quota: owner.limits.maxStorage ?? null },
        now,
      )
      if (inserted === 'daily') throw new DailyUploadLimitExceededError(dailyUploads)
      if (inserted === 'quota') throw new StorageQuotaExceededError(owner.limits.maxStorage ?? 0)
      if (inserted === 'request') throw await this.noRoom(request!.id, input.length ?? 0, now)
      row = inserted
    } catch (error) {
      if (created) await this.store.abortResumable(created.state).catch(this.onBackgroundError)
      throw error
    }
    // Nothing to wait for: a zero-length upload is a file at once (or, should that fail, at its first HEAD).
    return input.length === 0 ? this.status(owner.accountId, row.id, owner.actor) : present(row)
  }

  /** Why a guest's upload found no room: the request no longer takes files, or this one does not fit. */
  private async noRoom(requestId: number, length: number, now: number): Promise<Error> {
    const request = await this.requests?.findById(requestId)
    if (!request || request.closed_at !== null || request.expires_at <= now) return new UploadRequestUnavailableError()
    if (request.max_files !== null && request.files_received + request.files_reserved >= request.max_files) {
      return new UploadRequestFullError(
        `This upload request takes ${request.max_files} files, and all of them are received or being sent; no more can start.`,
      )
    }
    const left = Math.max(0, (request.max_total_size ?? 0) - request.bytes_received - request.bytes_reserved)
    return new UploadRequestFullError(`This file (${length} bytes) is larger than the ${left} bytes this upload request has room for now.`)
  }

  /**
   * Where the upload stands. An upload that holds all its bytes but has no file yet (its completion
   * failed half-way) is completed here: clients take a HEAD at the full length for success.
   */
  async status(accountId: number, id: string, actor: Actor = OPERATOR_ACTOR): Promise<ResumableUpload> {
    const row = await this.findOwned(accountId, id, actor)
    if (row.status === 'complete') return present(row, await this.fileOf(row))
    if (row.length !== null && row.upload_offset === row.length) {
      return this.withLease(
        row,
        async (token, current) => {
          const file = await this.complete(current, token, actor)
          return present({ ...current, status: 'complete' }, file)
        },
        async (completed) => present(completed, await this.fileOf(completed)),
      )
    }
    return present(row)
  }

  /**
   * Spends one of the upload's free requests when `id` is an upload the account owns; false when
   * it is not (the request is then counted like any other).
   */
  async takeFreeRequest(accountId: number, id: string): Promise<boolean> {
    const row = await this.uploads.findById(id)
    if (!row || row.account_id !== accountId) return false
    return this.uploads.spendFreeRequest(id)
  }

  /** Appends one chunk at the client's offset; completes the upload when it reaches its length. */
  async append(owner: Owner, id: string, chunk: Chunk): Promise<ChunkResult> {
    // A chunk for an upload that is already complete: the retry of a completing PATCH whose answer
    // got lost (the same chunk, ending where the upload does), or an empty PATCH at its length.
    const alreadyComplete = async (completed: UploadRow): Promise<ChunkResult> => {
      const bytes = chunk.contentLength ?? 0
      const repeatsCompletingChunk = bytes > 0 && chunk.offset + bytes === completed.upload_offset
      if (!repeatsCompletingChunk) {
        this.checkOffset(completed, chunk.offset)
        if (bytes > 0) throw new UploadLengthExceededError(completed.upload_offset)
      }
      return { upload: present(completed, await this.fileOf(completed)), received: 0, declared: false }
    }
    const first = await this.findOwned(owner.accountId, id, owner.actor)
    if (first.status === 'complete') return alreadyComplete(first)
    // Checked before waiting for the lease too: a client that is simply wrong hears so at once.
    this.checkOffset(first, chunk.offset)
    return this.withLease(
      first,
      async (token, row, holdLeaseFor) => {
        this.checkOffset(row, chunk.offset)
        const declared = chunk.length !== undefined && row.length === null
        if (chunk.length !== undefined) row = await this.declareLength(row, token, chunk.length)
        const limit = row.max_length
        if (chunk.contentLength !== undefined && row.upload_offset + chunk.contentLength > limit) throw await this.overLimit(row, token)
        // The storage quota: a deferred length reserves what this chunk may bring (its declared
        // size, or up to max_length when it declares none), and gives the unused rest back after.
        const reserveTo = row.length ?? Math.min(limit, row.upload_offset + (chunk.contentLength ?? limit))
        const quota = owner.limits.maxStorage ?? null
        if (!(await this.uploads.reserveUpTo(row, reserveTo, quota, this.now() + this.timing.expiryMs))) {
          throw new StorageQuotaExceededError(quota ?? 0)
        }
        // The row as the last commit left it: completion starts from its store state.
        let updated: UploadRow
        try {
          updated = await this.stream(row, token, this.hashes.resume(row.id, row.upload_offset), chunk)
        } catch (error) {
          if (error instanceof FileTooLargeError) throw await this.overLimit(row, token)
          // Its request stopped taking files while the chunk came: the upload ends here.
          if (error instanceof UploadRequestUnavailableError) throw await this.endForRequest(row, token)
          // What a deferred length reserved for bytes that never came goes back: before the answer,
          // unless the database may be what failed (it would hold the answer two more timeouts);
          // then behind it, and what it cannot give back, the next chunk or the upload's end does.
          if (row.length === null) {
            const shrinking = this.uploads
              .findById(row.id)
              .then((found) => this.uploads.shrinkReservation(row.id, found?.upload_offset ?? row.upload_offset))
              .catch(this.onBackgroundError)
            holdLeaseFor(shrinking)
            if (!(error instanceof ServiceUnavailableError)) await shrinking
          }
          throw error
        }
        const received = updated.upload_offset - row.upload_offset
        if (updated.length === null) await this.uploads.shrinkReservation(row.id, updated.upload_offset)
        if (updated.length !== null && updated.upload_offset === updated.length) {
          const file = await this.complete(updated, token, owner.actor ?? OPERATOR_ACTOR)
          return { upload: present({ ...updated, status: 'complete' }, file), received, declared }
        }
        const expiresAt = received > 0 ? this.now() + this.timing.expiryMs : row.expires_at
        return { upload: present({ ...updated, expires_at: expiresAt }), received, declared }
      },
      alreadyComplete,
    )
  }

  /** Terminates an unfinished upload: its bytes go and its daily slot comes back. A completed upload's file stays. */
  async terminate(accountId: number, id: string, actor?: Actor): Promise<void> {
    const row = await this.findOwned(accountId, id, actor)
    // The upload's row goes; its file is the account's like any other (DELETE /files/{id} removes it).
    const forgetCompleted = async (completed: UploadRow) => void (await this.uploads.deleteCompleted(completed.id))
    if (row.status === 'complete') return forgetCompleted(row)
    await this.withLease(
      row,
      async (token, current) => {
        await this.store.abortResumable(current.store_state)
        await this.close(current, token, 'terminated')
      },
      forgetCompleted,
    )
  }

  /**
   * Ends the uploads whose expiry passed: their bytes go, their slot comes back (the same UTC day
   * only), and a tombstone answers 410 for ENDED_UPLOAD_RETENTION_MS. Uploads being written to are
   * left for the next sweep. Returns how many expired.
   */
  async expireDue(signal?: AbortSignal): Promise<number> {
    const now = this.now()
    const expired = await this.endEach(await this.uploads.listExpired(now, 1000), signal, (row, token) =>
      this.close(
        row,
        token,
        'expired',
        this.trail.webhookOnly('upload.expired', (upload: UploadRow) => ({
          accountId: upload.account_id,
          data: { upload_id: upload.id, filename: upload.filename, offset: upload.upload_offset, length: upload.length },
        })),
      ),
    )
    await this.uploads.deleteEndedBefore(now - ENDED_UPLOAD_RETENTION_MS)
    await this.endOrphaned(signal)
    return expired
  }

  /**
   * Ends the guests' uploads whose request no longer takes files (closed, expired, deleted): their
   * bytes go, and the holder's daily slot, storage and the request's room come back. An upload being
   * written to is ended by its own writer (stream's heartbeat), or by the next sweep.
   */
  async endOrphaned(signal?: AbortSignal, requestId?: number): Promise<number> {
    const ids = await this.uploads.listOrphanedByRequests(this.now(), 1000, requestId)
    return this.endEach(ids, signal, (row, token) => this.close(row, token, 'terminated'))
  }

  /**
   * Ends each upload of `ids` that no request is writing to: takes its lease, drops its bytes and
   * closes it (`close`). An upload held by a writer is left for the next sweep. How many ended.
   */
  private async endEach(
    ids: readonly string[],
    signal: AbortSignal | undefined,
    close: (row: UploadRow, token: string) => Promise<boolean>,
  ): Promise<number> {
    let ended = 0
    for (const id of ids) {
      if (signal?.aborted) break
      const token = randomToken(16)
      if (!(await this.uploads.acquireLease(id, token, this.now(), this.timing.leaseMs))) continue
      const row = await this.uploads.findById(id)
      if (!row || row.lease_token !== token) continue
      try {
        await this.store.abortResumable(row.store_state)
        if (await close(row, token)) ended++
      } catch (error) {
        await this.uploads.releaseLease(id, token)
        this.onBackgroundError(error)
      }
    }
    return ended
  }

  /** Ends a guest's upload whose request stopped taking files, under the caller's lease: the error to answer. */
  private async endForRequest(row: UploadRow, token: string): Promise<Error> {
    await this.store.abortResumable(row.store_state).catch(this.onBackgroundError)
    await this.close(row, token, 'terminated').catch(this.onBackgroundError)
    return new UploadRequestUnavailableError()
  }

  /** Which of `storageKeys` belong to open uploads: garbage collection leaves those alone. */
  openStorageKeys(storageKeys: readonly string[]): Promise<Set<string>> {
    return this.uploads.openStorageKeys(storageKeys)
  }

  /** The account's upload; for a guest (`actor` of type guest), only an upload made through the guest's request. */
  private async findOwned(accountId: number, id: string, actor?: Actor): Promise<UploadRow> {
    const row = await this.uploads.findById(id)
    const guestOf = actor?.type === 'guest' ? actor.id : undefined
    if (!row || row.account_id !== accountId || (guestOf !== undefined && row.upload_request_id !== guestOf)) {
      throw new NotFoundError(`No upload with id ${id}.`)
    }
    // Upload-Expires is kept to the minute it names, whenever the garbage collector next removes the bytes.
    if (row.status === 'expired' || (row.status === 'open' && row.expires_at <= this.now())) throw new UploadExpiredError()
    return row
  }

  private checkOffset(row: UploadRow, offset: number): void {
    if (row.status === 'complete' && offset === row.upload_offset) return
    if (offset !== row.upload_offset) throw new UploadOffsetMismatchError(row.upload_offset, offset)
  }

  private async fileOf(row: UploadRow): Promise<FileRow | null> {
    return row.file_id === null ? null : ((await this.files.findOwned(row.account_id, row.file_id, this.now())) ?? null)
  }

  /** Ends an open upload under the caller's lease (UploadsRepository.close); its kept hash goes with it. */
  private async close<Closed extends UploadRow>(
    row: Closed,
    token: string,
    status: 'terminated' | 'expired',
    event?: PendingEvent<Closed>,
  ): Promise<boolean> {
    this.hashes.forget(row.id)
    return this.uploads.close(row, token, status, event)
  }

  /**
   * Runs `work` holding the lease of an open upload, with the row as read under the lease. A
   * writer still holding it is asked to hand over and waited for (takeoverWaitMs), then 423. An
   * upload that another request completed meanwhile goes to `whenComplete`.
   */
  private async withLease<T>(
    row: UploadRow,
    work: (token: string, current: UploadRow, holdLeaseFor: (pending: Promise<unknown>) => void) => Promise<T>,
    whenComplete: (completed: UploadRow) => Promise<T>,
  ): Promise<T> {
    const token = randomToken(16)
    const deadline = Date.now() + this.timing.takeoverWaitMs
    let asked = false
    while (!(await this.uploads.acquireLease(row.id, token, this.now(), this.timing.leaseMs))) {
      const current = await this.uploads.findById(row.id)
      if (!current) throw new NotFoundError(`No upload with id ${row.id}.`)
      if (current.status === 'expired') throw new UploadExpiredError()
      if (current.status === 'complete') return whenComplete(current)
      if (Date.now() >= deadline) throw new UploadLockedError()
      if (!asked) {
        await this.uploads.requestRelease(row.id)
        asked = true
      }
      await sleep(Math.min(100, this.timing.takeoverWaitMs))
    }
    const release = () => this.uploads.releaseLease(row.id, token).catch(this.onBackgroundError)
    // Work the upload's row still waits for behind an answer (a reservation given back): the lease
    // is released only after it, so the next chunk cannot reserve before a late give-back undoes it.
    let held: Promise<unknown> = Promise.resolve()
    const holdLeaseFor = (pending: Promise<unknown>) => {
      held = Promise.allSettled([held, pending])
    }
    let result: T
    try {
      const current = await this.uploads.findById(row.id)
      if (!current || current.lease_token !== token) throw new UploadLockedError()
      if (current.expires_at <= this.now()) throw new UploadExpiredError()
      result = await work(token, current, holdLeaseFor)
    } catch (error) {
      // The database that failed the work would hold the answer one more timeout for the release:
      // the lease lapses by itself (leaseMs), so the client hears now and the release goes on behind.
      const releasing = held.then(release)
      if (!(error instanceof ServiceUnavailableError)) await releasing
      throw error
    }
    await release()
    return result
  }

  /** A deferred length is held to max_file_size as it was when the upload was created (its max_length). */
  private async declareLength(row: UploadRow, token: string, length: number): Promise<UploadRow> {
    if (row.length !== null) {
      if (row.length === length) return row
      throw new InvalidRequestError(`Upload-Length is already ${row.length}; it cannot change.`)
    }
    if (length < row.upload_offset)
      throw new InvalidRequestError(`Upload-Length ${length} is below the ${row.upload_offset} bytes received.`)
    if (length > row.max_length) throw await this.overLimit(row, token)
    this.scan.checkSize(length)
    if (!(await this.uploads.declareLength(row.id, token, length))) throw new UploadLockedError()
    return { ...row, length, max_length: length }
  }

  /**
   * The error for bytes past the upload's limit. A declared length is the client's promise: 413
   * upload_length_exceeded, and the upload stays as it was. A deferred length that would pass
   * max_file_size ends the upload: what was received is deleted and the slot comes back.
   */
  private async overLimit(row: UploadRow, token: string): Promise<Error> {
    if (row.length !== null) return new UploadLengthExceededError(row.length)
    await this.store.abortResumable(row.store_state).catch(this.onBackgroundError)
    await this.close(row, token, 'terminated')
    // Its limit was what can be scanned (required mode): that is the refusal to give.
    if (this.scan.mode === 'required' && row.max_length === this.scan.maxBytes) return new FileNotScannableError(this.scan.maxBytes)
    return new FileTooLargeError(row.max_length)
  }

  /**
   * Streams the chunk into the store under the lease, committing the offset and the store's state
   * together at each durable point, and feeding `hash` (the SHA-256 of the bytes before this chunk,
   * when this process has it), whose copy is kept at each commit. Resolves with the row as the last commit left it. A heartbeat
   * renews the lease; when another request asks for the upload, the chunk is ended where it is (what
   * arrived is committed) and UploadLockedError tells this request's client to ask again.
   */
  private async stream(row: UploadRow, token: string, hash: Hash | undefined, chunk: Chunk): Promise<UploadRow> {
    const { leaseMs, heartbeatMs } = this.timing
    const checksum: Hash | undefined = chunk.checksum ? createHash(chunk.checksum.algorithm) : undefined
    let offset = row.upload_offset
    let handedOver = false
    // Real time, not the services' clock: this guards against a process that stalls.
    let leaseValidUntil = Date.now() + leaseMs
    // The request's bytes go through `feed`, which can be ended early (a hand-over) without
    // failing the store's append, and which refuses bytes once the lease may have passed to
    // another writer (a process stalled past its lease must not write into the new holder's bytes).
    const feed = new Transform({
      transform(data: Buffer, _encoding, callback) {
        if (Date.now() > leaseValidUntil) callback(new UploadLockedError())
        else callback(null, data)
      },
    })
    // The store attaches to `feed` only after its own first await: a client gone before then must
    // not make an 'error' that no one listens to (Node would end the process). The store still sees
    // the error, as `feed` is then destroyed with it.
    feed.on('error', () => {})
    const source = chunk.source
    chunk.beforeRead?.()
    source.pipe(feed)
    finished(source, (error) => {
      if (error && !handedOver) feed.destroy(error)
    })
    const handOver = () => {
      if (handedOver) return
      handedOver = true
      source.unpipe(feed)
      feed.end()
    }
    const requestId = row.upload_request_id
    const heartbeat = setInterval(() => {
      const renewedAt = Date.now()
      this.uploads
        .renewLease(row.id, token, this.now(), leaseMs)
        .then(async (lease) => {
          if (lease === 'held') leaseValidUntil = renewedAt + leaseMs
          else handOver()
          // A guest's chunk stops when its request does (closed or expired while it streams).
          if (requestId !== null && this.requests && !(await this.requests.takesFiles(requestId, this.now()))) {
            feed.destroy(new UploadRequestUnavailableError())
          }
        })
        .catch(this.onBackgroundError)
    }, heartbeatMs)
    try {
      await this.store.append(row.store_state, row.upload_offset, feed, {
        maxBytes: row.max_length,
        partialCommits: checksum === undefined,
        onData: (data) => {
          hash?.update(data)
          checksum?.update(data)
        },
        onCommit: async (commit) => {
          // A chunk cut short by a hand-over cannot match its checksum: that is a 423, not a corrupt chunk.
          if (checksum && !checksum.digest().equals(chunk.checksum!.digest)) {
            throw handedOver ? new UploadLockedError() : new ChecksumMismatchError(chunk.checksum!.algorithm)
          }
          const earned = Math.floor(commit.offset / BYTES_PER_FREE_REQUEST) - Math.floor(offset / BYTES_PER_FREE_REQUEST)
          const ok = await this.uploads.commit(row.id, token, offset, {
            upload_offset: commit.offset,
            store_state: commit.state,
            // A state of the previous version (hash-wasm) would no longer match: it goes.
            hash_state: '',
            expires_at: this.now() + this.timing.expiryMs,
            free_requests_earned: Math.max(0, earned),
            free_requests_cap: Math.ceil(row.max_length / BYTES_PER_FREE_REQUEST) + FREE_REQUESTS_AT_CREATION,
          })
          if (!ok) throw new UploadLockedError()
          if (hash) this.hashes.keep(row.id, commit.offset, hash)
          this.events.bytesKept(commit.offset - offset)
          offset = commit.offset
          row = { ...row, store_state: commit.state, upload_offset: commit.offset }
        },
        reservePartNumber: this.partNumbers(row.id, token),
      })
    } finally {
      clearInterval(heartbeat)
      source.unpipe(feed)
    }
    if (handedOver && (row.length === null || offset < row.length)) throw new UploadLockedError()
    return row
  }

  /** The webhook messages of a guest's file: it arrived, and, when it filled its request, that. */
  private requestEvents(): PendingEvent<ReceivedFile>[] {
    const counts = (request: UploadRequestRow) => ({
      request_id: request.id,
      label: request.label,
      files_received: request.files_received,
      bytes_received: request.bytes_received,
    })
    const filled = this.trail.webhookOnly('upload_request.full', ({ request }: ReceivedFile) => ({
      accountId: request.account_id,
      data: counts(request),
    }))
    return [
      this.trail.webhookOnly('upload_request.file_received', ({ request, file }) => ({
        accountId: request.account_id,
        data: { ...counts(request), file: this.trail.fileData(file) },
      })),
      (received) => (isFull(received.request) ? filled(received) : {}),
    ]
  }

  /** S3 part numbers from the upload's fenced counter: a writer that lost its lease gets none. */
  private partNumbers(id: string, token: string): () => Promise<number> {
    return async () => {
      const number = await this.uploads.reservePartNumber(id, token)
      if (number === undefined) throw new UploadLockedError()
      return number
    }
  }

  /**
   * Turns the upload's bytes into its file: the store completes the blob (idempotent), then one
   * transaction writes the file row, the account's counters and the upload's status. A failure
   * leaves the upload open at its full length (and its kept hash where it was); the next HEAD or
   * PATCH completes it.
   */
  private async complete(row: UploadRow, token: string, actor: Actor): Promise<FileRow> {
    const now = this.now()
    let scan: ReturnType<ScanPolicy['newFile']>
    try {
      scan = this.scan.newFile(row.upload_offset, now)
    } catch (error) {
      // Too large to scan where scanning is required (a deferred length that grew past it): it ends here.
      await this.store.abortResumable(row.store_state).catch(this.onBackgroundError)
      await this.close(row, token, 'terminated').catch(this.onBackgroundError)
      throw error
    }
    const { key, size } = await this.store.completeResumable(row.store_state, { reservePartNumber: this.partNumbers(row.id, token) })
    let sha256 = this.hashes.digest(row.id, size)
    if (sha256 === undefined) {
      const hash = await this.hashStored(row, token, key, size)
      // Kept like a writer's: should the rest of the completion fail, its retry does not read the file again.
      this.hashes.keep(row.id, size, hash)
      sha256 = hash.digest('hex')
    }
    const requestId = row.upload_request_id
    const file = await this.uploads.complete(
      row.id,
      token,
      {
        account_id: row.account_id,
        token: randomToken(24),
        filename: row.filename,
        size,
        content_type: mime.lookup(row.filename) || 'application/octet-stream',
        sha256,
        storage_key: key,
        created_at: now,
        expires_at: row.file_expires_in === null ? null : now + row.file_expires_in * 1000,
        ...sourceColumns(requestId === null ? actor : { type: 'guest', id: requestId }),
        ...scan,
      },
      this.trail.pending('file.uploaded', actor, (stored: FileRow) => fileEvent(stored, { via: 'resumable' })),
      requestId === null ? undefined : { id: requestId, reservedBytes: row.length ?? 0, now, events: this.requestEvents() },
    )
    // Its request was closed or expired before the last bytes: no file; the blob is the collector's.
    if (file === 'request_closed') throw await this.endForRequest(row, token)
    if (!file) throw new UploadLockedError()
    this.hashes.forget(row.id)
    this.events.fileStored('resumable')
    return file
  }

  /**
   * The SHA-256 of a completed blob read back from the store, for an upload whose hash this process
   * does not hold. The lease is renewed meanwhile (a large file takes seconds); losing it stops the read.
   */
  private async hashStored(row: UploadRow, token: string, key: string, size: number): Promise<Hash> {
    const hash = createHash('sha256')
    const source = await this.store.get(key)
    const heartbeat = setInterval(() => {
      this.uploads
        .renewLease(row.id, token, this.now(), this.timing.leaseMs)
        .then((lease) => {
          if (lease === 'lost') source.destroy(new UploadLockedError())
        })
        .catch(this.onBackgroundError)
    }, this.timing.heartbeatMs)
    try {
      let read = 0
      for await (const data of source) {
        hash.update(data as Buffer)
        read += (data as Buffer).length
      }
      // A store whose stream ended short without an error must not leave the hash of a prefix.
      if (read !== size) throw new Error(`The stored blob ${key} gave ${read} bytes, not its ${size}: its SHA-256 is not recorded.`)
    } finally {
      clearInterval(heartbeat)
      source.destroy()
    }
    return hash
  }
}

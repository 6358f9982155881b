import type { Readable } from 'node:stream'
import mime from 'mime-types'
import {
  DailyUploadLimitExceededError,
  FileNotScannableError,
  FileTooLargeError,
  NotFoundError,
  ServiceUnavailableError,
} from '../errors.js'
import { expiryFromInput, type ExpiryInput } from './expiry.js'
import type { AccountsRepository } from '../db/repositories/accounts-repository.js'
import { isFiltered, NEWEST_FIRST, type FileListing, type FilesRepository } from '../db/repositories/files-repository.js'
import type { FileRow, ListedFile, NewFileRow } from '../db/schema.js'
import type { BlobStore, StoredBlob } from '../storage/blob-store.js'
import { utcDay } from '../lib/utc-day.js'
import type { AccountLimits } from './account-limits.js'
import { sanitizeFilename } from '../lib/filename.js'
import { randomToken } from '../lib/random-token.js'
import { NO_UPLOAD_EVENTS, type UploadEvents } from './upload-events.js'
import type { StorageQuota, UploadReservation } from './storage-quota.js'
import { AuditTrail, OPERATOR_ACTOR, type Actor, type EventContent } from './audit.js'
import { SCANNING_OFF, type ScanPolicy } from './scan-policy.js'
import type { ScansRepository } from '../db/repositories/scans-repository.js'

/** The file's `source` from who uploads it: a dashboard session, a guest of an upload request, else the API. */
export function sourceColumns(actor: Actor | undefined): Pick<NewFileRow, 'source_type' | 'upload_request_id'> {
  if (actor?.type === 'session') return { source_type: 'dashboard', upload_request_id: null }
  if (actor?.type === 'guest') return { source_type: 'upload_request', upload_request_id: actor.id }
  return { source_type: 'api', upload_request_id: null }
}

export interface Owner {
  accountId: number
  /** A guest's upload: the request it goes through (its room is reserved at creation). */
  uploadRequest?: { id: number; fileExpiresIn: number | null }
  /** Who uploads, for the audit log; absent: the operator (the CLI's and tests' own uploads). */
  actor?: Actor
  /** Without maxStorage, the upload is held to no storage quota (the CLI's and tests' own uploads). */
  limits: Pick<AccountLimits, 'maxFileSize' | 'dailyUploads'> & Partial<Pick<AccountLimits, 'maxStorage'>>
}

/**
 * An upload whose bytes are stored, but that no one can see yet, and that holds no daily slot; its
 * bytes are reserved against the account's storage quota until it is recorded or dropped.
 */
export interface StagedUpload {
  owner: Owner
  blob: StoredBlob
  filename: string
  reservation: UploadReservation
}

/** What a file's events say about it: its name and size, never its link token or storage key. */
export function fileEvent(file: FileRow, extra: Record<string, unknown> = {}): EventContent {
  return {
    accountId: file.account_id,
    target: { type: 'file', id: file.id },
    details: { filename: file.filename, size: file.size, ...extra },
    subject: { file },
  }
}

export {
  asciiLowerCase,
  FILE_SORTS,
  FILE_STATES,
  isFiltered,
  NEWEST_FIRST,
  SORT_ORDERS,
  type FileListing,
  type FileSort,
  type FileState,
  type SortOrder,
} from '../db/repositories/files-repository.js'

/**
 * Whether `before_id` can page the listing: only by upload date, where it walks the ids, which
 * never change and keep their place when the file they name is deleted. The other sort keys
 * change (a rename, a download) and a deleted file's place in them is lost with it.
 */
export function pagesByFileId(listing: FileListing): boolean {
  return listing.sort === 'upload_date'
}

/** Up to this many matches, a search's pages are taken among its matches, found first (FileService.listed). */
export const FEW_MATCHES = 10_000

export interface FilePage {
  files: ListedFile[]
  total: number
  /** The last file's id when more files follow it, else null. */
  nextBeforeId: number | null
}

export class FileService {
  constructor(
    private readonly files: FilesRepository,
    private readonly accounts: AccountsRepository,
    private readonly store: BlobStore,
    private readonly onBackgroundError: (error: unknown) => void = () => {},
    private readonly now: () => number = Date.now,
    private readonly events: UploadEvents = NO_UPLOAD_EVENTS,
    private readonly quota?: StorageQuota,
    private readonly trail: AuditTrail = new AuditTrail({ auditIp: 'truncated' }, now),
    private readonly scan: ScanPolicy = SCANNING_OFF,
    /** Where files found infected are remembered (absent: no scanning, as in some tests). */
    private readonly scans?: Pick<ScansRepository, 'findInfected' | 'deleteInfected'>,
  ) {}

  /**
   * Reserves an upload's room in the account's storage quota before its body is read: its
   * declared size at once (403 storage_quota_exceeded if even its least possible file size cannot
   * fit), else as its bytes stream.
   */
  reserve(owner: Owner, declared?: { upTo: number; atLeast: number }): Promise<UploadReservation> {
    if (!this.quota) throw new Error('FileService: no storage quota to reserve in')
    return this.quota.open(owner.accountId, owner.limits.maxStorage ?? null, declared)
  }

  /**
   * Streams the bytes to storage, once it is clear that a daily upload slot is left (none is
   * taken yet: commit() takes it with the file's row). On any failure nothing is stored. The
   * file becomes visible only through commit().
   */
  async stage(
    owner: Owner,
    source: Readable,
    clientFilename: string | undefined,
    now = this.now(),
    reservation?: UploadReservation,
  ): Promise<StagedUpload> {
    const held = reservation ?? (await this.reserve(owner))
    try {
      if (!(await this.accounts.hasUploadSlot(owner.accountId, utcDay(now), owner.limits.dailyUploads))) {
        source.resume()
        throw new DailyUploadLimitExceededError(owner.limits.dailyUploads)
      }
      // Where scanning is required, no more is stored than can be scanned.
      const { maxBytes, scanLimited } = this.scan.uploadLimit(owner.limits.maxFileSize)
      let blob: StoredBlob
      try {
        blob = await this.store.put(held.meter(source), { maxBytes })
      } catch (error) {
        if (scanLimited && error instanceof FileTooLargeError) throw new FileNotScannableError(this.scan.maxBytes)
        throw error
      }
      return { owner, blob, filename: sanitizeFilename(clientFilename), reservation: held }
    } catch (error) {
      await this.giveBack(held, error)
      throw error
    }
  }

  /**
   * Gives a failed upload's reservation back: before the answer, unless the failure was a backend
   * that stopped answering (the database may be that backend: the release would hold the answer
   * one more timeout). Then it goes on behind the answer; if it fails too, the reservation lapses
   * when its lease does (RESERVATION_LEASE_MS) and the collector gives it back.
   */
  private giveBack(reservation: UploadReservation, cause: unknown): Promise<void> {
    const releasing = reservation.release().catch(this.onBackgroundError)
    return cause instanceof ServiceUnavailableError ? Promise.resolve() : releasing
  }

  /**
   * Records the staged upload, taking a daily upload slot in the same transaction: from here on it
   * is listed and its link works. When uploads race for the last slot, the first to be recorded
   * takes it; the others are refused here and keep nothing. `lifetimeSeconds`: the file expires
   * that long after it is recorded.
   */
  async commit(
    staged: StagedUpload,
    { lifetimeSeconds, now = this.now() }: { lifetimeSeconds?: number | undefined; now?: number } = {},
  ): Promise<FileRow> {
    const { dailyUploads } = staged.owner.limits
    let file: FileRow
    try {
      const inserted = await this.files.insertTakingUploadSlot(
        {
          account_id: staged.owner.accountId,
          token: randomToken(24),
          filename: staged.filename,
          size: staged.blob.size,
          content_type: mime.lookup(staged.filename) || 'application/octet-stream',
          sha256: staged.blob.sha256,
          storage_key: staged.blob.key,
          created_at: now,
          expires_at: lifetimeSeconds === undefined ? null : now + lifetimeSeconds * 1000,
          ...sourceColumns(staged.owner.actor),
          // Refused here (403 file_not_scannable) when it is too large to scan and scanning is required.
          ...this.scan.newFile(staged.blob.size, now),
        },
        utcDay(now),
        dailyUploads,
        staged.reservation.id,
        this.trail.pending('file.uploaded', staged.owner.actor ?? OPERATOR_ACTOR, (row: FileRow) => fileEvent(row, { via: 'multipart' })),
      )
      if (!inserted) throw new DailyUploadLimitExceededError(dailyUploads)
      staged.reservation.settle()
      file = inserted
    } catch (error) {
      // A database that stopped answering may still apply the insert once it is back (the chaos
      // soak saw a row left without its bytes): the bytes stay, and the collector removes them
      // after its grace period only if no row names them.
      if (error instanceof ServiceUnavailableError) await this.giveBack(staged.reservation, error)
      else await this.discard(staged)
      throw error
    }
    this.events.bytesKept(file.size)
    this.events.fileStored('multipart')
    return file
  }

  /** Drops a staged upload: its bytes and its reservation go (it holds no slot). */
  async discard(staged: StagedUpload): Promise<void> {
    await staged.reservation.release().catch(this.onBackgroundError)
    await this.store.delete(staged.blob.key).catch(this.onBackgroundError)
  }

  async list(accountId: number, page: number, limit: number, listing: FileListing = NEWEST_FIRST): Promise<FilePage> {
    const now = this.now()
    // Files past their expiry are gone at once, before the collector removes them and their counts.
    const { total, among } = await this.listed(accountId, now, listing)
    const offset = (page - 1) * limit
    if (offset >= total) return { files: [], total, nextBeforeId: null }
    const withNext = (files: ListedFile[]) => ({
      files,
      total,
      nextBeforeId: pagesByFileId(listing) && offset + files.length < total && files.length > 0 ? files[files.length - 1]!.id : null,
    })
    // OFFSET steps through the index one entry at a time, so a deep page nearer the other end is
    // read from that end and reversed: the last page of a million files costs what the first does.
    const offsetFromOtherEnd = Math.max(0, total - offset - limit)
    if (offsetFromOtherEnd < offset) {
      const files = await this.files.listPage(accountId, offsetFromOtherEnd, total - offset - offsetFromOtherEnd, now, true, listing, among)
      return withNext(files.reverse())
    }
    return withNext(await this.files.listPage(accountId, offset, limit, now, false, listing, among))
  }

  /**
   * The files past `beforeId` in the listing's order (by upload date only, see pagesByFileId):
   * below it, newest first, or above it, oldest first. A page that stays where it is whatever is
   * added or deleted meanwhile. One more row is read to tell whether more follow.
   */
  async listBefore(accountId: number, beforeId: number, limit: number, listing: FileListing = NEWEST_FIRST): Promise<FilePage> {
    if (!pagesByFileId(listing)) throw new Error(`FileService.listBefore: sort ${listing.sort} is not paged by file id`)
    const now = this.now()
    const page = (among?: readonly number[]) => this.files.listBeforeId(accountId, beforeId, limit + 1, now, listing.order, listing, among)
    // A search's or filter's matches are looked for first (listed); without one, the page and the total at once.
    const [rows, { total }] = !isFiltered(listing)
      ? await Promise.all([page(), this.listed(accountId, now, listing)])
      : await this.listed(accountId, now, listing).then(async (found) => [await page(found.among), found] as const)
    const files = rows.slice(0, limit)
    return { files, total, nextBeforeId: rows.length > limit ? files[files.length - 1]!.id : null }
  }

  /**
   * How many files the listing shows: the account's live files, or those its search and filters
   * match. Those matches are looked for first, up to FEW_MATCHES of them: when that finds them all,
   * their ids (`among`) are where its pages are taken from (FilesRepository.listPage), and their
   * number is the total; else they are counted, and pages walk the sort's index.
   */
  private async listed(accountId: number, now: number, listing: FileListing): Promise<{ total: number; among?: readonly number[] }> {
    const total = await this.liveTotal(accountId, now)
    if (!isFiltered(listing)) return { total }
    if (total === 0) return { total, among: [] }
    const among = await this.files.matchingIds(accountId, now, listing, FEW_MATCHES + 1)
    if (among.length <= FEW_MATCHES) return { total: among.length, among }
    return { total: await this.files.countMatching(accountId, now, listing) }
  }

  /** The account's files, less those past their expiry that the collector has not removed yet. */
  private async liveTotal(accountId: number, now: number): Promise<number> {
    const found = await this.accounts.findWithExpiredTotals(accountId, now)
    if (!found) throw new NotFoundError()
    return found.account.total_files - found.expired.files
  }

  async get(accountId: number, fileId: number): Promise<FileRow> {
    const file = await this.files.findOwned(accountId, fileId, this.now())
    if (!file) throw new NotFoundError(`No file with id ${fileId}.`)
    return file
  }

  /**
   * The file as its owner reads it (GET /files/{id}): a live file, or one found infected, whose
   * row, bytes and links are gone but whose record stays with `scan.status` infected.
   */
  async describe(accountId: number, fileId: number): Promise<ListedFile> {
    const file = await this.files.findOwned(accountId, fileId, this.now())
    if (file) return file
    const infected = await this.scans?.findInfected(accountId, fileId)
    if (!infected) throw new NotFoundError(`No file with id ${fileId}.`)
    const { file_id: id, account_id: _account, ...rest } = infected
    return { ...rest, id, scan_status: 'infected' }
  }

  /** Renames the file, or sets or removes its expiry; no field: the file as it is. */
  async update(
    accountId: number,
    fileId: number,
    changes: ExpiryInput & { filename?: string },
    actor: Actor = OPERATOR_ACTOR,
  ): Promise<FileRow> {
    const now = this.now()
    const expiresAt = expiryFromInput(changes, now)
    const set = {
      ...(changes.filename === undefined ? {} : { filename: sanitizeFilename(changes.filename) }),
      ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
    }
    const file =
      Object.keys(set).length > 0
        ? await this.files.update(
            accountId,
            fileId,
            set,
            now,
            this.trail.pending('file.updated', actor, (row: FileRow) => fileEvent(row, { changed: Object.keys(set) })),
          )
        : await this.files.findOwned(accountId, fileId, now)
    if (!file) throw new NotFoundError(`No file with id ${fileId}.`)
    return file
  }

  /** The row goes first, so the link dies at once; the bytes follow (a failure leaves them to gc). */
  async delete(accountId: number, fileId: number, actor: Actor = OPERATOR_ACTOR): Promise<void> {
    const file = await this.files.deleteOwned(
      accountId,
      fileId,
      this.now(),
      this.trail.pending('file.deleted', actor, (row: FileRow) => fileEvent(row)),
    )
    if (!file) {
      // The record of a file found infected: its owner may dismiss it.
      if (await this.scans?.deleteInfected(accountId, fileId)) return
      throw new NotFoundError(`No file with id ${fileId}.`)
    }
    await this.store.delete(file.storage_key).catch(this.onBackgroundError)
  }
}

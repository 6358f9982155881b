import type { Readable } from 'node:stream'
import mime from 'mime-types'
import { DailyUploadLimitExceededError, NotFoundError } from '../errors.js'
import { expiryFromInput, type ExpiryInput } from './expiry.js'
import type { AccountsRepository } from '../db/repositories/accounts-repository.js'
import type { FilesRepository } from '../db/repositories/files-repository.js'
import type { FileRow, ListedFile } from '../db/schema.js'
import type { BlobStore, StoredBlob } from '../storage/blob-store.js'
import { utcDay } from '../lib/utc-day.js'
import type { AccountLimits } from './account-limits.js'
import { sanitizeFilename } from '../lib/filename.js'
import { randomToken } from '../lib/random-token.js'
import { NO_UPLOAD_EVENTS, type UploadEvents } from './upload-events.js'

export interface Owner {
  accountId: number
  limits: Pick<AccountLimits, 'maxFileSize' | 'dailyUploads'>
}

/** An upload whose bytes are stored, but that no one can see yet, and that holds no daily slot. */
export interface StagedUpload {
  owner: Owner
  blob: StoredBlob
  filename: string
}

export interface FilePage {
  files: ListedFile[]
  total: number
}

export class FileService {
  constructor(
    private readonly files: FilesRepository,
    private readonly accounts: AccountsRepository,
    private readonly store: BlobStore,
    private readonly onBackgroundError: (error: unknown) => void = () => {},
    private readonly now: () => number = Date.now,
    private readonly events: UploadEvents = NO_UPLOAD_EVENTS,
  ) {}

  /**
   * Streams the bytes to storage, once it is clear that a daily upload slot is left (none is
   * taken yet: commit() takes it with the file's row). On any failure nothing is stored. The
   * file becomes visible only through commit().
   */
  async stage(owner: Owner, source: Readable, clientFilename: string | undefined, now = this.now()): Promise<StagedUpload> {
    if (!(await this.accounts.hasUploadSlot(owner.accountId, utcDay(now), owner.limits.dailyUploads))) {
      source.resume()
      throw new DailyUploadLimitExceededError(owner.limits.dailyUploads)
    }
    const blob = await this.store.put(source, { maxBytes: owner.limits.maxFileSize })
    return { owner, blob, filename: sanitizeFilename(clientFilename) }
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
        },
        utcDay(now),
        dailyUploads,
      )
      if (!inserted) throw new DailyUploadLimitExceededError(dailyUploads)
      file = inserted
    } catch (error) {
      await this.discard(staged)
      throw error
    }
    this.events.bytesKept(file.size)
    this.events.fileStored('multipart')
    return file
  }

  /** Drops a staged upload: its bytes go (it holds no slot). */
  async discard(staged: StagedUpload): Promise<void> {
    await this.store.delete(staged.blob.key).catch(this.onBackgroundError)
  }

  async list(accountId: number, page: number, limit: number): Promise<FilePage> {
    const now = this.now()
    const account = await this.accounts.findById(accountId)
    if (!account) throw new NotFoundError()
    // Files past their expiry are gone at once, before the collector removes them and their counts.
    const expired = account.total_files > 0 ? await this.files.expiredTotals(accountId, now) : { files: 0 }
    const total = account.total_files - expired.files
    const offset = (page - 1) * limit
    if (offset >= total) return { files: [], total }
    // OFFSET steps through the index one entry at a time, so a deep page nearer the oldest end is
    // read from that end and reversed: the last page of a million files costs what the first does.
    const offsetFromOldest = Math.max(0, total - offset - limit)
    if (offsetFromOldest < offset) {
      const files = await this.files.listPage(accountId, offsetFromOldest, total - offset - offsetFromOldest, now, true)
      return { files: files.reverse(), total }
    }
    return { files: await this.files.listPage(accountId, offset, limit, now), total }
  }

  async get(accountId: number, fileId: number): Promise<FileRow> {
    const file = await this.files.findOwned(accountId, fileId, this.now())
    if (!file) throw new NotFoundError(`No file with id ${fileId}.`)
    return file
  }

  /** Renames the file, or sets or removes its expiry; no field: the file as it is. */
  async update(accountId: number, fileId: number, changes: ExpiryInput & { filename?: string }): Promise<FileRow> {
    const now = this.now()
    const expiresAt = expiryFromInput(changes, now)
    const set = {
      ...(changes.filename === undefined ? {} : { filename: sanitizeFilename(changes.filename) }),
      ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
    }
    const file =
      Object.keys(set).length > 0
        ? await this.files.update(accountId, fileId, set, now)
        : await this.files.findOwned(accountId, fileId, now)
    if (!file) throw new NotFoundError(`No file with id ${fileId}.`)
    return file
  }

  /** The row goes first, so the link dies at once; the bytes follow (a failure leaves them to gc). */
  async delete(accountId: number, fileId: number): Promise<void> {
    const file = await this.files.deleteOwned(accountId, fileId, this.now())
    if (!file) throw new NotFoundError(`No file with id ${fileId}.`)
    await this.store.delete(file.storage_key).catch(this.onBackgroundError)
  }
}

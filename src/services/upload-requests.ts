import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Config } from '../config.js'
import { InvalidParameterError, InvalidPasswordError, NotFoundError, RateLimitedError, UploadRequestUnavailableError } from '../errors.js'
import type { AccountsRepository } from '../db/repositories/accounts-repository.js'
import type { FilesRepository } from '../db/repositories/files-repository.js'
import type { UploadRequestsRepository } from '../db/repositories/upload-requests-repository.js'
import type { AccountRow, ListedFile, UploadRequestRow } from '../db/schema.js'
import { hashPassword, verifyPassword, type ScryptCost } from '../lib/passwords.js'
import { randomToken } from '../lib/random-token.js'
import type { PerKeyLimiter } from '../limits/per-key-limiter.js'
import { effectiveLimits, type AccountLimits } from './account-limits.js'
import type { Actor, AuditTrail, EventContent } from './audit.js'
import { checkExpiresIn, expiryFromInput, type ExpiryInput } from './expiry.js'
import { LINK_PASSWORD_MAX_LENGTH, LINK_PASSWORD_MIN_LENGTH } from './links.js'
import { uploadRequestRecord, uploadRequestStatus, type UploadRequestRecord } from './records.js'
import type { ResumableUploadService } from './resumable-uploads.js'
import { SCANNING_OFF, type ScanPolicy } from './scan-policy.js'

export const UPLOAD_REQUEST_LABEL_MAX_LENGTH = 200
export const UPLOAD_REQUEST_MESSAGE_MAX_LENGTH = 2_000
export const UPLOAD_REQUEST_MAX_FILES = 10_000
/** A guest grant (after the password) lasts this long: long enough for a large file, short enough to lose. */
export const GUEST_GRANT_LIFETIME_MS = 6 * 3_600_000
/** 32 random bytes: the guest link's token, 43 characters of base64url. */
const TOKEN_BYTES = 32
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/
/** Control characters but tab, line feed and carriage return, and the Unicode line and paragraph separators. */
const MESSAGE_FORBIDDEN = /(?![\t\n\r])[\p{Cc}\u2028\u2029]/u
const ONE_LINE_FORBIDDEN = /[\p{Cc}\u2028\u2029]/u

/** The fields of a request's create or update; on update, an absent field stays and `null` clears one that may be cleared. */
export interface UploadRequestInput extends ExpiryInput {
  label?: string
  message?: string | null
  max_files?: number | null
  max_file_size?: number | null
  max_total_size?: number | null
  password?: string | null
  file_expires_in?: number | null
}

/** A guest let in: the request, its holder's account and the limits a guest's upload is held to. */
export interface GuestPass {
  request: UploadRequestRow
  account: AccountRow
  /** The holder's limits, with max_file_size lowered to the request's own. */
  limits: AccountLimits
}

/** What the guest page shows of a request: never its token's holder, id or counters beyond what is left. */
export interface GuestView {
  label: string
  message: string | null
  expires_at: number
  /** The largest file this request takes now (its own limit, the holder plan's, and the room left). */
  max_file_size: number
  /** null: no limit of its own. */
  files_left: number | null
  bytes_left: number | null
  password_protected: boolean
}

/** What a request's audit events say: its label and the fields changed, never its token, URL or password. */
function requestEvent(request: UploadRequestRow, extra: Record<string, unknown> = {}): EventContent {
  return {
    accountId: request.account_id,
    target: { type: 'upload_request', id: request.id },
    details: { label: request.label, ...extra },
  }
}

function checkedLabel(label: unknown): string {
  if (typeof label !== 'string') throw new InvalidParameterError('label is required: one line of text.')
  if (ONE_LINE_FORBIDDEN.test(label)) throw new InvalidParameterError('label must be one line of text, without control characters.')
  const trimmed = label.trim()
  const length = [...trimmed].length
  if (length === 0 || length > UPLOAD_REQUEST_LABEL_MAX_LENGTH) {
    throw new InvalidParameterError(`label must be 1 to ${UPLOAD_REQUEST_LABEL_MAX_LENGTH} characters.`)
  }
  return trimmed
}

function checkedMessage(message: string | null | undefined): string | null | undefined {
  if (message === undefined || message === null) return message
  if (MESSAGE_FORBIDDEN.test(message)) {
    throw new InvalidParameterError('message must be plain text: line breaks and tabs are kept, other control characters are refused.')
  }
  if ([...message].length > UPLOAD_REQUEST_MESSAGE_MAX_LENGTH) {
    throw new InvalidParameterError(`message must be at most ${UPLOAD_REQUEST_MESSAGE_MAX_LENGTH} characters.`)
  }
  return message.trim() === '' ? null : message
}

function checkedCount(name: string, value: number | null | undefined, min: number, max: number): number | null | undefined {
  if (value === undefined || value === null) return value
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new InvalidParameterError(`${name} must be a whole number from ${min} to ${max}.`)
  return value
}

/** The grant's MAC: keyed with the request's password hash, so that a new password ends every grant. */
function grantMac(request: UploadRequestRow, expiresAtSeconds: number): string {
  return createHmac('sha256', request.password_hash ?? '')
    .update(`${request.id}.${request.token}.${expiresAtSeconds}`)
    .digest('base64url')
}

/**
 * Upload requests (../shared/spec/upload-requests.md): an account holder asks someone without an
 * account for files. The holder's side (create, change, close, the files received) and the guest's
 * admission (the token, the password's grant). The guests' uploads themselves are resumable uploads
 * (resumable-uploads.ts) that reserve the request's room at creation.
 */
export class UploadRequestService {
  constructor(
    private readonly requests: UploadRequestsRepository,
    private readonly filesRepository: FilesRepository,
    private readonly accounts: AccountsRepository,
    private readonly resumableUploads: ResumableUploadService,
    private readonly trail: AuditTrail,
    private readonly passwordFailures: PerKeyLimiter,
    private readonly config: Pick<Config, 'plans' | 'uploadRequests' | 'publicUrl'>,
    private readonly passwordHashCost: Readonly<ScryptCost> | undefined,
    private readonly now: () => number = Date.now,
    private readonly onBackgroundError: (error: unknown) => void = () => {},
    private readonly scan: ScanPolicy = SCANNING_OFF,
  ) {}

  /** expires_in or expires_at, required on create, never null, within the operator's maximum. */
  private checkedExpiry(input: ExpiryInput, now: number, required: boolean): number | undefined {
    if (input.expires_at === null) throw new InvalidParameterError('expires_at cannot be null: an upload request always expires.')
    const expiresAt = expiryFromInput(input, now)
    if (expiresAt === undefined || expiresAt === null) {
      if (required) throw new InvalidParameterError('expires_in or expires_at is required: an upload request always expires.')
      return undefined
    }
    const maxMs = this.config.uploadRequests.maxLifetimeMs
    if (expiresAt - now > maxMs) {
      const days = Math.round(maxMs / 86_400_000)
      throw new InvalidParameterError(`${input.expires_in !== undefined ? 'expires_in' : 'expires_at'} must be at most ${days} days ahead.`)
    }
    return expiresAt
  }

  private async checkedPassword(password: string | null | undefined): Promise<string | null | undefined> {
    if (password === undefined || password === null) return password
    const length = [...password].length
    if (typeof password !== 'string' || length < LINK_PASSWORD_MIN_LENGTH || length > LINK_PASSWORD_MAX_LENGTH) {
      throw new InvalidParameterError(`password must be ${LINK_PASSWORD_MIN_LENGTH} to ${LINK_PASSWORD_MAX_LENGTH} characters.`)
    }
    return hashPassword(password, this.passwordHashCost)
  }

  /** The limits fields' rules; max_file_size at most the holder plan's. */
  private checkedLimits(input: UploadRequestInput, limits: Pick<AccountLimits, 'maxFileSize'>) {
    return {
      max_files: checkedCount('max_files', input.max_files, 1, UPLOAD_REQUEST_MAX_FILES),
      max_file_size: checkedCount('max_file_size', input.max_file_size, 1, limits.maxFileSize),
      max_total_size: checkedCount('max_total_size', input.max_total_size, 1, Number.MAX_SAFE_INTEGER),
      file_expires_in: input.file_expires_in == null ? input.file_expires_in : checkExpiresIn(input.file_expires_in, 'file_expires_in'),
    }
  }

  async create(
    accountId: number,
    limits: Pick<AccountLimits, 'maxFileSize'>,
    input: UploadRequestInput,
    actor: Actor,
  ): Promise<UploadRequestRow> {
    const now = this.now()
    const label = checkedLabel(input.label)
    const message = checkedMessage(input.message) ?? null
    const expiresAt = this.checkedExpiry(input, now, true)!
    const checked = this.checkedLimits(input, limits)
    const passwordHash = (await this.checkedPassword(input.password)) ?? null
    return this.requests.create(
      {
        account_id: accountId,
        token: randomToken(TOKEN_BYTES),
        label,
        message,
        expires_at: expiresAt,
        max_files: checked.max_files ?? null,
        max_file_size: checked.max_file_size ?? null,
        max_total_size: checked.max_total_size ?? null,
        file_expires_in: checked.file_expires_in ?? null,
        password_hash: passwordHash,
        closed_at: null,
        created_at: now,
      },
      this.trail.pending('upload_request.created', actor, (row: UploadRequestRow) => requestEvent(row)),
    )
  }

  /** The request as the API shows it, its status at the service's now. */
  record(request: UploadRequestRow): UploadRequestRecord {
    return uploadRequestRecord(request, this.config.publicUrl, this.now())
  }

  list(accountId: number): Promise<UploadRequestRow[]> {
    return this.requests.listForAccount(accountId)
  }

  async get(accountId: number, id: number): Promise<UploadRequestRow> {
    const request = await this.requests.findOwned(accountId, id)
    if (!request) throw new NotFoundError(`No upload request with id ${id}.`)
    return request
  }

  /** Changes its fields; a later expiry opens an expired request again, a closed one stays closed. */
  async update(
    accountId: number,
    id: number,
    limits: Pick<AccountLimits, 'maxFileSize'>,
    input: UploadRequestInput,
    actor: Actor,
  ): Promise<UploadRequestRow> {
    const current = await this.get(accountId, id)
    const now = this.now()
    const changes: Parameters<UploadRequestsRepository['update']>[2] = {}
    if (input.label !== undefined) changes.label = checkedLabel(input.label)
    if (input.message !== undefined) changes.message = checkedMessage(input.message) ?? null
    const expiresAt = this.checkedExpiry(input, now, false)
    if (expiresAt !== undefined) changes.expires_at = expiresAt
    const checked = this.checkedLimits(input, limits)
    if (checked.max_files !== undefined) changes.max_files = checked.max_files
    if (checked.max_file_size !== undefined) changes.max_file_size = checked.max_file_size
    if (checked.max_total_size !== undefined) changes.max_total_size = checked.max_total_size
    if (checked.file_expires_in !== undefined) changes.file_expires_in = checked.file_expires_in
    if (input.password !== undefined) changes.password_hash = (await this.checkedPassword(input.password)) ?? null
    if (Object.keys(changes).length === 0) return current
    const changed = Object.keys(changes).map((name) => (name === 'password_hash' ? 'password' : name))
    const updated = await this.requests.update(
      accountId,
      id,
      changes,
      this.trail.pending('upload_request.updated', actor, (row: UploadRequestRow) => requestEvent(row, { changed })),
    )
    if (!updated) throw new NotFoundError(`No upload request with id ${id}.`)
    return updated
  }

  /** Closes it: guests lose access at once, and their uploads in progress end (their room and slots come back). */
  async close(accountId: number, id: number, actor: Actor): Promise<UploadRequestRow> {
    const closed = await this.requests.close(
      accountId,
      id,
      this.now(),
      this.trail.pending('upload_request.closed', actor, (row: UploadRequestRow) => requestEvent(row)),
    )
    if (!closed) throw new NotFoundError(`No upload request with id ${id}.`)
    await this.endGuestUploads(id)
    return closed
  }

  /** Deletes it (the files it brought stay in the account); the request as it was, closed. */
  async delete(accountId: number, id: number, actor: Actor): Promise<UploadRequestRow> {
    const deleted = await this.requests.delete(
      accountId,
      id,
      this.trail.pending('upload_request.deleted', actor, (row: UploadRequestRow) => requestEvent(row)),
    )
    if (!deleted) throw new NotFoundError(`No upload request with id ${id}.`)
    await this.endGuestUploads(id)
    return { ...deleted, closed_at: deleted.closed_at ?? this.now() }
  }

  /** The files a request brought in, newest first, paged by file id. */
  async files(
    accountId: number,
    id: number,
    query: { limit: number; beforeId?: number },
  ): Promise<{ files: ListedFile[]; nextBeforeId: number | null }> {
    await this.get(accountId, id)
    const rows = await this.filesRepository.listForUploadRequest(accountId, id, query.limit + 1, this.now(), query.beforeId)
    const page = rows.slice(0, query.limit)
    return { files: page, nextBeforeId: rows.length > query.limit ? page[page.length - 1]!.id : null }
  }

  /** Ends the request's guest uploads in progress (it was just closed or deleted). */
  private async endGuestUploads(requestId: number): Promise<void> {
    await this.resumableUploads.endOrphaned(undefined, requestId).catch(this.onBackgroundError)
  }

  /** The request behind a guest link while it takes files; undefined for an unknown or dead one alike. */
  findOpen(token: string): Promise<UploadRequestRow | undefined> {
    return this.findTaking(token, { creating: true })
  }

  /**
   * The request behind a guest link if it takes what is asked: a new upload (while active), or one
   * in progress (a full request's uploads go on: a lost answer to the chunk that filled it is asked
   * again with HEAD; only closing and expiry end them).
   */
  private async findTaking(token: string, { creating }: { creating: boolean }): Promise<UploadRequestRow | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined
    const request = await this.requests.findByToken(token)
    const status = request && uploadRequestStatus(request, this.now())
    return status === 'active' || (status === 'full' && !creating) ? request : undefined
  }

  /**
   * Lets a guest in: the link's request while it takes files, and, when it has a password, a valid
   * grant. An unknown link and a dead one are the same refusal.
   */
  async admitGuest(token: string, grant: string | undefined, { creating }: { creating: boolean }): Promise<GuestPass> {
    const request = await this.findTaking(token, { creating })
    if (!request) throw new UploadRequestUnavailableError()
    if (request.password_hash !== null && !this.grantIsValid(request, grant)) {
      throw new InvalidPasswordError(
        'This upload link has a password: post it to the link for a grant, and send the grant in Fileshare-Upload-Grant.',
      )
    }
    const account = await this.accounts.findById(request.account_id)
    if (!account) throw new UploadRequestUnavailableError()
    const limits = effectiveLimits(account, this.config.plans)
    const maxFileSize = request.max_file_size === null ? limits.maxFileSize : Math.min(limits.maxFileSize, request.max_file_size)
    return { request, account, limits: { ...limits, maxFileSize } }
  }

  /**
   * Checks a request's password (wrong ones are limited per address and request, like a link's) and
   * gives a grant good for GUEST_GRANT_LIFETIME_MS. A request without a password needs none: it gets
   * one anyway, so that a page does not have to know.
   */
  async grant(
    token: string,
    password: string | undefined,
    visitor: Actor,
    held?: string,
  ): Promise<{ grant: string; expiresAt: number; request: UploadRequestRow }> {
    const request = await this.findOpen(token)
    if (!request) throw new NotFoundError('No upload request has this link, or it no longer takes files.')
    // A guest that holds a valid grant reads the request again (what is left) with it, no password.
    if (!password && held !== undefined && request.password_hash !== null && this.grantIsValid(request, held)) {
      return { grant: held, expiresAt: Number(held.split('.')[0]) * 1000, request }
    }
    if (request.password_hash !== null) {
      if (!password) throw new InvalidPasswordError('This upload link needs a password.')
      const failuresKey = `request:${request.id}:${visitor.ip ?? ''}`
      const wait = await this.passwordFailures.take(failuresKey)
      if (wait > 0) throw new RateLimitedError(wait, 'Too many wrong passwords for this upload link from this address; try again later.')
      if (!(await verifyPassword(password, request.password_hash)))
        throw new InvalidPasswordError('The password of this upload link is wrong.')
      await this.passwordFailures.giveBack(failuresKey)
    }
    const expiresAt = Math.floor((this.now() + GUEST_GRANT_LIFETIME_MS) / 1000)
    return { grant: `${expiresAt}.${grantMac(request, expiresAt)}`, expiresAt: expiresAt * 1000, request }
  }

  /** What the guest page shows: the label, the message and what is left, from the request and its holder's plan. */
  async guestView(request: UploadRequestRow): Promise<GuestView> {
    const account = await this.accounts.findById(request.account_id)
    // What a guest may send: the plan's max file size, or less where scanning is required.
    const planMax = account ? this.scan.uploadLimit(effectiveLimits(account, this.config.plans).maxFileSize).maxBytes : 0
    const bytesLeft =
      request.max_total_size === null ? null : Math.max(0, request.max_total_size - request.bytes_received - request.bytes_reserved)
    return {
      label: request.label,
      message: request.message,
      expires_at: request.expires_at,
      max_file_size: Math.min(planMax, request.max_file_size ?? planMax, bytesLeft ?? planMax),
      files_left: request.max_files === null ? null : Math.max(0, request.max_files - request.files_received - request.files_reserved),
      bytes_left: bytesLeft,
      password_protected: request.password_hash !== null,
    }
  }

  private grantIsValid(request: UploadRequestRow, grant: string | undefined): boolean {
    const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(grant ?? '')
    if (!match) return false
    const expiresAt = Number(match[1])
    if (expiresAt * 1000 <= this.now()) return false
    const expected = Buffer.from(grantMac(request, expiresAt))
    const given = Buffer.from(match[2]!)
    return expected.length === given.length && timingSafeEqual(expected, given)
  }
}

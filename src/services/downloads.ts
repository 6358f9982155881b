import type { Actor, AuditLogService } from './audit.js'
import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'
import { BlobNotFoundError, InvalidPasswordError, NotFoundError, RateLimitedError } from '../errors.js'
import type { LinksRepository, LinkWithFile } from '../db/repositories/links-repository.js'
import type { FileRow } from '../db/schema.js'
import { verifyPassword } from '../lib/passwords.js'
import { SCANNING_OFF, type ScanPolicy } from './scan-policy.js'
import { randomToken } from '../lib/random-token.js'
import type { PerKeyLimiter } from '../limits/per-key-limiter.js'
import type { BlobStore, ByteRange } from '../storage/blob-store.js'
import { hasDownloadPolicy, hasExpired, linkEvent, linkStatus, type LinkService } from './links.js'

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{16,64}$/
/** How long a grant lets its holder download (and resume) without counting again. */
export const GRANT_LIFETIME_MS = 3_600_000
const GRANT_TOKEN_BYTES = 24

/** What the landing page and its JSON tell about a link with a policy, before any download. */
export interface DownloadOffer {
  filename: string
  size: number
  contentType: string
  passwordRequired: boolean
  /** The earlier of the link's and the file's expiry (epoch ms), if any. */
  expiresAt: number | null
  /** null when the link has no download limit. */
  downloadsLeft: number | null
}

export interface DownloadGrant {
  /** The secret that goes into the grant URL (`/download/<token>/<grant>`). */
  grant: string
  expiresAt: number
}

function grantHash(grant: string): string {
  return createHash('sha256').update(grant).digest('hex')
}

/** The message of every dead link: unknown, exhausted, expired, revoked or rotated away alike. */
const DEAD_LINK = 'No file behind this link.'

/**
 * The public side of links (no key): finding the link behind a token, the offer of a link with a
 * policy, the counted POST that gives a grant, and the bytes. Every dead link is the same 404.
 */
export class DownloadService {
  constructor(
    private readonly links: LinksRepository,
    private readonly linkService: Pick<LinkService, 'takeDownload'>,
    private readonly store: BlobStore,
    private readonly passwordFailures: PerKeyLimiter,
    private readonly auditLog: Pick<AuditLogService, 'record'>,
    private readonly now: () => number = Date.now,
    private readonly scan: ScanPolicy = SCANNING_OFF,
  ) {}

  /**
   * The live link behind `token` with its file: not revoked, expired or exhausted, its file not
   * expired; and, when scanning is required, scanned clean (else 409 scan_pending).
   */
  async find(token: string): Promise<LinkWithFile> {
    const found = TOKEN_PATTERN.test(token) ? await this.links.findByToken(token) : undefined
    if (!found || linkStatus(found.link, found.file, this.now()) !== 'active') throw new NotFoundError(DEAD_LINK)
    this.scan.checkServable(found.file)
    return found
  }

  /** Whether a GET of the link shows its offer instead of streaming (a download limit or a password). */
  needsConfirmation(found: LinkWithFile): boolean {
    return hasDownloadPolicy(found.link)
  }

  offer({ link, file }: LinkWithFile): DownloadOffer {
    const expiries = [link.expires_at, file.expires_at].filter((at): at is number => at !== null)
    return {
      filename: file.filename,
      size: file.size,
      contentType: file.content_type,
      passwordRequired: link.password_hash !== null,
      expiresAt: expiries.length > 0 ? Math.min(...expiries) : null,
      downloadsLeft: link.max_downloads === null ? null : Math.max(0, link.max_downloads - link.download_count),
    }
  }

  /**
   * Checks the password (wrong ones are limited per address and link), counts one download and
   * gives a grant. A dead link, or one that ran out meanwhile, is the same 404 as an unknown token.
   */
  async grant(token: string, password: string | undefined, visitor: Actor): Promise<DownloadGrant> {
    const found = await this.find(token)
    const { link } = found
    if (link.password_hash !== null) {
      if (!password) throw new InvalidPasswordError('This link needs a password.')
      const failuresKey = `${link.id}:${visitor.ip ?? ''}`
      // Counted first, atomically, so that concurrent guesses cannot all slip under the limit.
      const wait = await this.passwordFailures.take(failuresKey)
      if (wait > 0) throw new RateLimitedError(wait, 'Too many wrong passwords for this link from this address; try again later.')
      if (!(await verifyPassword(password, link.password_hash))) {
        // The holder learns that someone guesses; what was tried is never recorded.
        await this.auditLog.record('link.password_failed', visitor, linkEvent(link))
        throw new InvalidPasswordError()
      }
      await this.passwordFailures.giveBack(failuresKey)
    }
    const now = this.now()
    const grant = randomToken(GRANT_TOKEN_BYTES)
    const expiresAt = now + GRANT_LIFETIME_MS
    if (!(await this.linkService.takeDownload(found, { tokenHash: grantHash(grant), expiresAt }, now, visitor))) {
      throw new NotFoundError(DEAD_LINK)
    }
    return { grant, expiresAt }
  }

  /** The file a grant lets its holder download; a dead grant is the same 404 as an unknown token. */
  async findGranted(token: string, grant: string): Promise<FileRow> {
    const found =
      TOKEN_PATTERN.test(token) && TOKEN_PATTERN.test(grant) ? await this.links.findGranted(token, grantHash(grant), this.now()) : undefined
    if (!found || hasExpired(found.file, this.now())) throw new NotFoundError(DEAD_LINK)
    // A grant given before a scan ended serves nothing the scan has not cleared (an infected file is gone).
    this.scan.checkServable(found.file)
    return found.file
  }

  /**
   * Opens the bytes to send (the whole file, or one range). `counting`: a link without a policy,
   * whose GET counts a download when it starts at the first byte (a resumed or seeking client does
   * not count again, a ranged first read does). A grant's bytes count nothing: the grant was counted.
   */
  async open(file: FileRow, range: ByteRange | undefined, counting?: LinkWithFile): Promise<Readable> {
    let body: Readable
    try {
      body = await this.store.get(file.storage_key, range)
    } catch (error) {
      if (error instanceof BlobNotFoundError) throw new NotFoundError(DEAD_LINK)
      throw error
    }
    if (counting && (!range || range.start === 0)) {
      let counted: boolean
      try {
        counted = await this.linkService.takeDownload(counting)
      } catch (error) {
        body.destroy()
        throw error
      }
      if (!counted) {
        body.destroy()
        throw new NotFoundError(DEAD_LINK)
      }
    }
    return body
  }
}

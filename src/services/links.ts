import { DefaultLinkRequiredError, InvalidParameterError, LinkLimitExceededError, NotFoundError } from '../errors.js'
import type { FilesRepository } from '../db/repositories/files-repository.js'
import type { LinkChanges, LinksRepository, LinkWithFile } from '../db/repositories/links-repository.js'
import type { FileRow, LinkRow } from '../db/schema.js'
import { hashPassword, type ScryptCost } from '../lib/passwords.js'
import { randomToken } from '../lib/random-token.js'
import { expiryFromInput, type ExpiryInput } from './expiry.js'
import { AuditTrail, OPERATOR_ACTOR, SYSTEM_ACTOR, type Actor, type EventContent } from './audit.js'

/** At most this many links that are not revoked per file, the default link included. */
export const MAX_LINKS_PER_FILE = 100
/** A revoked link stays in its owner's view this long, then the collector removes it. */
export const REVOKED_LINK_RETENTION_MS = 30 * 86_400_000
/** Bytes of randomness in a link's token (192 bits, as the file tokens before links existed). */
const LINK_TOKEN_BYTES = 24
export const LINK_PASSWORD_MIN_LENGTH = 8
export const LINK_PASSWORD_MAX_LENGTH = 1024
export const LINK_LABEL_MAX_LENGTH = 100
/** Wrong passwords one address may try on one link per window (links.md). */
export const LINK_PASSWORD_FAILURES = 10
export const LINK_PASSWORD_FAILURE_WINDOW_S = 15 * 60

export type LinkStatus = 'active' | 'expired' | 'exhausted' | 'revoked'

/** The fields of a link's create or update; on update, `null` clears and an absent field stays. */
export interface LinkInput extends ExpiryInput {
  label?: string | null
  max_downloads?: number | null
  password?: string | null
}

/** A link as its owner sees it, with the status it has at the time it was read. */
export interface LinkView {
  link: LinkRow
  status: LinkStatus
}

/** Whether a file or link with this expiry has expired at `now` (null: it never does). */
export function hasExpired(thing: { expires_at: number | null }, now: number): boolean {
  return thing.expires_at !== null && thing.expires_at <= now
}

/** What a link's state is at `now`; the file's expiry ends every link of the file. */
export function linkStatus(link: LinkRow, file: Pick<FileRow, 'expires_at'>, now: number): LinkStatus {
  if (link.revoked_at !== null) return 'revoked'
  if (hasExpired(link, now) || hasExpired(file, now)) return 'expired'
  if (link.max_downloads !== null && link.download_count >= link.max_downloads) return 'exhausted'
  return 'active'
}

/** Whether a link's downloads go through the landing page and its POST (links.md). */
export function hasDownloadPolicy(link: Pick<LinkRow, 'max_downloads' | 'password_hash'>): boolean {
  return link.max_downloads !== null || link.password_hash !== null
}

/** What a link's events say about it: never its token, URL or password. */
export function linkEvent(link: LinkRow, extra: Record<string, unknown> = {}, status?: LinkStatus): EventContent {
  return {
    ...(status && { subject: { link: { link, status } } }),
    accountId: link.account_id,
    target: { type: 'link', id: link.id },
    details: {
      file_id: link.file_id,
      label: link.label,
      is_default: link.is_default === 1,
      max_downloads: link.max_downloads,
      download_count: link.download_count,
      expires_at: link.expires_at,
      password_protected: link.password_hash !== null,
      ...extra,
    },
  }
}

function checkLabel(label: string | null | undefined): void {
  if (typeof label === 'string' && /[\p{Cc}\u2028\u2029]/u.test(label)) {
    throw new InvalidParameterError('label must be one line of text, without control characters.')
  }
}

/**
 * Links as resources: the one place where a link is created, changed, revoked, rotated, and where a
 * download through one is counted (and so where it runs out), for the events that later hang on them.
 */
export class LinkService {
  constructor(
    private readonly links: LinksRepository,
    private readonly files: FilesRepository,
    private readonly passwordHashCost: Readonly<ScryptCost> | undefined,
    private readonly now: () => number = Date.now,
    private readonly trail: AuditTrail = new AuditTrail({ auditIp: 'truncated' }, now),
  ) {}

  async create(accountId: number, fileId: number, input: LinkInput, actor: Actor = OPERATOR_ACTOR): Promise<LinkView> {
    const now = this.now()
    const file = await this.liveFile(accountId, fileId, now)
    checkLabel(input.label)
    const expiresAt = expiryFromInput(input, now)
    const link = await this.links.create(
      {
        file_id: file.id,
        account_id: accountId,
        token: randomToken(LINK_TOKEN_BYTES),
        label: input.label ?? null,
        expires_at: expiresAt ?? null,
        max_downloads: input.max_downloads ?? null,
        password_hash: input.password == null ? null : await hashPassword(input.password, this.passwordHashCost),
        created_at: now,
      },
      MAX_LINKS_PER_FILE,
      this.trail.pending('link.created', actor, (row: LinkRow) => linkEvent(row, {}, linkStatus(row, file, now))),
    )
    if (!link) throw new LinkLimitExceededError(MAX_LINKS_PER_FILE)
    return { link, status: linkStatus(link, file, now) }
  }

  async list(accountId: number, fileId: number): Promise<LinkView[]> {
    const now = this.now()
    const file = await this.liveFile(accountId, fileId, now)
    const links = await this.links.listForFile(file.id, now - REVOKED_LINK_RETENTION_MS)
    return links.map((link) => ({ link, status: linkStatus(link, file, now) }))
  }

  async get(accountId: number, linkId: number): Promise<LinkView> {
    const now = this.now()
    const { link, file } = await this.owned(accountId, linkId, now)
    return { link, status: linkStatus(link, file, now) }
  }

  async update(accountId: number, linkId: number, input: LinkInput, actor: Actor = OPERATOR_ACTOR): Promise<LinkView> {
    const now = this.now()
    const { link, file } = await this.owned(accountId, linkId, now)
    if (link.revoked_at !== null) throw new NotFoundError(`No link with id ${linkId} (it is revoked; a revoked link can only be read).`)
    checkLabel(input.label)
    const changes: LinkChanges = {}
    if (input.label !== undefined) changes.label = input.label
    const expiresAt = expiryFromInput(input, now)
    if (expiresAt !== undefined) changes.expires_at = expiresAt
    if (input.max_downloads !== undefined) changes.max_downloads = input.max_downloads
    if (input.password !== undefined) {
      changes.password_hash = input.password === null ? null : await hashPassword(input.password, this.passwordHashCost)
    }
    // The names of the fields changed, never their values (a password above all).
    const event = this.trail.pending('link.updated', actor, (row: LinkRow) =>
      linkEvent(
        row,
        { changed: Object.keys(changes).map((name) => (name === 'password_hash' ? 'password' : name)) },
        linkStatus(row, file, now),
      ),
    )
    const updated =
      changes.max_downloads != null
        ? await this.links.updateMaxDownloads(link.id, { ...changes, max_downloads: changes.max_downloads }, event)
        : Object.keys(changes).length > 0
          ? await this.links.update(link.id, changes, event)
          : link
    if (!updated) {
      const current = await this.owned(accountId, linkId, now)
      if (current.link.revoked_at !== null) throw new NotFoundError(`No link with id ${linkId}.`)
      throw new InvalidParameterError(`max_downloads must not be below the link's download_count (${current.link.download_count}).`)
    }
    return { link: updated, status: linkStatus(updated, file, now) }
  }

  /** Revokes a link: its token answers 404 at once. The default link cannot go (the file's public_link is it). */
  async revoke(accountId: number, linkId: number, actor: Actor = OPERATOR_ACTOR): Promise<void> {
    const now = this.now()
    const { link } = await this.owned(accountId, linkId, now)
    if (link.is_default === 1) throw new DefaultLinkRequiredError()
    // An already revoked link is not revoked again: the repository finds none to revoke.
    const event = this.trail.pending('link.revoked', actor, () => linkEvent({ ...link, revoked_at: now }, {}, 'revoked'))
    if (!(await this.links.revoke(link.id, now, event))) throw new NotFoundError(`No link with id ${linkId}.`)
  }

  /** A new token for the link: the old one answers 404 at once; counts and policy stay. */
  async rotate(accountId: number, linkId: number, actor: Actor = OPERATOR_ACTOR): Promise<LinkView> {
    const now = this.now()
    const { link, file } = await this.owned(accountId, linkId, now)
    // A revoked link is never rotated: the repository finds none to rotate.
    const event = this.trail.pending('link.rotated', actor, (row: LinkRow) => linkEvent(row))
    const rotated = await this.links.rotate(link.id, randomToken(LINK_TOKEN_BYTES), event)
    if (!rotated) throw new NotFoundError(`No link with id ${linkId}.`)
    return { link: rotated, status: linkStatus(rotated, file, now) }
  }

  /**
   * Counts one download through the link if it is still live (atomically: concurrent takers never
   * pass max_downloads), recording `grant` with it; false when the link is dead now.
   */
  takeDownload(
    found: LinkWithFile,
    grant?: { tokenHash: string; expiresAt: number },
    now = this.now(),
    actor: Actor = SYSTEM_ACTOR,
  ): Promise<boolean> {
    const exhausted = this.trail.pending('link.exhausted', actor, (row: LinkRow) => linkEvent(row, {}, 'exhausted'))
    // Only a link with a policy (its grant) tells of each download: a plain link counts many, by range.
    const downloaded =
      grant &&
      this.trail.webhookOnly('link.downloaded', (row: LinkRow) => ({
        accountId: row.account_id,
        data: {
          link_id: row.id,
          file_id: row.file_id,
          downloads_left: row.max_downloads === null ? null : Math.max(0, row.max_downloads - row.download_count),
        },
      }))
    return this.links.takeDownload(found.link, now, grant, exhausted, downloaded)
  }

  private async liveFile(accountId: number, fileId: number, now: number): Promise<FileRow> {
    const file = await this.files.findOwned(accountId, fileId, now)
    if (!file) throw new NotFoundError(`No file with id ${fileId}.`)
    return file
  }

  /** The owner's link, unless its file has expired (then it is gone, as the file is). */
  private async owned(accountId: number, linkId: number, now: number): Promise<LinkWithFile> {
    const found = await this.links.findOwned(accountId, linkId)
    const gone =
      !found || hasExpired(found.file, now) || (found.link.revoked_at !== null && found.link.revoked_at <= now - REVOKED_LINK_RETENTION_MS)
    if (gone) throw new NotFoundError(`No link with id ${linkId}.`)
    return found
  }
}

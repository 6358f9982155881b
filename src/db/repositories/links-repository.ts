import { recordChangeIn, type PendingEvent } from './audit-events-repository.js'
import { sql, type Kysely, type Selection, type SelectQueryBuilder } from 'kysely'
import type { Database, FileRow, LinkRow } from '../schema.js'
import { fileIsLive } from './files-repository.js'

/** The file columns a download needs, read with the link in one query. */
const FILE_COLUMNS = [
  'files.id as file__id',
  'files.account_id as file__account_id',
  'files.token as file__token',
  'files.filename as file__filename',
  'files.size as file__size',
  'files.content_type as file__content_type',
  'files.sha256 as file__sha256',
  'files.storage_key as file__storage_key',
  'files.created_at as file__created_at',
  'files.download_count as file__download_count',
  'files.expires_at as file__expires_at',
  'files.source_type as file__source_type',
  'files.upload_request_id as file__upload_request_id',
  'files.scan_status as file__scan_status',
  'files.scan_signature as file__scan_signature',
  'files.scanned_at as file__scanned_at',
  'files.scan_attempts as file__scan_attempts',
  'files.scan_next_at as file__scan_next_at',
  'files.scan_lease_until as file__scan_lease_until',
] as const

type JoinedRow = Selection<Database, 'links' | 'files', 'links.id'> & Record<string, unknown>

/** A link with the file it leads to. */
export interface LinkWithFile {
  link: LinkRow
  file: FileRow
}

const LINK_KEYS = [
  'id',
  'file_id',
  'account_id',
  'token',
  'is_default',
  'label',
  'expires_at',
  'max_downloads',
  'download_count',
  'password_hash',
  'created_at',
  'revoked_at',
] as const satisfies ReadonlyArray<keyof LinkRow>

function split(row: JoinedRow): LinkWithFile {
  const link = Object.fromEntries(LINK_KEYS.map((key) => [key, row[key]])) as unknown as LinkRow
  const file = Object.fromEntries(
    Object.entries(row)
      .filter(([key]) => key.startsWith('file__'))
      .map(([key, value]) => [key.slice('file__'.length), value]),
  ) as unknown as FileRow
  return { link, file }
}

/** The changes a link can take; `null` clears a field. */
export type LinkChanges = Partial<Pick<LinkRow, 'label' | 'expires_at' | 'max_downloads' | 'password_hash'>>

/**
 * Links and download grants (../shared/spec/links.md). Counting a download is one conditional
 * UPDATE, so that of N concurrent takers of a link with k downloads left exactly k succeed, from any
 * number of server processes.
 */
export class LinksRepository {
  constructor(private readonly db: Kysely<Database>) {}

  private joined(): SelectQueryBuilder<Database, 'links' | 'files', JoinedRow> {
    return this.db
      .selectFrom('links')
      .innerJoin('files', 'files.id', 'links.file_id')
      .selectAll('links')
      .select(FILE_COLUMNS) as unknown as SelectQueryBuilder<Database, 'links' | 'files', JoinedRow>
  }

  /** The link that has `token` now and has not been revoked, with its file; any expiry is the caller's to judge. */
  async findByToken(token: string): Promise<LinkWithFile | undefined> {
    const row = await this.joined().where('links.token', '=', token).where('links.revoked_at', 'is', null).executeTakeFirst()
    return row && split(row)
  }

  /** The owner's link (revoked ones too), with its file. */
  async findOwned(accountId: number, linkId: number): Promise<LinkWithFile | undefined> {
    const row = await this.joined().where('links.id', '=', linkId).where('links.account_id', '=', accountId).executeTakeFirst()
    return row && split(row)
  }

  /** A file's links: the default first, then newest first; revoked ones only when revoked after `revokedSince`. */
  listForFile(fileId: number, revokedSince: number): Promise<LinkRow[]> {
    return this.db
      .selectFrom('links')
      .selectAll()
      .where('file_id', '=', fileId)
      .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', revokedSince)]))
      .orderBy('is_default', 'desc')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute()
  }

  /**
   * Inserts a link unless the file already has `maxLinks` that are not revoked: undefined then,
   * with nothing written. The file's row is locked first (a no-op UPDATE, which PostgreSQL locks
   * and SQLite serialises anyway), so concurrent creations on one file count one after the other.
   */
  create(
    link: Pick<LinkRow, 'file_id' | 'account_id' | 'token' | 'label' | 'expires_at' | 'max_downloads' | 'password_hash' | 'created_at'>,
    maxLinks: number,
    event?: PendingEvent<LinkRow>,
  ): Promise<LinkRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('files')
        .set({ token: sql`token` })
        .where('id', '=', link.file_id)
        .execute()
      const { count } = await trx
        .selectFrom('links')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .where('file_id', '=', link.file_id)
        .where('revoked_at', 'is', null)
        .executeTakeFirstOrThrow()
      if (Number(count) >= maxLinks) return undefined
      const row = await trx
        .insertInto('links')
        .values({ ...link, is_default: 0 })
        .returningAll()
        .executeTakeFirstOrThrow()
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  /** Applies `changes` to a link that is not revoked, with its event; undefined when there is none. */
  update(linkId: number, changes: LinkChanges, event?: PendingEvent<LinkRow>): Promise<LinkRow | undefined> {
    return this.updateLive(linkId, changes, event)
  }

  /**
   * Sets max_downloads only if it is not below the link's count at the moment of writing (a download
   * counted meanwhile is never undone); undefined when the link is revoked or the count is higher.
   */
  updateMaxDownloads(
    linkId: number,
    changes: LinkChanges & { max_downloads: number },
    event?: PendingEvent<LinkRow>,
  ): Promise<LinkRow | undefined> {
    return this.updateLive(linkId, changes, event, changes.max_downloads)
  }

  /** One conditional UPDATE of a link that is not revoked (and, given `countAtMost`, counted no higher), with its event. */
  private updateLive(linkId: number, changes: LinkChanges, event: PendingEvent<LinkRow> | undefined, countAtMost?: number) {
    return this.db.transaction().execute(async (trx) => {
      let query = trx.updateTable('links').set(changes).where('id', '=', linkId).where('revoked_at', 'is', null)
      if (countAtMost !== undefined) query = query.where('download_count', '<=', countAtMost)
      const row = await query.returningAll().executeTakeFirst()
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  /** Revokes a link that is not the default one; its grants go. False when there was none to revoke. */
  revoke(linkId: number, now: number, event?: PendingEvent<number>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('links')
        .set({ revoked_at: now })
        .where('id', '=', linkId)
        .where('is_default', '=', 0)
        .where('revoked_at', 'is', null)
        .executeTakeFirst()
      if (result.numUpdatedRows === 0n) return false
      await trx.deleteFrom('download_grants').where('link_id', '=', linkId).execute()
      await recordChangeIn(trx, event, linkId)
      return true
    })
  }

  /**
   * Gives a link that is not revoked a new token; the default link's token is the file's too. Its
   * grants go with the old token. Undefined when there was no such link.
   */
  rotate(linkId: number, token: string, event?: PendingEvent<LinkRow>): Promise<LinkRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('links')
        .set({ token })
        .where('id', '=', linkId)
        .where('revoked_at', 'is', null)
        .returningAll()
        .executeTakeFirst()
      if (!row) return undefined
      if (row.is_default === 1) await trx.updateTable('files').set({ token }).where('id', '=', row.file_id).execute()
      await trx.deleteFrom('download_grants').where('link_id', '=', linkId).execute()
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  /**
   * Counts one download through the link, on the link, its file and the account's kept total, in
   * one transaction, if the link is live at `now` (not revoked, not expired, a download left) and
   * its file has not expired; with `grant`, records the grant in the same transaction. False, with
   * nothing written, otherwise.
   */
  takeDownload(
    link: Pick<LinkRow, 'id' | 'file_id' | 'account_id'>,
    now: number,
    grant?: { tokenHash: string; expiresAt: number },
    /** Recorded when this download is the link's last (link.exhausted). */
    exhausted?: PendingEvent<LinkRow>,
    /** Recorded for every download counted (link.downloaded). */
    downloaded?: PendingEvent<LinkRow>,
  ): Promise<boolean> {
    return this.db
      .transaction()
      .execute(async (trx) => {
        // The file's row first, as a delete takes it (then its links by cascade): one lock order,
        // so a download counted while the file is deleted never deadlocks on PostgreSQL.
        const file = await trx
          .updateTable('files')
          .set({ download_count: sql`download_count + 1` })
          .where('id', '=', link.file_id)
          .where((eb) => fileIsLive(eb, now))
          .executeTakeFirst()
        if (file.numUpdatedRows === 0n) return false
        const counted = await trx
          .updateTable('links')
          .set({ download_count: sql`download_count + 1` })
          .where('id', '=', link.id)
          .where('revoked_at', 'is', null)
          .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
          .where((eb) => eb.or([eb('max_downloads', 'is', null), eb('download_count', '<', eb.ref('max_downloads'))]))
          .returningAll()
          .executeTakeFirst()
        // The link is dead: undo the file's count with the whole transaction.
        if (!counted) throw new LinkDead()
        await recordChangeIn(trx, downloaded, counted)
        if (counted.max_downloads !== null && counted.download_count >= counted.max_downloads) await recordChangeIn(trx, exhausted, counted)
        await trx
          .updateTable('accounts')
          .set({ total_downloads: sql`total_downloads + 1` })
          .where('id', '=', link.account_id)
          .execute()
        if (grant) {
          await trx
            .insertInto('download_grants')
            .values({ token_hash: grant.tokenHash, link_id: link.id, created_at: now, expires_at: grant.expiresAt })
            .execute()
        }
        return true
      })
      .catch((error: unknown) => {
        if (error instanceof LinkDead) return false
        throw error
      })
  }

  /**
   * The link that has `token` now (not revoked), with its file, when it holds the grant `tokenHash`
   * valid at `now`. An exhausted or expired link still honours its grants: they were counted.
   */
  async findGranted(token: string, tokenHash: string, now: number): Promise<LinkWithFile | undefined> {
    const row = await this.joined()
      .innerJoin('download_grants', 'download_grants.link_id', 'links.id')
      .where('links.token', '=', token)
      .where('links.revoked_at', 'is', null)
      .where('download_grants.token_hash', '=', tokenHash)
      .where('download_grants.expires_at', '>', now)
      .executeTakeFirst()
    return row && split(row as JoinedRow)
  }

  /** Removes links revoked before `revokedBefore` and grants expired before `now`; returns how many of each. */
  async purge(revokedBefore: number, now: number): Promise<{ links: number; grants: number }> {
    const grants = await this.db.deleteFrom('download_grants').where('expires_at', '<=', now).executeTakeFirst()
    const links = await this.db.deleteFrom('links').where('revoked_at', '<', revokedBefore).executeTakeFirst()
    return { links: Number(links.numDeletedRows), grants: Number(grants.numDeletedRows) }
  }
}

/** Thrown inside takeDownload's transaction to roll the file's count back. */
class LinkDead extends Error {}

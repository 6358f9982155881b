import { recordChangeIn, type PendingEvent } from './audit-events-repository.js'
import { PostgresAdapter, sql, type ExpressionBuilder, type Kysely, type RawBuilder, type Transaction } from 'kysely'
import type { Database, FileRow, ListedFile, NewFileRow } from '../schema.js'
import { takeUploadSlotIn } from './accounts-repository.js'
import { compiledOnce } from './compiled-query.js'
import { releaseStorageIn } from './storage-reservations-repository.js'
import { keysInBatches } from './keys-in-batches.js'

/**
 * A file that has not expired at `now`: from its expires_at on, a file is gone for everyone, before
 * the collector removes it (../shared/spec/links.md, File expiry).
 */
export function fileIsLive(eb: ExpressionBuilder<Database, 'files'>, now: number) {
  return eb.or([eb('files.expires_at', 'is', null), eb('files.expires_at', '>', now)])
}

/**
 * Inserts a file row with its default link (the file's token, no policy) and bumps its account's
 * kept counters, inside the caller's transaction.
 */
export async function insertFileIn(trx: Transaction<Database>, file: NewFileRow): Promise<FileRow> {
  const row = await trx.insertInto('files').values(file).returningAll().executeTakeFirstOrThrow()
  await trx
    .insertInto('links')
    .values({ file_id: row.id, account_id: row.account_id, token: row.token, is_default: 1, created_at: row.created_at })
    .execute()
  await trx
    .updateTable('accounts')
    .set({ total_files: sql`total_files + 1`, total_size: sql`total_size + ${file.size}` })
    .where('id', '=', file.account_id)
    .execute()
  return row
}

/**
 * The columns of a list page, read as arrays (compiled-query.ts): each column read costs
 * better-sqlite3 about as much per row as finding the row, so a page leaves out the two that are
 * never shown (the owner, known already, and the storage key).
 */
const LISTED_COLUMNS = [
  'id',
  'token',
  'filename',
  'size',
  'content_type',
  'sha256',
  'created_at',
  'download_count',
  'expires_at',
  'source_type',
  'upload_request_id',
  'scan_status',
  'scan_signature',
  'scanned_at',
] as const satisfies ReadonlyArray<keyof ListedFile>

function toListedFile(row: ListedFile | unknown[]): ListedFile {
  if (!Array.isArray(row)) return row
  return {
    id: row[0] as number,
    token: row[1] as string,
    filename: row[2] as string,
    size: row[3] as number,
    content_type: row[4] as string,
    sha256: row[5] as string,
    created_at: row[6] as number,
    download_count: row[7] as number,
    expires_at: row[8] as number | null,
    source_type: row[9] as ListedFile['source_type'],
    upload_request_id: row[10] as number | null,
    scan_status: row[11] as ListedFile['scan_status'],
    scan_signature: row[12] as string | null,
    scanned_at: row[13] as number | null,
  }
}

/** The orders a file list can take; each breaks ties by id in its own direction, so paging is stable. */
export const FILE_SORTS = ['upload_date', 'filename', 'size', 'download_count'] as const
export type FileSort = (typeof FILE_SORTS)[number]
export const SORT_ORDERS = ['asc', 'desc'] as const
export type SortOrder = (typeof SORT_ORDERS)[number]

/**
 * The states a file list can be narrowed to (docs/api.md, GET /files): `expiring`, a file with an
 * expiry (a listed file has not reached it); `expired_links`, one with a link that is `expired` or
 * `exhausted` (links.ts, linkStatus), revoked ones aside: they were ended on purpose;
 * `from_upload_request`, one an upload request brought in.
 */
export const FILE_STATES = ['expiring', 'expired_links', 'from_upload_request'] as const
export type FileState = (typeof FILE_STATES)[number]

/** Which files a list shows: every filter given must hold, and a repeated one any of its values. */
export interface FileFilter {
  /** A substring of the filename, ASCII letters matched in either case, every other character as it is; absent: all files. */
  search?: string
  /** Lower-case media types: a top-level type (`image`) or a full type/subtype (`application/pdf`). */
  types?: readonly string[]
  states?: readonly FileState[]
}

/** Which files a list shows, and in what order. */
export interface FileListing extends FileFilter {
  sort: FileSort
  order: SortOrder
}

/** Whether the listing shows fewer than all live files. */
export function isFiltered(filter: FileFilter): boolean {
  return filter.search !== undefined || filter.types !== undefined || filter.states !== undefined
}

export const NEWEST_FIRST: FileListing = { sort: 'upload_date', order: 'desc' }

/** Only A to Z fold, as the database side does: the same matches on SQLite and PostgreSQL, whatever their locale. */
export function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]/g, (letter) => letter.toLowerCase())
}

type Direction = SortOrder

/** The fewest characters a trigram index can narrow a search with. */
const TRIGRAM = 3

/**
 * The most candidates (names holding a search's trigrams, in any account: the index is not by
 * account) that SQLite looks up one by one; past them, reading the account's names is cheaper than
 * finding and reading the candidates (bench/file-list-cost.ts).
 */
export const TRIGRAM_CANDIDATES = 10_000

/**
 * The SQL of the sorts and of the search, per dialect. SQLite's lower() folds ASCII letters only;
 * PostgreSQL's folds by the database's locale (É to é), except under the "C" collation, which
 * also orders by code point as SQLite's BINARY does. instr()/strpos() take the search literally
 * (no LIKE wildcards or escapes to get wrong). Each sort's expression is the one its index
 * (migration 015) was built on, so the planner matches them.
 */
function listingSql(onPostgres: boolean) {
  const foldedName = onPostgres ? sql<string>`lower(${sql.ref('filename')} collate "C")` : sql<string>`lower(${sql.ref('filename')})`
  const sortKeys: Record<FileSort, RawBuilder<unknown>> = {
    upload_date: sql`${sql.ref('created_at')}`,
    filename: foldedName,
    size: sql`${sql.ref('size')}`,
    download_count: sql`${sql.ref('download_count')}`,
  }
  // The ids as one parameter (a JSON text on SQLite, an array on PostgreSQL): one SQL text for any
  // number of them, so up to 10,000 ids neither make 10,000 placeholders nor crowd the statement cache.
  const amongIds = (ids: readonly number[]) =>
    onPostgres
      ? sql<boolean>`${sql.ref('id')} = any(${[...ids]}::bigint[])`
      : sql<boolean>`${sql.ref('id')} in (select value from json_each(${JSON.stringify(ids)}))`
  // The exact check, instr()/strpos() on the folded name, with migration 017's trigram index
  // narrowing first: on PostgreSQL a LIKE of the same folded name, which pg_trgm's index serves
  // when the planner finds it worth it (without the index, the same scan as before); on SQLite the
  // candidates the FTS5 table gave (FilesRepository.trigramCandidates), looked up by id. Both
  // indexes fold more than A to Z, which only widens the candidates.
  const contains = (search: string, candidates?: readonly number[]) => {
    const folded = asciiLowerCase(search)
    if (onPostgres) {
      const pattern = `%${folded.replace(/[\\%_]/g, (character) => `\\${character}`)}%`
      return sql<boolean>`(${foldedName} like ${pattern} and strpos(${foldedName}, ${folded}) > 0)`
    }
    const exact = sql<boolean>`instr(${foldedName}, ${folded}) > 0`
    return candidates === undefined ? exact : sql<boolean>`(${amongIds(candidates)} and ${exact})`
  }
  // Compared by code point on both, as migration 016's index holds it: a top-level type is the
  // range from "image/" up to "image0" ('0' follows '/'), read along that index.
  const contentType = onPostgres ? sql<string>`${sql.ref('files.content_type')} collate "C"` : sql<string>`${sql.ref('files.content_type')}`
  const ofType = (type: string) =>
    type.includes('/')
      ? sql<boolean>`${contentType} = ${type}`
      : sql<boolean>`(${contentType} >= ${`${type}/`} and ${contentType} < ${`${type}0`})`
  return { onPostgres, sortKeys, contains, ofType, amongIds }
}

/**
 * The files with a link that no longer works by time or by its download limit, not revoked
 * (linkStatus `expired` or `exhausted`): one id list of two lookups, each along a partial index of
 * migration 016, so that SQLite looks the files up by id rather than test every file of the account.
 */
function withExpiredLinks(eb: ExpressionBuilder<Database, 'files'>, accountId: number, now: number) {
  const unrevoked = () =>
    eb.selectFrom('links').select('links.file_id').where('links.account_id', '=', accountId).where('links.revoked_at', 'is', null)
  const expired = unrevoked().where('links.expires_at', 'is not', null).where('links.expires_at', '<=', now)
  const exhausted = unrevoked()
    .where('links.max_downloads', 'is not', null)
    .where((links) => links('links.download_count', '>=', links.ref('links.max_downloads')))
  return eb('files.id', 'in', expired.unionAll(exhausted))
}

function inState(eb: ExpressionBuilder<Database, 'files'>, state: FileState, accountId: number, now: number) {
  switch (state) {
    case 'expiring':
      // A live file with an expiry: a range on files_account_expiry (007), which holds only those.
      return eb('files.expires_at', '>', now)
    case 'from_upload_request':
      // A literal, as migration 016's partial index states it: SQLite uses it only then.
      return eb('files.source_type', '=', sql.lit('upload_request'))
    case 'expired_links':
      return withExpiredLinks(eb, accountId, now)
  }
}

const reversed = (direction: Direction): Direction => (direction === 'asc' ? 'desc' : 'asc')

export class FilesRepository {
  private readonly findOwnedQuery
  private readonly pageQueries = new Map<string, (accountId: number, offset: number, limit: number, now: number) => Promise<unknown[]>>()
  private readonly beforeIdQueries
  private readonly listingSql

  constructor(private readonly db: Kysely<Database>) {
    this.findOwnedQuery = compiledOnce(db, 3, (accountId: number, id: number, now: number) =>
      db
        .selectFrom('files')
        .selectAll()
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where((eb) => fileIsLive(eb, now)),
    )
    this.listingSql = listingSql(db.getExecutor().adapter instanceof PostgresAdapter)
    const beforeId = (direction: Direction) =>
      compiledOnce(
        db,
        4,
        (accountId: number, id: number, limit: number, now: number) => this.beforeIdQuery(accountId, id, limit, now, direction),
        true,
      )
    this.beforeIdQueries = { asc: beforeId('asc'), desc: beforeId('desc') }
  }

  /** The account's live files, those the filter lets through if given (each of its filters, any of a filter's values). */
  private listed(accountId: number, now: number, filter: FileFilter | undefined, candidates?: readonly number[]) {
    let query = this.db
      .selectFrom('files')
      .where('account_id', '=', accountId)
      .where((eb) => fileIsLive(eb, now))
    const { search, types, states } = filter ?? {}
    if (search !== undefined) query = query.where(this.listingSql.contains(search, candidates))
    if (types !== undefined) query = query.where((eb) => eb.or(types.map((type) => this.listingSql.ofType(type))))
    if (states !== undefined) query = query.where((eb) => eb.or(states.map((state) => inState(eb, state, accountId, now))))
    return query
  }

  /**
   * The files a page is taken from: the account's live files, those containing `search`, or, when
   * the caller found the matches first (`among`, FileService.list), those files by id: looking a
   * few ids up and sorting them beats walking the sort's index, which reads the table row of every
   * file passed on the way (each planner guesses how many files a substring matches, and both
   * guessed wrong: seconds at a million files, bench/file-list-cost.ts).
   */
  private listedForPage(
    accountId: number,
    now: number,
    filter: FileFilter | undefined,
    among: readonly number[] | undefined,
    candidates?: readonly number[],
    sorted = false,
  ) {
    if (among === undefined) return this.listed(accountId, now, filter, candidates)
    // The ids were found for this account at this `now`; its conditions stay anyway, so that no caller
    // can list another account's file or an expired one by its id (cheap: each id is a key lookup).
    // For a sorted page SQLite would walk the sort's index on the account and test each file
    // against the ids (0.1 s at a million files for one match): `+account_id` keeps it to the ids.
    const ofAccount = sorted && !this.listingSql.onPostgres ? sql<boolean>`+${sql.ref('account_id')} = ${accountId}` : undefined
    return this.db
      .selectFrom('files')
      .where(this.listingSql.amongIds(among))
      .where((eb) => ofAccount ?? eb('account_id', '=', accountId))
      .where((eb) => fileIsLive(eb, now))
  }

  private pageQuery(
    accountId: number,
    offset: number,
    limit: number,
    now: number,
    sort: FileSort,
    direction: Direction,
    filter?: FileFilter,
    among?: readonly number[],
    candidates?: readonly number[],
  ) {
    const key = this.listingSql.sortKeys[sort]
    if (sort !== 'upload_date' && filter === undefined) {
      // The page's ids first, from migration 015's index alone (it holds the key, the id and the
      // expiry), then their rows: PostgreSQL otherwise reads the table row of every file an OFFSET
      // skips, in the key's order, not the table's (4.5 s for the middle page of a million files).
      const pageIds = this.listed(accountId, now, undefined)
        .select('files.id')
        .orderBy(key, direction)
        .orderBy('id', direction)
        .limit(limit)
        .offset(offset)
      return this.db.selectFrom('files').select(LISTED_COLUMNS).where('id', 'in', pageIds).orderBy(key, direction).orderBy('id', direction)
    }
    return this.listedForPage(accountId, now, filter, among, candidates, true)
      .select(LISTED_COLUMNS)
      .orderBy(key, direction)
      .orderBy('id', direction)
      .limit(limit)
      .offset(offset)
  }

  private beforeIdQuery(
    accountId: number,
    id: number,
    limit: number,
    now: number,
    direction: Direction,
    filter?: FileFilter,
    among?: readonly number[],
    candidates?: readonly number[],
  ) {
    return this.listedForPage(accountId, now, filter, among, candidates)
      .select(LISTED_COLUMNS)
      .where('id', direction === 'desc' ? '<' : '>', id)
      .orderBy('id', direction)
      .limit(limit)
  }

  /** Inserts the row and bumps the account's kept counters in one transaction. */
  insert(file: NewFileRow): Promise<FileRow> {
    return this.db.transaction().execute((trx) => insertFileIn(trx, file))
  }

  /**
   * Takes one of the day's upload slots and inserts the row, in one transaction: undefined, with
   * nothing written, when no slot is left. A slot is then never held by an upload that fails, is
   * cut off, or whose process dies. The upload's storage reservation, if any, turns into the file's
   * used bytes in the same transaction.
   */
  insertTakingUploadSlot(
    file: NewFileRow,
    day: string,
    dailyUploads: number,
    reservationId?: string,
    event?: PendingEvent<FileRow>,
  ): Promise<FileRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      if ((await takeUploadSlotIn(trx, file.account_id, day, dailyUploads)) === undefined) return undefined
      if (reservationId !== undefined) await releaseStorageIn(trx, reservationId)
      const row = await insertFileIn(trx, file)
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  /** The owner's file, unless it has expired at `now`. */
  async findOwned(accountId: number, id: number, now: number): Promise<FileRow | undefined> {
    return (await this.findOwnedQuery(accountId, id, now))[0]
  }

  /**
   * A page of the listing: its sort, ties by id in the same direction, leaving out files expired at
   * `now`. Without a search each sort walks its index (files_account_order, migration 015's);
   * `fromTheOtherEnd` walks it from its other end, for pages nearer that end. A search reads the
   * names its trigrams find (migration 017), or every file of the account when they cannot narrow
   * (trigramCandidates); `among`: the page is taken among these
   * ids, the search's matches found first (listedForPage).
   */
  async listPage(
    accountId: number,
    offset: number,
    limit: number,
    now: number,
    fromTheOtherEnd = false,
    listing: FileListing = NEWEST_FIRST,
    among?: readonly number[],
  ): Promise<ListedFile[]> {
    const { sort } = listing
    const direction = fromTheOtherEnd ? reversed(listing.order) : listing.order
    if (among?.length === 0) return []
    if (isFiltered(listing)) {
      const candidates = among === undefined ? await this.trigramCandidates(listing.search) : undefined
      if (candidates?.length === 0) return []
      return (await this.pageQuery(accountId, offset, limit, now, sort, direction, listing, among, candidates).execute()).map(toListedFile)
    }
    const name = `${sort} ${direction}`
    let query = this.pageQueries.get(name)
    if (!query) {
      query = compiledOnce(
        this.db,
        4,
        (account: number, skip: number, take: number, at: number) => this.pageQuery(account, skip, take, at, sort, direction),
        true,
      )
      this.pageQueries.set(name, query)
    }
    return (await query(accountId, offset, limit, now)).map((row) => toListedFile(row as ListedFile | unknown[]))
  }

  /**
   * Up to `limit` live files of the account past `beforeId` in id order: below it, highest first
   * (`desc`), or above it, lowest first (`asc`), those containing `search` if given, or among
   * its matches found first (files_account_id_order; listedForPage).
   */
  async listBeforeId(
    accountId: number,
    beforeId: number,
    limit: number,
    now: number,
    direction: Direction = 'desc',
    filter: FileFilter = {},
    among?: readonly number[],
  ): Promise<ListedFile[]> {
    if (among?.length === 0) return []
    if (isFiltered(filter)) {
      const candidates = among === undefined ? await this.trigramCandidates(filter.search) : undefined
      if (candidates?.length === 0) return []
      return (await this.beforeIdQuery(accountId, beforeId, limit, now, direction, filter, among, candidates).execute()).map(toListedFile)
    }
    return (await this.beforeIdQueries[direction](accountId, beforeId, limit, now)).map(toListedFile)
  }

  /**
   * On SQLite, the ids of the files whose names hold every trigram of `search` (migration 017's
   * FTS5 table, the search as one quoted phrase): a superset of its matches in every account.
   * Undefined when the index cannot narrow: no search, under 3 characters, more than
   * TRIGRAM_CANDIDATES candidates, or PostgreSQL (its planner weighs pg_trgm's index itself).
   */
  private async trigramCandidates(search: string | undefined): Promise<readonly number[] | undefined> {
    if (search === undefined || this.listingSql.onPostgres || [...search].length < TRIGRAM) return undefined
    const phrase = `"${search.replaceAll('"', '""')}"`
    const { rows } = await sql<{ id: number }>`select rowid as id from files_name_trigrams
      where files_name_trigrams match ${phrase} limit ${TRIGRAM_CANDIDATES + 1}`.execute(this.db)
    return rows.length > TRIGRAM_CANDIDATES ? undefined : rows.map((row) => row.id)
  }

  /** The ids of up to `limit` live files of the account the filter lets through (a read of all its files, at most: see trigramCandidates). */
  async matchingIds(accountId: number, now: number, filter: FileFilter, limit: number): Promise<number[]> {
    const candidates = await this.trigramCandidates(filter.search)
    if (candidates?.length === 0) return []
    const rows = await this.listed(accountId, now, filter, candidates).select('id').limit(limit).execute()
    return rows.map((row) => Number(row.id))
  }

  /** How many live files of the account the filter lets through (a read of all its files, at most). */
  async countMatching(accountId: number, now: number, filter: FileFilter): Promise<number> {
    const candidates = await this.trigramCandidates(filter.search)
    if (candidates?.length === 0) return 0
    const row = await this.listed(accountId, now, filter, candidates)
      .select((eb) => eb.fn.countAll().as('count'))
      .executeTakeFirstOrThrow()
    return Number(row.count)
  }

  /** Up to `limit` live files an upload request brought in, highest id first, below `beforeId` when given (files_upload_request). */
  async listForUploadRequest(accountId: number, requestId: number, limit: number, now: number, beforeId?: number): Promise<ListedFile[]> {
    let query = this.db
      .selectFrom('files')
      .select(LISTED_COLUMNS)
      .where('upload_request_id', '=', requestId)
      .where('account_id', '=', accountId)
      .where((eb) => fileIsLive(eb, now))
    if (beforeId !== undefined) query = query.where('id', '<', beforeId)
    return query.orderBy('id', 'desc').limit(limit).execute()
  }

  /**
   * Deletes the owner's file unless it expired at `now` (its links and grants go with it) and
   * lowers the account's counters in one transaction; undefined if absent.
   */
  deleteOwned(accountId: number, id: number, now: number, event?: PendingEvent<FileRow>): Promise<FileRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .deleteFrom('files')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where((eb) => fileIsLive(eb, now))
        .returningAll()
        .executeTakeFirst()
      if (row) await lowerCountersIn(trx, row)
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  /**
   * Removes up to `limit` files expired at `now`, each with its counters in its own transaction
   * (safe on several instances: a row another sweep took is simply not found).
   */
  async deleteExpired(now: number, limit: number, event?: PendingEvent<FileRow>): Promise<FileRow[]> {
    const due = await this.db.selectFrom('files').select('id').where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute()
    const removed: FileRow[] = []
    for (const { id } of due) {
      const row = await this.db.transaction().execute(async (trx) => {
        const deleted = await trx.deleteFrom('files').where('id', '=', id).where('expires_at', '<=', now).returningAll().executeTakeFirst()
        if (deleted) await lowerCountersIn(trx, deleted)
        await recordChangeIn(trx, event, deleted)
        return deleted
      })
      if (row) removed.push(row)
    }
    return removed
  }

  /** Renames the owner's live file and sets or clears its expiry, with its event; undefined if absent. */
  update(
    accountId: number,
    id: number,
    changes: { filename?: string; expires_at?: number | null },
    now: number,
    event?: PendingEvent<FileRow>,
  ): Promise<FileRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('files')
        .set(changes)
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where((eb) => fileIsLive(eb, now))
        .returningAll()
        .executeTakeFirst()
      await recordChangeIn(trx, event, row)
      return row
    })
  }

  /** Which of `storageKeys` a file row references (garbage collection asks a batch at a time). */
  referencedStorageKeys(storageKeys: readonly string[]): Promise<Set<string>> {
    return keysInBatches(storageKeys, async (batch) =>
      (await this.db.selectFrom('files').select('storage_key').where('storage_key', 'in', batch).execute()).map((row) => row.storage_key),
    )
  }
}

/** Takes a removed file out of its account's kept counters, downloads included. */
export async function lowerCountersIn(trx: Transaction<Database>, row: FileRow): Promise<void> {
  await trx
    .updateTable('accounts')
    .set({
      total_files: sql`total_files - 1`,
      total_size: sql`total_size - ${row.size}`,
      total_downloads: sql`total_downloads - ${row.download_count}`,
    })
    .where('id', '=', row.account_id)
    .execute()
}

import fs from 'node:fs/promises'
import path from 'node:path'
import { sql, type Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgres, openSqlite, type DatabaseHandle, type DialectName } from '../../src/db/dialect.js'
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js'
import { AccountsRepository } from '../../src/db/repositories/accounts-repository.js'
import { FILE_SORTS, FilesRepository, SORT_ORDERS, type FileFilter, type FileListing } from '../../src/db/repositories/files-repository.js'
import type { Database } from '../../src/db/schema.js'
import { createPgSchema, dropPgSchema, isPostgresReachable, PG_URL } from '../helpers/scale-out-env.js'
import { makeTempDir } from '../helpers/test-app.js'

/**
 * FilesRepository's listing (GET /files's sort, order and search, issue 37) below HTTP, on SQLite
 * and PostgreSQL: each sort is read along its own index (migration 015), not sorted, and a search
 * gives the same page whichever way it is read (its matches first, or along the sort's index).
 */

const postgresReachable = await isPostgresReachable()
if (!postgresReachable) console.warn(`SKIPPING the PostgreSQL half of test/db/file-listing.test.ts: no PostgreSQL answers at ${PG_URL}.`)

const DIALECTS: Array<{ name: DialectName; available: boolean; open(): Promise<{ handle: DatabaseHandle; drop(): Promise<void> }> }> = [
  {
    name: 'sqlite',
    available: true,
    async open() {
      const dir = await makeTempDir('fileshare-listing-')
      return { handle: openSqlite(path.join(dir, 'fileshare.sqlite')), drop: () => fs.rm(dir, { recursive: true, force: true }) }
    },
  },
  {
    name: 'postgres',
    available: postgresReachable,
    async open() {
      const schema = await createPgSchema()
      return { handle: openPostgres(PG_URL, { searchPath: schema }), drop: () => dropPgSchema(schema) }
    },
  },
]

const T0 = Date.UTC(2030, 0, 1, 12)
const NAMES = ['Report-2.pdf', 'report-1.pdf', 'Ärger.txt', 'ärger.txt', 'photo.JPG', 'notes_%.md', 'REPORT-3.PDF', 'zeta', 'Zeta']

/** The query plan's text: SQLite's EXPLAIN QUERY PLAN details, PostgreSQL's EXPLAIN lines. */
async function planOf(db: Kysely<Database>, dialect: DialectName, query: { sql: string; parameters: readonly unknown[] }) {
  if (dialect === 'sqlite') {
    const rows = await db.executeQuery<{ detail: string }>({
      ...query,
      sql: `explain query plan ${query.sql}`,
      query: {} as never,
      queryId: {} as never,
    })
    return rows.rows.map((row) => row.detail).join('\n')
  }
  // A few rows make a sequential scan and a sort the cheapest plan; without sorting allowed, the
  // planner takes an index that gives the order, if one does.
  return db.transaction().execute(async (trx) => {
    await sql`set local enable_sort = off`.execute(trx)
    await sql`set local enable_seqscan = off`.execute(trx)
    const rows = await trx.executeQuery<{ 'QUERY PLAN': string }>({
      ...query,
      sql: `explain ${query.sql}`,
      query: {} as never,
      queryId: {} as never,
    })
    return rows.rows.map((row) => row['QUERY PLAN']).join('\n')
  })
}

for (const dialect of DIALECTS) {
  describe.skipIf(!dialect.available)(`the file listing on ${dialect.name}`, () => {
    let handle: DatabaseHandle
    let drop: () => Promise<void>
    let files: FilesRepository
    let accountId: number

    beforeAll(async () => {
      ;({ handle, drop } = await dialect.open())
      await migrateToLatest(handle)
      files = new FilesRepository(handle.db)
      accountId = (await new AccountsRepository(handle.db).create('listing@example.test', 'pro', T0)).id
      for (let i = 0; i < 60; i++) {
        await files.insert({
          account_id: accountId,
          token: `token-${i}`,
          filename: `${NAMES[i % NAMES.length]}`,
          size: (i * 7) % 5,
          content_type: 'application/octet-stream',
          sha256: 'x',
          storage_key: `key-${i}`,
          created_at: T0 + ((i * 13) % 17) * 1000,
          expires_at: i % 10 === 9 ? T0 - 1 : null,
        })
      }
    })
    afterAll(async () => {
      await handle.db.destroy()
      await drop()
    })

    it('reads every sort in either order along its own index, sorting at most the page it found', async () => {
      const indexes = {
        upload_date: 'files_account_order',
        filename: 'files_account_filename',
        size: 'files_account_size',
        download_count: 'files_account_downloads',
      }
      for (const sort of FILE_SORTS) {
        for (const order of SORT_ORDERS) {
          const query = files['pageQuery'](accountId, 10, 20, T0, sort, order).compile()
          const plan = await planOf(handle.db, dialect.name, query)
          expect(plan, `${sort} ${order}`).toContain(indexes[sort])
          // The other sorts take the page's ids from the index, then sort those rows (listPage).
          const sorts = plan.match(dialect.name === 'sqlite' ? /TEMP B-TREE/g : /Sort Key/g)?.length ?? 0
          expect(sorts, `${sort} ${order}: ${plan}`).toBe(sort === 'upload_date' ? 0 : 1)
        }
      }
    })

    it('migration 015 indexes the files stored before it: they are listed in every sort after it', async () => {
      const before = await dialect.open()
      try {
        await migrateTo(before.handle, '014-account-protection')
        const repository = new FilesRepository(before.handle.db)
        const owner = (await new AccountsRepository(before.handle.db).create('before-015@example.test', 'pro', T0)).id
        for (const [i, filename] of ['b.txt', 'A.txt', 'c.txt'].entries()) {
          const file = { account_id: owner, token: `before-${i}`, filename, size: 3 - i, content_type: 'text/plain', sha256: 'x' }
          await repository.insert({ ...file, storage_key: `before-${i}`, created_at: T0 + i, expires_at: null })
        }
        expect(await migrateToLatest(before.handle)).toEqual(['015-file-list-orders', '016-file-list-filters'])
        const names = async (listing: FileListing) =>
          (await repository.listPage(owner, 0, 10, T0, false, listing)).map((file) => file.filename)
        expect(await names({ sort: 'filename', order: 'asc' })).toEqual(['A.txt', 'b.txt', 'c.txt'])
        expect(await names({ sort: 'size', order: 'asc' })).toEqual(['c.txt', 'A.txt', 'b.txt'])
        expect(await names({ sort: 'download_count', order: 'desc', search: 'T' })).toEqual(['c.txt', 'A.txt', 'b.txt'])
        const plan = await planOf(before.handle.db, dialect.name, repository['pageQuery'](owner, 0, 10, T0, 'filename', 'asc').compile())
        expect(plan).toContain('files_account_filename')
      } finally {
        await before.handle.db.destroy()
        await before.drop()
      }
    })

    it('a search gives the same pages read either way: its few matches first, or along the sort index', async () => {
      for (const search of ['report', 'ÄRGER', 'rger', '_%', 'zeta', 'nothing']) {
        const matches = await files.countMatching(accountId, T0, { search })
        const among = await files.matchingIds(accountId, T0, { search }, 1_000)
        expect(among).toHaveLength(matches)
        for (const sort of FILE_SORTS) {
          for (const order of SORT_ORDERS) {
            const listing: FileListing = { sort, order, search }
            for (const [offset, limit] of [
              [0, 100],
              [0, 3],
              [3, 3],
            ] as const) {
              const alongTheIndex = await files.listPage(accountId, offset, limit, T0, false, listing)
              const matchesFirst = await files.listPage(accountId, offset, limit, T0, false, listing, among)
              expect(matchesFirst, `${search} ${sort} ${order} ${offset}`).toEqual(alongTheIndex)
            }
            const all = await files.listPage(accountId, 0, 100, T0, false, listing, among)
            expect(all, search).toHaveLength(matches)
          }
        }
        for (const order of SORT_ORDERS) {
          const alongTheIndex = await files.listBeforeId(accountId, 40, 100, T0, order, { search })
          expect(await files.listBeforeId(accountId, 40, 100, T0, order, { search }, among)).toEqual(alongTheIndex)
        }
      }
      // A to Z fold, nothing else does; live files only (every tenth has expired).
      expect(await files.countMatching(accountId, T0, { search: 'report' })).toBe(18)
      expect(await files.countMatching(accountId, T0, { search: 'Ä' })).toBe(6)
      expect(await files.countMatching(accountId, T0, { search: 'ä' })).toBe(6)
      expect(await files.countMatching(accountId, T0, { search: '%' })).toBe(6)
      expect(await files.matchingIds(accountId, T0, { search: 'report' }, 5)).toHaveLength(5)
    })

    it("lists no other account's file, nor an expired one, whatever ids it is handed as the matches", async () => {
      const other = (await new AccountsRepository(handle.db).create(`other-${dialect.name}@example.test`, 'pro', T0)).id
      const { id: foreign } = await files.insert({
        account_id: other,
        token: 'token-foreign',
        filename: 'report foreign',
        size: 1,
        content_type: 'application/octet-stream',
        sha256: 'x',
        storage_key: 'key-foreign',
        created_at: T0,
        expires_at: null,
      })
      const live = await files.matchingIds(accountId, T0, { search: 'report' }, 1_000)
      const expired = await files.matchingIds(accountId, T0 - 2, { search: 'report' }, 1_000)
      const handed = [...new Set([...live, ...expired, foreign])]
      expect(handed.length).toBeGreaterThan(live.length + 1)
      const listing: FileListing = { sort: 'filename', order: 'asc', search: 'report' }
      const ids = (await files.listPage(accountId, 0, 100, T0, false, listing, handed)).map((file) => file.id)
      expect(ids.sort((a, b) => a - b)).toEqual([...live].sort((a, b) => a - b))
      const before = (await files.listBeforeId(accountId, Number.MAX_SAFE_INTEGER, 100, T0, 'desc', { search: 'report' }, handed)).map(
        (file) => file.id,
      )
      expect(before.sort((a, b) => a - b)).toEqual([...live].sort((a, b) => a - b))
    })
  })

  describe.skipIf(!dialect.available)(`the file list's filters on ${dialect.name}`, () => {
    let handle: DatabaseHandle
    let drop: () => Promise<void>
    let files: FilesRepository
    let accountId: number
    const TYPES = ['image/png', 'image/jpeg', 'application/pdf', 'text/plain', 'application/octet-stream', 'imagex/y']

    beforeAll(async () => {
      ;({ handle, drop } = await dialect.open())
      await migrateToLatest(handle)
      files = new FilesRepository(handle.db)
      accountId = (await new AccountsRepository(handle.db).create('filters@example.test', 'pro', T0)).id
      for (let i = 0; i < 60; i++) {
        const file = await files.insert({
          account_id: accountId,
          token: `filter-${i}`,
          filename: `${NAMES[i % NAMES.length]}`,
          size: (i * 7) % 5,
          content_type: TYPES[i % TYPES.length]!,
          sha256: 'x',
          storage_key: `filter-${i}`,
          created_at: T0 + ((i * 13) % 17) * 1000,
          expires_at: i % 10 === 9 ? T0 - 1 : i % 4 === 1 ? T0 + 1000 : null,
          ...(i % 7 === 2 ? { source_type: 'upload_request' as const, upload_request_id: 1 + (i % 3) } : {}),
        })
        // Every third file a link past its expiry, every fifth one used up, every eleventh a revoked expired one.
        const link = { file_id: file.id, account_id: accountId, is_default: 0, created_at: T0 }
        if (i % 3 === 0)
          await handle.db
            .insertInto('links')
            .values({ ...link, token: `expired-${i}`, expires_at: T0 })
            .execute()
        if (i % 5 === 0) {
          await handle.db
            .insertInto('links')
            .values({ ...link, token: `used-${i}`, max_downloads: 2, download_count: 2 })
            .execute()
        }
        if (i % 11 === 0) {
          await handle.db
            .insertInto('links')
            .values({ ...link, token: `revoked-${i}`, expires_at: T0 - 5, revoked_at: T0 - 1 })
            .execute()
        }
        await handle.db
          .insertInto('links')
          .values({ ...link, token: `later-${i}`, expires_at: T0 + 1, max_downloads: 3 })
          .execute()
      }
      // The planner's statistics, as autovacuum keeps them: without any, PostgreSQL guesses one row for every index.
      if (dialect.name === 'postgres') await sql`analyze`.execute(handle.db)
    })
    afterAll(async () => {
      await handle.db.destroy()
      await drop()
    })

    const FILTERS: FileFilter[] = [
      { types: ['image'] },
      { types: ['application/pdf', 'text'] },
      { types: ['image/png'] },
      { states: ['expiring'] },
      { states: ['expired_links'] },
      { states: ['from_upload_request'] },
      { states: ['expiring', 'from_upload_request'] },
      { states: ['expired_links'], types: ['image'], search: 'r' },
    ]

    it('counts what the rules say: live files only, any value of a filter, revoked links aside', async () => {
      const live = Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 10 !== 9)
      const count = (keep: (i: number) => boolean) => live.filter(keep).length
      const type = (i: number) => TYPES[i % TYPES.length]!
      expect(await files.countMatching(accountId, T0, { types: ['image'] })).toBe(count((i) => type(i).startsWith('image/')))
      expect(await files.countMatching(accountId, T0, { types: ['application/pdf', 'text'] })).toBe(
        count((i) => type(i) === 'application/pdf' || type(i) === 'text/plain'),
      )
      expect(await files.countMatching(accountId, T0, { states: ['expiring'] })).toBe(count((i) => i % 4 === 1))
      expect(await files.countMatching(accountId, T0, { states: ['expired_links'] })).toBe(count((i) => i % 3 === 0 || i % 5 === 0))
      expect(await files.countMatching(accountId, T0, { states: ['from_upload_request'] })).toBe(count((i) => i % 7 === 2))
    })

    it('gives the same pages read either way: its few matches first, or along the sort index', async () => {
      for (const filter of FILTERS) {
        const among = await files.matchingIds(accountId, T0, filter, 1_000)
        expect(among.length, JSON.stringify(filter)).toBeGreaterThan(0)
        for (const sort of FILE_SORTS) {
          for (const order of SORT_ORDERS) {
            const listing: FileListing = { sort, order, ...filter }
            for (const [offset, limit] of [
              [0, 100],
              [2, 3],
            ] as const) {
              const alongTheIndex = await files.listPage(accountId, offset, limit, T0, false, listing)
              expect(await files.listPage(accountId, offset, limit, T0, false, listing, among)).toEqual(alongTheIndex)
            }
          }
        }
        for (const order of SORT_ORDERS) {
          const alongTheIndex = await files.listBeforeId(accountId, 30, 100, T0, order, filter)
          expect(await files.listBeforeId(accountId, 30, 100, T0, order, filter, among)).toEqual(alongTheIndex)
        }
      }
    })

    it('finds the matches along the indexes of migrations 007 and 016', async () => {
      // expiring: the account's expiry index or the collector's (a single account here: both as narrow).
      const indexes: Array<[FileFilter, RegExp[]]> = [
        [{ types: ['image'] }, [/files_account_type/]],
        [{ types: ['application/pdf'] }, [/files_account_type/]],
        [{ states: ['expiring'] }, [/files(_account)?_expiry/]],
        [{ states: ['from_upload_request'] }, [/files_account_upload_request/]],
        [{ states: ['expired_links'] }, [/links_account_expiry/, /links_account_download_limit/]],
      ]
      for (const [filter, used] of indexes) {
        const query = files['listed'](accountId, T0, filter).select('id').limit(10).compile()
        const plan = await planOf(handle.db, dialect.name, query)
        for (const index of used) expect(plan, JSON.stringify(filter)).toMatch(index)
      }
    })
  })
}

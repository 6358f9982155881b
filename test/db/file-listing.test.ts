import fs from 'node:fs/promises'
import path from 'node:path'
import { sql, type Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgres, openSqlite, type DatabaseHandle, type DialectName } from '../../src/db/dialect.js'
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js'
import { AccountsRepository } from '../../src/db/repositories/accounts-repository.js'
import {
  asciiLowerCase,
  FILE_SORTS,
  FilesRepository,
  SORT_ORDERS,
  type FileFilter,
  type FileListing,
} from '../../src/db/repositories/files-repository.js'
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
        expect(await migrateToLatest(before.handle)).toEqual(['015-file-list-orders', '016-file-list-filters', '017-file-name-trigrams'])
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

  describe.skipIf(!dialect.available)(`a search through the trigram index on ${dialect.name}`, () => {
    let handle: DatabaseHandle
    let drop: () => Promise<void>
    let files: FilesRepository
    let accountId: number
    const TRICKY = [
      'Report "final" 2024.pdf',
      'AND OR NOT NEAR(a b).txt',
      'star*ry ^night: col:umn.png',
      '100%_done\\back\\slash.txt',
      'ÄRGER über Straße.txt',
      'e\u0301tude é.txt',
      'İstanbul ǅungla Ωmega.txt',
      "it's a 'quote'.md",
      '日本語のファイル.txt',
      'ab',
      'REPORT-3.PDF',
    ]
    const SEARCHES = [
      ...['r', 'a', 'é', '%', '_', '\\', '"', '*', 'ab', 'AB', '.t', '%_', '日本'],
      ...[
        'report',
        'REPORT',
        '"final"',
        '"',
        '""',
        'final" 2024',
        'AND',
        'and or',
        'NEAR(',
        'near(a b)',
        'star*',
        '*ry',
        '^night',
        'col:umn',
      ],
      ...['100%', '%_d', '\\back\\', 'ärger', 'ÄRGER', 'Ärger', 'ÜBER', 'über', 'straße', 'STRASSE', 'étude', 'e\u0301t', 'istanbul'],
      ...['İstanbul', 'ǆungla', 'ωmega', "'quote'", '日本語', 'ファイル', 'nothing at all', '.txt', 'txt', 'ab.'],
    ]

    beforeAll(async () => {
      ;({ handle, drop } = await dialect.open())
      await migrateToLatest(handle)
      files = new FilesRepository(handle.db)
      accountId = (await new AccountsRepository(handle.db).create('trigrams@example.test', 'pro', T0)).id
      const other = (await new AccountsRepository(handle.db).create('trigrams-other@example.test', 'pro', T0)).id
      for (let i = 0; i < 3 * TRICKY.length; i++) {
        await files.insert({
          account_id: i % 3 === 2 ? other : accountId,
          token: `trigram-${i}`,
          filename: TRICKY[i % TRICKY.length]!.normalize('NFC'),
          size: i,
          content_type: 'text/plain',
          sha256: 'x',
          storage_key: `trigram-${i}`,
          created_at: T0 + i,
          expires_at: i % 5 === 4 ? T0 - 1 : null,
        })
      }
      if (dialect.name === 'postgres') await sql`analyze`.execute(handle.db)
    })
    afterAll(async () => {
      await handle.db.destroy()
      await drop()
    })

    /** What the rules say, from every live file of the account read in full: A to Z folded, every other character as it is. */
    async function expectedIds(search: string) {
      const rows = await handle.db
        .selectFrom('files')
        .select(['id', 'filename', 'expires_at'])
        .where('account_id', '=', accountId)
        .orderBy('id')
        .execute()
      const needle = asciiLowerCase(search.normalize('NFC'))
      return rows
        .filter((row) => (row.expires_at === null || row.expires_at > T0) && asciiLowerCase(row.filename).includes(needle))
        .map((row) => Number(row.id))
    }

    it('finds exactly what the rules say, whatever characters the search holds, and pages the same either way', async () => {
      for (const raw of SEARCHES) {
        const search = raw.normalize('NFC')
        const expected = await expectedIds(search)
        const found = (await files.matchingIds(accountId, T0, { search }, 1_000)).sort((a, b) => a - b)
        expect(found, search).toEqual(expected)
        expect(await files.countMatching(accountId, T0, { search }), search).toBe(expected.length)
        for (const sort of FILE_SORTS) {
          const listing: FileListing = { sort, order: 'asc', search }
          const alongTheIndex = await files.listPage(accountId, 1, 4, T0, false, listing)
          expect(await files.listPage(accountId, 1, 4, T0, false, listing, found), `${search} ${sort}`).toEqual(alongTheIndex)
        }
      }
    })

    it('reads the trigram index for a search of 3 characters or more, among many files', async () => {
      // 20,000 more names, none holding the searches: with a few dozen files, reading them all is cheaper.
      await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 20000)
        insert into files (account_id, token, filename, size, content_type, sha256, storage_key, created_at)
        select ${accountId}, 'filler-' || i, 'filler-' || i || '.bin', i, 'text/plain', 'x', 'filler-' || i, ${T0} from n`.execute(
        handle.db,
      )
      if (dialect.name === 'postgres') await sql`analyze files`.execute(handle.db)
      try {
        for (const search of ['report', 'ärger', 'NEAR(', '100%', '"final"']) {
          if (dialect.name === 'postgres') {
            const plan = await planOf(handle.db, dialect.name, files['listed'](accountId, T0, { search }).select('id').compile())
            expect(plan, search).toMatch(/Bitmap Index Scan on files_name_trigrams/)
            continue
          }
          // SQLite: the FTS5 table gives the candidates, which are then looked up by id, not every file read.
          const candidates = await files['trigramCandidates'](search)
          expect(candidates, search).toBeDefined()
          expect(candidates).toEqual(expect.arrayContaining(await files.matchingIds(accountId, T0, { search }, 1_000)))
          const plan = await planOf(handle.db, dialect.name, files['listed'](accountId, T0, { search }, candidates).select('id').compile())
          expect(plan, search).toMatch(/SEARCH files USING (INTEGER PRIMARY KEY|INDEX \w+ \(account_id=\? AND id=\?\))/)
          expect(plan, search).toMatch(/SCAN json_each/)
          expect(plan, search).not.toMatch(/SCAN files|account_id=\?\)$/m)
          // The page is then sorted from its matches, not read along the sort's index testing each file.
          const among = await files.matchingIds(accountId, T0, { search }, 1_000)
          for (const sort of FILE_SORTS) {
            const page = files['pageQuery'](accountId, 0, 20, T0, sort, 'desc', { search }, among).compile()
            expect(await planOf(handle.db, dialect.name, page), `${search} ${sort}`).not.toMatch(/files_account_/)
          }
        }
        // Fewer than 3 characters hold no trigram; more candidates than TRIGRAM_CANDIDATES (in any account) cost more to look up
        // one by one than reading the account's names: both read the names, and find the same.
        for (const search of ['r', 'ab', 'filler']) {
          if (dialect.name === 'sqlite') expect(await files['trigramCandidates'](search), search).toBeUndefined()
          expect(
            (await files.matchingIds(accountId, T0, { search }, 100_000)).sort((a, b) => a - b),
            search,
          ).toEqual(await expectedIds(search))
        }
      } finally {
        await handle.db.deleteFrom('files').where('token', 'like', 'filler-%').execute()
      }
    })

    it('keeps the index in step with renames, deletions and expiry', async () => {
      const insert = (filename: string, token: string, expires_at: number | null = null) =>
        files.insert({
          account_id: accountId,
          token,
          filename,
          size: 1,
          content_type: 'text/plain',
          sha256: 'x',
          storage_key: token,
          created_at: T0,
          expires_at,
        })
      const found = (search: string, now = T0) => files.matchingIds(accountId, now, { search }, 1_000)
      const renamed = await insert('quarterly-zebra.txt', 'step-rename')
      expect(await found('zebra')).toEqual([renamed.id])
      await files.update(accountId, renamed.id, { filename: 'yearly-okapi.txt' }, T0)
      expect(await found('zebra')).toEqual([])
      expect(await found('okapi')).toEqual([renamed.id])
      await files.deleteOwned(accountId, renamed.id, T0)
      expect(await found('okapi')).toEqual([])
      const expiring = await insert('ephemeral-axolotl.txt', 'step-expiry', T0 + 10)
      expect(await found('axolotl')).toEqual([expiring.id])
      expect((await files.deleteExpired(T0 + 10, 100)).map((row) => row.id)).toContain(expiring.id)
      expect(await found('axolotl', T0 - 1)).toEqual([])
      // Reusing the name afterwards finds only the new file.
      const again = await insert('ephemeral-axolotl.txt', 'step-again')
      expect(await found('axolotl')).toEqual([again.id])
    })

    it('migration 017 indexes the files stored before it', async () => {
      const before = await dialect.open()
      try {
        await migrateTo(before.handle, '016-file-list-filters')
        const repository = new FilesRepository(before.handle.db)
        const owner = (await new AccountsRepository(before.handle.db).create('before-017@example.test', 'pro', T0)).id
        for (const [i, filename] of ['Report.pdf', 'photo.jpg', 'old report.txt'].entries()) {
          const file = { account_id: owner, token: `before-${i}`, filename, size: 1, content_type: 'text/plain', sha256: 'x' }
          await repository.insert({ ...file, storage_key: `before-${i}`, created_at: T0 + i, expires_at: null })
        }
        expect(await migrateToLatest(before.handle)).toEqual(['017-file-name-trigrams'])
        expect((await repository.matchingIds(owner, T0, { search: 'REPORT' }, 10)).sort((a, b) => a - b)).toHaveLength(2)
        expect(await repository.countMatching(owner, T0, { search: 'photo' })).toBe(1)
        if (dialect.name === 'sqlite') {
          expect(await repository['trigramCandidates']('REPORT')).toHaveLength(2)
        } else {
          const { rows } = await sql<{ indexdef: string }>`select indexdef from pg_indexes
            where schemaname = current_schema() and indexname = 'files_name_trigrams'`.execute(before.handle.db)
          expect(rows[0]?.indexdef).toMatch(/USING gin \(lower\(\(filename COLLATE "C"\)\) .*gin_trgm_ops\)/)
          // Without the index (pg_trgm not to be had, migration 017 skips it), the same query reads every name and finds the same.
          await sql`drop index files_name_trigrams`.execute(before.handle.db)
          expect(await repository.countMatching(owner, T0, { search: 'REPORT' })).toBe(2)
        }
      } finally {
        await before.handle.db.destroy()
        await before.drop()
      }
    })
  })

  it.skipIf(dialect.name !== 'postgres' || !dialect.available)(
    'migration 017 goes on without the index where pg_trgm cannot be created, and a search finds the same',
    async () => {
      // A database without pg_trgm and a user who may not create it (no CREATE on the database): its own, dropped after.
      const name = `trigram_fallback_${process.pid}_${Date.now()}`
      const admin = openPostgres(PG_URL)
      const url = new URL(PG_URL)
      url.username = name
      url.pathname = `/${name}`
      try {
        await sql`create role ${sql.id(name)} login`.execute(admin.db)
        await sql`create database ${sql.id(name)}`.execute(admin.db)
        const inDatabase = new URL(PG_URL)
        inDatabase.pathname = `/${name}`
        const owner = openPostgres(inDatabase.toString())
        await sql`create schema fileshare authorization ${sql.id(name)}`.execute(owner.db)
        await owner.db.destroy()
        const handle = openPostgres(url.toString(), { searchPath: 'fileshare' })
        try {
          expect(await migrateToLatest(handle)).toContain('017-file-name-trigrams')
          expect((await sql`select 1 from pg_extension where extname = 'pg_trgm'`.execute(handle.db)).rows).toEqual([])
          expect((await sql`select 1 from pg_indexes where indexname = 'files_name_trigrams'`.execute(handle.db)).rows).toEqual([])
          const repository = new FilesRepository(handle.db)
          const owner = (await new AccountsRepository(handle.db).create('fallback@example.test', 'pro', T0)).id
          for (const [i, filename] of ['Report 100%.pdf', 'report_1.txt', 'photo.jpg'].entries()) {
            const file = { account_id: owner, token: `fallback-${i}`, filename, size: 1, content_type: 'text/plain', sha256: 'x' }
            await repository.insert({ ...file, storage_key: `fallback-${i}`, created_at: T0 + i, expires_at: null })
          }
          expect(await repository.countMatching(owner, T0, { search: 'REPORT' })).toBe(2)
          expect(await repository.countMatching(owner, T0, { search: '100%' })).toBe(1)
          expect(await repository.countMatching(owner, T0, { search: 't_1' })).toBe(1)
          expect(await repository.countMatching(owner, T0, { search: 'rep_rt' })).toBe(0)
        } finally {
          await handle.db.destroy()
        }
      } finally {
        await sql`drop database if exists ${sql.id(name)}`.execute(admin.db)
        await sql`drop role if exists ${sql.id(name)}`.execute(admin.db)
        await admin.db.destroy()
      }
    },
  )

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

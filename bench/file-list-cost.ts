import { sql, type Kysely } from 'kysely'
import type { Database } from '../src/db/schema.js'
import { AccountsRepository } from '../src/db/repositories/accounts-repository.js'
import { FilesRepository } from '../src/db/repositories/files-repository.js'
import { FileService, type FileListing } from '../src/services/files.js'
import type { BlobStore } from '../src/storage/blob-store.js'
import { medianMs, seedAccounts, withBenchDatabase } from './list-cost-database.js'

/**
 * What GET /files's sorts and search cost as an account grows (issue 37), measured below HTTP (the
 * HTTP layer's share is the same for every sort; `npm run bench`'s load section measures the whole
 * request): FileService.list and listBefore on an account of BENCH_LIST_FILES files (1,000,000 by
 * default) and on one of 1,000, on SQLite, and on PostgreSQL too when BENCH_DATABASE_URL is set.
 * Prints one JSON line per database: each case's median time over its runs, at both sizes.
 *
 *   node --import tsx bench/file-list-cost.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/file-list-cost.ts
 */

const LARGE = Number(process.env.BENCH_LIST_FILES ?? 1_000_000)
const SMALL = 1_000
const RUNS = Number(process.env.BENCH_LIST_RUNS ?? 7)
const LIMIT = 100

/**
 * The account's rows, made by the database itself (a million in seconds): names in an order other
 * than the ids', half of them capitalised; sizes and download counts with many ties.
 */
async function seed(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', accountId: number, count: number) {
  const t0 = Date.now() - count * 1000
  const rows =
    dialect === 'sqlite'
      ? sql`with recursive n(i) as (select 0 union all select i + 1 from n where i < ${count - 1})
            select i from n`
      : sql`select cast(generate_series(0, ${count - 1}) as bigint) as i`
  const name =
    dialect === 'sqlite'
      ? sql`(case when i % 2 = 0 then 'Report-' else 'photo-' end) || printf('%07d', (i * 7919) % ${count}) || '.bin'`
      : sql`(case when i % 2 = 0 then 'Report-' else 'photo-' end) || lpad(((i * 7919) % ${count})::text, 7, '0') || '.bin'`
  await sql`insert into files (account_id, token, filename, size, content_type, sha256, storage_key, created_at, download_count)
            select ${accountId}, ${`t${accountId}-`} || i, ${name}, 1024 + (i * 7919) % 10485760, 'application/octet-stream',
                   'x', ${`k${accountId}-`} || i, cast(${t0} as bigint) + i * 1000, (i * 31) % 1000
            from (${rows}) as n`.execute(db)
  await db.updateTable('accounts').set({ total_files: count }).where('id', '=', accountId).execute()
  if (dialect === 'postgres') await sql`analyze files`.execute(db)
}

interface Case {
  name: string
  run: (service: FileService, accountId: number, count: number, ids: { min: number; max: number }) => Promise<unknown>
}

const listing = (sort: FileListing['sort'], order: FileListing['order'], search?: string): FileListing =>
  search === undefined ? { sort, order } : { sort, order, search }
const middlePage = (count: number) => Math.max(1, Math.floor(count / LIMIT / 2))
const lastPage = (count: number) => Math.max(1, Math.ceil(count / LIMIT))
/** A search matching one file: the digits of one name. */
const oneName = (count: number) => String((Math.floor(count / 2) * 7919) % count).padStart(7, '0')

const CASES: Case[] = [
  { name: 'upload_date desc, page 1', run: (s, a) => s.list(a, 1, LIMIT) },
  { name: 'upload_date desc, middle page', run: (s, a, n) => s.list(a, middlePage(n), LIMIT) },
  { name: 'upload_date desc, last page', run: (s, a, n) => s.list(a, lastPage(n), LIMIT) },
  {
    name: 'upload_date asc, before_id (deepest)',
    run: (s, a, _n, ids) => s.listBefore(a, ids.max - 101, LIMIT, listing('upload_date', 'asc')),
  },
  { name: 'filename asc, page 1', run: (s, a) => s.list(a, 1, LIMIT, listing('filename', 'asc')) },
  { name: 'filename asc, middle page', run: (s, a, n) => s.list(a, middlePage(n), LIMIT, listing('filename', 'asc')) },
  { name: 'filename desc, last page', run: (s, a, n) => s.list(a, lastPage(n), LIMIT, listing('filename', 'desc')) },
  { name: 'size desc, page 1', run: (s, a) => s.list(a, 1, LIMIT, listing('size', 'desc')) },
  { name: 'size asc, last page', run: (s, a, n) => s.list(a, lastPage(n), LIMIT, listing('size', 'asc')) },
  { name: 'download_count desc, page 1', run: (s, a) => s.list(a, 1, LIMIT, listing('download_count', 'desc')) },
  { name: 'download_count asc, middle page', run: (s, a, n) => s.list(a, middlePage(n), LIMIT, listing('download_count', 'asc')) },
  { name: 'q matching one file, page 1', run: (s, a, n) => s.list(a, 1, LIMIT, listing('upload_date', 'desc', oneName(n))) },
  { name: 'q matching one file, sort=size', run: (s, a, n) => s.list(a, 1, LIMIT, listing('size', 'asc', oneName(n))) },
  { name: 'q matching half (REPORT), page 1', run: (s, a) => s.list(a, 1, LIMIT, listing('filename', 'asc', 'REPORT')) },
  { name: 'q matching none, page 1', run: (s, a) => s.list(a, 1, LIMIT, listing('upload_date', 'desc', 'nothing-like-it')) },
  {
    name: 'q matching half, before_id (deepest)',
    run: (s, a, _n, ids) => s.listBefore(a, ids.min + 201, LIMIT, listing('upload_date', 'desc', 'report')),
  },
]

async function measure(databaseUrl: string | undefined) {
  return withBenchDatabase('file-list-cost', databaseUrl, async (handle) => {
    const accounts = new AccountsRepository(handle.db)
    const service = new FileService(new FilesRepository(handle.db), accounts, {} as BlobStore)
    const sizes = await seedAccounts(handle, 'list', [SMALL, LARGE], (accountId, count) =>
      seed(handle.db, handle.dialect, accountId, count),
    )
    const cases: Record<string, { small: number; large: number; ratio: number }> = {}
    for (const { name, run } of CASES) {
      const at = async (count: number) => {
        const { accountId, ids } = sizes[count]!
        return medianMs(() => run(service, accountId, count, ids), RUNS)
      }
      const smallMs = await at(SMALL)
      const largeMs = await at(LARGE)
      cases[name] = { small: smallMs, large: largeMs, ratio: Math.round((largeMs / smallMs) * 10) / 10 }
      console.error(`${handle.dialect}: ${name}: ${smallMs} ms at ${SMALL}, ${largeMs} ms at ${LARGE}`)
    }
    return {
      database: handle.dialect,
      files: { small: SMALL, large: LARGE },
      limit: LIMIT,
      runs: RUNS,
      seedSeconds: sizes[LARGE]!.seedSeconds,
      medianMs: cases,
    }
  })
}

console.log(JSON.stringify(await measure(undefined)))
if (process.env.BENCH_DATABASE_URL) console.log(JSON.stringify(await measure(process.env.BENCH_DATABASE_URL)))

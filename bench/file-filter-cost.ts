import { sql, type Kysely } from 'kysely'
import type { Database } from '../src/db/schema.js'
import { AccountsRepository } from '../src/db/repositories/accounts-repository.js'
import { FilesRepository } from '../src/db/repositories/files-repository.js'
import { FileService, type FileListing } from '../src/services/files.js'
import type { BlobStore } from '../src/storage/blob-store.js'
import { medianMs, seedAccounts, withBenchDatabase } from './list-cost-database.js'

/**
 * What GET /files's filters (`type`, `state`, issue 37) cost as an account grows, below HTTP as
 * bench/file-list-cost.ts measures the sorts and the search: FileService.list and listBefore on an
 * account of BENCH_LIST_FILES files (1,000,000 by default) and on one of 1,000, on SQLite, and on
 * PostgreSQL too when BENCH_DATABASE_URL is set. One JSON line per database: each case's median.
 * BENCH_WITHOUT_016=1 drops migration 016's indexes first, to see what they bring.
 *
 *   node --import tsx bench/file-filter-cost.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/file-filter-cost.ts
 */

const LARGE = Number(process.env.BENCH_LIST_FILES ?? 1_000_000)
const SMALL = 1_000
const RUNS = Number(process.env.BENCH_LIST_RUNS ?? 5)
const LIMIT = 100
const MIGRATION_016_INDEXES = ['files_account_type', 'files_account_upload_request', 'links_account_expiry', 'links_account_download_limit']

/**
 * The account's files and links, made by the database itself. Of every 1,000 files: 200 images
 * (png and jpeg), 100 PDFs, one video, the rest application/octet-stream; 5 with an expiry; 2 from an
 * upload request; each with its default link, and 1 with an expired link, 1 with a used-up one, 1
 * with a revoked expired one (not counted) and 20 with a link that expires later.
 */
async function seed(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', accountId: number, count: number) {
  const now = Date.now()
  const t0 = now - count * 1000
  const rows =
    dialect === 'sqlite'
      ? sql`with recursive n(i) as (select 0 union all select i + 1 from n where i < ${count - 1})
            select i from n`
      : sql`select cast(generate_series(0, ${count - 1}) as bigint) as i`
  const contentType = sql`case when i % 10 = 0 then 'image/png' when i % 10 = 1 then 'image/jpeg' when i % 10 = 2 then 'application/pdf'
                               when i % 1000 = 3 then 'video/mp4' else 'application/octet-stream' end`
  await sql`insert into files (account_id, token, filename, size, content_type, sha256, storage_key, created_at, download_count,
                               expires_at, source_type, upload_request_id)
            select ${accountId}, ${`t${accountId}-`} || i, 'file-' || i || '.bin', 1024 + (i * 7919) % 10485760, ${contentType},
                   'x', ${`k${accountId}-`} || i, cast(${t0} as bigint) + i * 1000, (i * 31) % 1000,
                   case when i % 200 = 5 then cast(${now + 86_400_000} as bigint) end,
                   case when i % 500 = 7 then 'upload_request' else 'api' end,
                   case when i % 500 = 7 then 1 end
            from (${rows}) as n`.execute(db)
  const files = sql`select id, created_at, cast(substr(token, ${`t${accountId}-`.length + 1}) as bigint) as i from files where account_id = ${accountId}`
  const link = (suffix: string, condition: RawSql, columns: RawSql) =>
    sql`insert into links (file_id, account_id, token, is_default, created_at, expires_at, max_downloads, download_count, revoked_at)
        select id, ${accountId}, ${`l${accountId}-${suffix}-`} || i, ${suffix === 'default' ? 1 : 0}, created_at, ${columns}
        from (${files}) as f where ${condition}`.execute(db)
  await link('default', sql`1 = 1`, sql`null, null, 0, null`)
  await link('expired', sql`i % 1000 = 9`, sql`cast(${now - 60_000} as bigint), null, 0, null`)
  await link('used', sql`i % 1000 = 11`, sql`null, 1, 1, null`)
  await link('revoked', sql`i % 1000 = 13`, sql`cast(${now - 60_000} as bigint), null, 0, cast(${now - 30_000} as bigint)`)
  await link('later', sql`i % 50 = 17`, sql`cast(${now + 86_400_000} as bigint), 5, 0, null`)
  await db.updateTable('accounts').set({ total_files: count }).where('id', '=', accountId).execute()
  if (dialect === 'postgres') await sql`analyze`.execute(db)
}
type RawSql = ReturnType<typeof sql>

interface Case {
  name: string
  run: (service: FileService, accountId: number, count: number, ids: { min: number; max: number }) => Promise<unknown>
}

const listing = (
  filters: Omit<FileListing, 'sort' | 'order'>,
  sort: FileListing['sort'] = 'upload_date',
  order: FileListing['order'] = 'desc',
) => ({
  sort,
  order,
  ...filters,
})
const middlePage = (count: number, share: number) => Math.max(1, Math.floor((count * share) / LIMIT / 2))

const CASES: Case[] = [
  { name: 'no filter, page 1 (reference)', run: (s, a) => s.list(a, 1, LIMIT) },
  { name: 'type=video (0.1%), page 1', run: (s, a) => s.list(a, 1, LIMIT, listing({ types: ['video'] })) },
  { name: 'type=video/mp4, sort=size', run: (s, a) => s.list(a, 1, LIMIT, listing({ types: ['video/mp4'] }, 'size', 'asc')) },
  { name: 'type=image (20%), page 1', run: (s, a) => s.list(a, 1, LIMIT, listing({ types: ['image'] })) },
  { name: 'type=image, middle page', run: (s, a, n) => s.list(a, middlePage(n, 0.2), LIMIT, listing({ types: ['image'] })) },
  { name: 'type=image, sort=filename page 1', run: (s, a) => s.list(a, 1, LIMIT, listing({ types: ['image'] }, 'filename', 'asc')) },
  {
    name: 'type=image, before_id (deepest)',
    run: (s, a, _n, ids) => s.listBefore(a, ids.min + 201, LIMIT, listing({ types: ['image'] })),
  },
  { name: 'type=application/pdf&type=video, page 1', run: (s, a) => s.list(a, 1, LIMIT, listing({ types: ['application/pdf', 'video'] })) },
  { name: 'state=expiring (0.5%), page 1', run: (s, a) => s.list(a, 1, LIMIT, listing({ states: ['expiring'] })) },
  { name: 'state=expiring, sort=size', run: (s, a) => s.list(a, 1, LIMIT, listing({ states: ['expiring'] }, 'size', 'desc')) },
  { name: 'state=from_upload_request (0.2%), page 1', run: (s, a) => s.list(a, 1, LIMIT, listing({ states: ['from_upload_request'] })) },
  { name: 'state=expired_links (0.2%), page 1', run: (s, a) => s.list(a, 1, LIMIT, listing({ states: ['expired_links'] })) },
  {
    name: 'state=expired_links&type=image, sort=size',
    run: (s, a) => s.list(a, 1, LIMIT, listing({ states: ['expired_links'], types: ['image'] }, 'size', 'asc')),
  },
  { name: 'q=file-1&type=image, page 1', run: (s, a) => s.list(a, 1, LIMIT, listing({ search: 'file-1', types: ['image'] })) },
]

function measure(databaseUrl: string | undefined) {
  return withBenchDatabase('file-filter-cost', databaseUrl, async (handle) => {
    const without016 = process.env.BENCH_WITHOUT_016 === '1'
    if (without016) for (const name of MIGRATION_016_INDEXES) await handle.db.schema.dropIndex(name).execute()
    const accounts = new AccountsRepository(handle.db)
    const service = new FileService(new FilesRepository(handle.db), accounts, {} as BlobStore)
    const sizes = await seedAccounts(handle, 'filter', [SMALL, LARGE], (accountId, count) =>
      seed(handle.db, handle.dialect, accountId, count),
    )
    const cases: Record<string, { small: number; large: number; total: number }> = {}
    for (const { name, run } of CASES) {
      const at = (count: number) => {
        const { accountId, ids } = sizes[count]!
        return medianMs(() => run(service, accountId, count, ids), RUNS)
      }
      const { accountId, ids } = sizes[LARGE]!
      const answer = (await run(service, accountId, LARGE, ids)) as { total: number }
      const smallMs = await at(SMALL)
      const largeMs = await at(LARGE)
      cases[name] = { small: smallMs, large: largeMs, total: answer.total }
      console.error(`${handle.dialect}: ${name}: ${smallMs} ms at ${SMALL}, ${largeMs} ms at ${LARGE} (total ${answer.total})`)
    }
    return {
      database: handle.dialect,
      indexes016: !without016,
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

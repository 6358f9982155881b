import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import type { NewFileRow } from '../src/db/schema.js'

// The compiled code, as the server under test runs it (its migrations, its schema): `npm run bench`
// builds first, and src/ may hold migrations that dist/ does not have yet.
const { openDatabase } = (await import(
  new URL('../dist/db/open-database.js', import.meta.url).href
)) as typeof import('../src/db/open-database.js')

const ROWS_PER_INSERT = 500
const ROWS_PER_TRANSACTION = 20_000
/** A token (24 bytes), a fake sha256 (32) and a storage key (16). */
const RANDOM_BYTES_PER_ROW = 72

/**
 * Gives an account `count` file rows (metadata only: their blobs do not exist) directly in the
 * database, a million in seconds rather than the hours uploads would take, each with its default
 * link. FilesRepository.insert writes one row per transaction; this writes the same rows in batches and bumps the account's
 * kept counters (total_files, total_size) in the same transaction by the same expressions, so
 * GET /stats stays exact. Rows are one second apart, the newest last, as real uploads would be.
 */
export async function seedFiles(sqlitePath: string, accountId: number, count: number): Promise<void> {
  const { db } = await openDatabase({ sqlitePath, databaseUrl: undefined, databaseSchema: undefined })
  try {
    const firstCreatedAt = Date.now() - count * 1000
    for (let start = 0; start < count; start += ROWS_PER_TRANSACTION) {
      const end = Math.min(count, start + ROWS_PER_TRANSACTION)
      await db.transaction().execute(async (trx) => {
        let addedSize = 0
        for (let batch = start; batch < end; batch += ROWS_PER_INSERT) {
          const rows: NewFileRow[] = []
          // One call to the CSPRNG per batch: a call per value took a quarter of the seeding time.
          const random = randomBytes(ROWS_PER_INSERT * RANDOM_BYTES_PER_ROW)
          for (let i = batch; i < Math.min(end, batch + ROWS_PER_INSERT); i++) {
            const at = (i - batch) * RANDOM_BYTES_PER_ROW
            const size = 1024 + ((i * 7919) % (10 * 1024 * 1024))
            addedSize += size
            rows.push({
              account_id: accountId,
              token: random.subarray(at, at + 24).toString('base64url'),
              filename: `seeded-${String(i).padStart(7, '0')}.bin`,
              size,
              content_type: 'application/octet-stream',
              sha256: random.subarray(at + 24, at + 56).toString('hex'),
              storage_key: random.subarray(at + 56, at + 72).toString('hex'),
              created_at: firstCreatedAt + i * 1000,
            })
          }
          const inserted = await trx.insertInto('files').values(rows).returning(['id', 'token', 'created_at']).execute()
          // Every file has its default link (migration 007), as FilesRepository.insert gives it.
          await trx
            .insertInto('links')
            .values(
              inserted.map((row) => ({
                file_id: row.id,
                account_id: accountId,
                token: row.token,
                is_default: 1,
                created_at: row.created_at,
              })),
            )
            .execute()
        }
        await trx
          .updateTable('accounts')
          .set({ total_files: sql`total_files + ${end - start}`, total_size: sql`total_size + ${addedSize}` })
          .where('id', '=', accountId)
          .execute()
      })
    }
  } finally {
    await db.destroy()
  }
}

/** Ids of the account's files, lowest and highest: the bench reads the one in the middle. */
export async function fileIdRange(sqlitePath: string, accountId: number): Promise<{ min: number; max: number }> {
  const { db } = await openDatabase({ sqlitePath, databaseUrl: undefined, databaseSchema: undefined })
  try {
    const row = await db
      .selectFrom('files')
      .select((eb) => [eb.fn.min('id').as('min'), eb.fn.max('id').as('max')])
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow()
    return { min: Number(row.min), max: Number(row.max) }
  } finally {
    await db.destroy()
  }
}

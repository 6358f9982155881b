import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { openDatabase } from '../src/db/open-database.js'
import type { DatabaseHandle } from '../src/db/dialect.js'
import { AccountsRepository } from '../src/db/repositories/accounts-repository.js'

/** The median time of `runs` calls of `run`, in ms (two decimals), after one call to warm it up. */
export async function medianMs(run: () => Promise<unknown>, runs: number): Promise<number> {
  await run()
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    await run()
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  return Math.round(times[Math.floor(times.length / 2)]! * 100) / 100
}

/**
 * A migrated database of its own for a listing benchmark: a SQLite file in a temporary folder, or a
 * schema of its own on PostgreSQL when `databaseUrl` is given. `use` runs on it; it is removed after.
 */
export async function withBenchDatabase<T>(
  name: string,
  databaseUrl: string | undefined,
  use: (handle: DatabaseHandle) => Promise<T>,
): Promise<T> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `${name}-`))
  const schema = `${name.replaceAll('-', '_')}_${process.pid}`
  if (databaseUrl) {
    const setup = await openDatabase({ sqlitePath: '', databaseUrl, databaseSchema: undefined })
    await sql`create schema ${sql.id(schema)}`.execute(setup.db)
    await setup.db.destroy()
  }
  const handle = await openDatabase({
    sqlitePath: path.join(dir, 'db.sqlite'),
    databaseUrl,
    databaseSchema: databaseUrl ? schema : undefined,
  })
  try {
    return await use(handle)
  } finally {
    if (databaseUrl) await sql`drop schema ${sql.id(schema)} cascade`.execute(handle.db)
    await handle.db.destroy()
    await fs.rm(dir, { recursive: true, force: true })
  }
}

/** An account seeded for a listing benchmark: its id, its files' id range, and how long the seeding took. */
export interface SeededAccount {
  accountId: number
  ids: { min: number; max: number }
  seedSeconds: number
}

/** One account per count, each given `count` files by `seed`, keyed by the count. */
export async function seedAccounts(
  handle: DatabaseHandle,
  name: string,
  counts: readonly number[],
  seed: (accountId: number, count: number) => Promise<void>,
): Promise<Record<number, SeededAccount>> {
  const accounts = new AccountsRepository(handle.db)
  const sizes: Record<number, SeededAccount> = {}
  for (const count of counts) {
    const { id } = await accounts.create(`${name}-${count}@bench.test`, 'pro', Date.now())
    const start = performance.now()
    await seed(id, count)
    const range = await handle.db
      .selectFrom('files')
      .select((eb) => [eb.fn.min('id').as('min'), eb.fn.max('id').as('max')])
      .where('account_id', '=', id)
      .executeTakeFirstOrThrow()
    sizes[count] = {
      accountId: id,
      ids: { min: Number(range.min), max: Number(range.max) },
      seedSeconds: Math.round((performance.now() - start) / 100) / 10,
    }
  }
  return sizes
}

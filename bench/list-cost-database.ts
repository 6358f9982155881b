import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { openDatabase } from '../src/db/open-database.js'
import type { DatabaseHandle } from '../src/db/dialect.js'

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

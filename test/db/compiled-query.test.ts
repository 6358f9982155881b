import fs from 'node:fs/promises'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { openPostgres, openSqlite, type DatabaseHandle } from '../../src/db/dialect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { AccountsRepository } from '../../src/db/repositories/accounts-repository.js'
import { compiledOnce } from '../../src/db/repositories/compiled-query.js'
import type { Database } from '../../src/db/schema.js'
import { allowDirectReads, directReadsOf, withStatementCache } from '../../src/db/statement-cache.js'
import { createPgSchema, dropPgSchema, isPostgresReachable, PG_URL } from '../helpers/scale-out-env.js'
import { makeTempDir } from '../helpers/test-app.js'

/** A table of its own, outside the service's schema: the queries are built with a Kysely that does not check it. */
interface TestSchema {
  t: { n: number }
}

describe('compiledOnce on SQLite', () => {
  let db: Kysely<TestSchema>
  afterEach(() => db.destroy())

  function open(direct: boolean) {
    const database = new SQLite(':memory:')
    database.exec('create table t (n integer)')
    database.exec('insert into t values (1), (2), (3)')
    const cached = withStatementCache(database)
    db = new Kysely<TestSchema>({ dialect: new SqliteDialect({ database: cached }) })
    if (direct) allowDirectReads(db, cached)
    const above = compiledOnce(db as unknown as Kysely<Database>, 1, (n: number) =>
      (db as Kysely<TestSchema>).selectFrom('t').select('n').where('n', '>', n).orderBy('n'),
    ) as unknown as (n: number) => Promise<Array<{ n: number }>>
    return { above, executeQuery: vi.spyOn(db, 'executeQuery') }
  }

  it('reads round Kysely where allowDirectReads allows it, with the same rows', async () => {
    const direct = open(true)
    expect(await direct.above(1)).toEqual([{ n: 2 }, { n: 3 }])
    expect(direct.executeQuery).not.toHaveBeenCalled()
    await db.destroy()
    const through = open(false)
    expect(await through.above(1)).toEqual([{ n: 2 }, { n: 3 }])
    expect(through.executeQuery).toHaveBeenCalledTimes(1)
  })

  it('waits for another caller’s open transaction and never sees its uncommitted rows', async () => {
    const { above, executeQuery } = open(true)
    let inserted!: () => void
    const insertedOne = new Promise<void>((resolve) => (inserted = resolve))
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    const transaction = db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ n: 4 }).execute()
      inserted()
      await released
      throw new Error('rolled back')
    })
    await insertedOne
    const reading = above(0)
    release()
    await expect(transaction).rejects.toThrow('rolled back')
    expect(await reading).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }])
    expect(executeQuery).toHaveBeenCalledTimes(1)
  })
})

const postgresReachable = await isPostgresReachable()

describe.each([
  { dialect: 'sqlite' as const, available: true },
  { dialect: 'postgres' as const, available: postgresReachable },
])('the hot reads on $dialect as the service opens it', ({ dialect, available }) => {
  let handle: DatabaseHandle
  let drop: () => Promise<void>

  afterEach(async () => {
    await handle.db.destroy()
    await drop()
  })

  it.skipIf(!available)(dialect === 'sqlite' ? 'run straight on the connection' : 'go through Kysely', async () => {
    if (dialect === 'sqlite') {
      const dir = await makeTempDir('fileshare-direct-')
      handle = openSqlite(path.join(dir, 'fileshare.sqlite'))
      drop = () => fs.rm(dir, { recursive: true, force: true })
    } else {
      const schema = await createPgSchema()
      handle = openPostgres(PG_URL, { searchPath: schema })
      drop = () => dropPgSchema(schema)
    }
    await migrateToLatest(handle)
    expect(directReadsOf(handle.db) !== undefined).toBe(dialect === 'sqlite')
    const accounts = new AccountsRepository(handle.db)
    const created = await accounts.create('direct@example.test', 'free', 1)
    const executeQuery = vi.spyOn(handle.db, 'executeQuery')
    expect((await accounts.findById(created.id))?.email).toBe('direct@example.test')
    expect(executeQuery).toHaveBeenCalledTimes(dialect === 'sqlite' ? 0 : 1)
  })
})

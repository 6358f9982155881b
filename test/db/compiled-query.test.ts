import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { compiledOnce } from '../../src/db/repositories/compiled-query.js'
import type { Database } from '../../src/db/schema.js'
import { allowDirectReads, withStatementCache } from '../../src/db/statement-cache.js'

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

import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { openPostgres } from '../../src/db/dialect.js'
import { createPgSchema, dropPgSchema, isPostgresReachable, PG_URL } from '../helpers/scale-out-env.js'

const postgresReachable = await isPostgresReachable()
if (!postgresReachable) console.warn('SKIPPING test/db/postgres-query-timeout.test.ts: PostgreSQL does not answer.')

/**
 * FILESHARE_BACKEND_TIMEOUT_MS on PostgreSQL (src/db/dialect.ts): a query that gets no answer in
 * time fails the request, and the connection it ran on is never handed to another one. node-postgres
 * would otherwise queue the transaction's ROLLBACK behind the query still running, and the pool
 * would give the connection, still inside that transaction, to a later request whose COMMIT would
 * then commit the failed transaction's writes too.
 */
describe.skipIf(!postgresReachable)('PostgreSQL: a query that times out', () => {
  it('rolls its transaction back, and its connection serves no one after', async () => {
    const schema = await createPgSchema()
    // One connection, so that a connection left in the pool would be the one the next request gets.
    const handle = openPostgres(PG_URL, { searchPath: schema, maxConnections: 1, queryTimeoutMs: 300 })
    const observer = new pg.Client({ connectionString: PG_URL })
    await observer.connect()
    try {
      await sql`create table t (v int)`.execute(handle.db)
      const failed = handle.db.transaction().execute(async (trx) => {
        await sql`insert into t values (1)`.execute(trx)
        await sql`select pg_sleep(1)`.execute(trx)
      })
      await expect(failed).rejects.toMatchObject({ code: 'service_unavailable' })
      await sql`insert into t values (2)`.execute(handle.db)
      await sleep(1_200) // the slow statement is over: a transaction still open would now take a COMMIT
      await handle.db.transaction().execute((trx) => sql`insert into t values (3)`.execute(trx))
      const { rows } = await observer.query<{ v: number }>(`select v from ${schema}.t order by v`)
      expect(rows.map((row) => row.v)).toEqual([2, 3])
    } finally {
      await handle.db.destroy()
      await observer.end()
      await dropPgSchema(schema)
    }
  })
})

import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/open-database.js'
import { createPgSchema, dropPgSchema, isPostgresReachable, PG_URL } from '../helpers/scale-out-env.js'

const postgresReachable = await isPostgresReachable()
if (!postgresReachable) console.warn('SKIPPING test/db/postgres-pool-size.test.ts: PostgreSQL does not answer.')

/**
 * FILESHARE_DATABASE_POOL_SIZE: each process holds at most that many connections to PostgreSQL
 * (instances x pool size must stay under the server's max_connections; docs/scale-out.md, "Sizing").
 */
describe.skipIf(!postgresReachable)('PostgreSQL: the pool size', () => {
  it('bounds the connections running queries at once; the others wait their turn', async () => {
    const schema = await createPgSchema()
    const handle = await openDatabase({ sqlitePath: '', databaseUrl: PG_URL, databaseSchema: schema, databasePoolSize: 2 })
    const observer = new pg.Client({ connectionString: PG_URL })
    await observer.connect()
    const marker = `pool_size_${randomBytes(6).toString('hex')}`
    let running = true
    let most = 0
    const watching = (async () => {
      while (running) {
        const { rows } = await observer.query<{ n: string }>(
          `select count(*) as n from pg_stat_activity where state = 'active' and query like '%${marker}%' and pid <> pg_backend_pid()`,
        )
        most = Math.max(most, Number(rows[0]!.n))
        await sleep(20)
      }
    })()
    try {
      const started = performance.now()
      await Promise.all(Array.from({ length: 6 }, () => sql`select pg_sleep(0.3) /* ${sql.raw(marker)} */`.execute(handle.db)))
      // Six queries of 0.3 s on two connections: three rounds at least.
      expect(performance.now() - started).toBeGreaterThanOrEqual(850)
      expect(most).toBe(2)
    } finally {
      running = false
      await watching
      await handle.db.destroy()
      await observer.end()
      await dropPgSchema(schema)
    }
  })
})

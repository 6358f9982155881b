import { sql, type Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

/**
 * Dashboard sessions also end after a while without a request (FILESHARE_SESSION_IDLE_TIMEOUT_MS):
 * each keeps when it was last used. Sessions that exist already count as used when they began.
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const bigint = dialect === 'sqlite' ? 'integer' : 'bigint'
  await db.schema
    .alterTable('sessions')
    .addColumn('last_seen_at', bigint, (c) => c.notNull().defaultTo(0))
    .execute()
  await sql`update sessions set last_seen_at = created_at`.execute(db)
}

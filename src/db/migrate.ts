import { setTimeout as sleep } from 'node:timers/promises'
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely'
import type { DatabaseHandle, DialectName } from './dialect.js'
import type { Database } from './schema.js'
import * as initial from './migrations/001-initial.js'
import * as dashboard from './migrations/002-dashboard.js'
import * as filesStorageKey from './migrations/003-files-storage-key.js'
import * as uploads from './migrations/004-uploads.js'
import * as sessionLastSeen from './migrations/005-session-last-seen.js'
import * as accountEmailCase from './migrations/006-account-email-case.js'
import * as links from './migrations/007-links.js'
import * as quotasIdempotencyPaging from './migrations/008-quotas-idempotency-paging.js'
import * as keyScopesAudit from './migrations/009-key-scopes-audit.js'
import * as webhooks from './migrations/010-webhooks.js'
import * as uploadRequests from './migrations/011-upload-requests.js'
import * as scanning from './migrations/012-scanning.js'
import * as partialIndexes from './migrations/013-partial-indexes.js'
import * as accountProtection from './migrations/014-account-protection.js'
import * as fileListOrders from './migrations/015-file-list-orders.js'
import * as fileListFilters from './migrations/016-file-list-filters.js'
import * as fileNameTrigrams from './migrations/017-file-name-trigrams.js'

type DialectMigration = { up(db: Kysely<unknown>, dialect: DialectName): Promise<void> }

// Listed here rather than read from a folder, so that the compiled build and the tests agree.
const MIGRATIONS: Record<string, DialectMigration> = {
  '001-initial': initial,
  '002-dashboard': dashboard,
  '003-files-storage-key': filesStorageKey,
  '004-uploads': uploads,
  '005-session-last-seen': sessionLastSeen,
  '006-account-email-case': accountEmailCase,
  '007-links': links,
  '008-quotas-idempotency-paging': quotasIdempotencyPaging,
  '009-key-scopes-audit': keyScopesAudit,
  '010-webhooks': webhooks,
  '011-upload-requests': uploadRequests,
  '012-scanning': scanning,
  '013-partial-indexes': partialIndexes,
  '014-account-protection': accountProtection,
  '015-file-list-orders': fileListOrders,
  '016-file-list-filters': fileListFilters,
  '017-file-name-trigrams': fileNameTrigrams,
}

/** Every migration's name, in the order they run. */
export const MIGRATION_NAMES = Object.keys(MIGRATIONS)

class DialectMigrationProvider implements MigrationProvider {
  constructor(private readonly dialect: DialectName) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return Object.fromEntries(
      Object.entries(MIGRATIONS).map(([name, migration]) => [name, { up: (db: Kysely<unknown>) => migration.up(db, this.dialect) }]),
    )
  }
}

/**
 * PostgreSQL error codes for a schema, a table or a column that does not exist (any more): what a
 * catalog read returns when another session drops or creates a schema's tables under it. 42703
 * was seen once in the suite (`column "name" of relation "kysely_migration"`, from getTables while
 * other test files migrated); the churn test in test/db/repositories.test.ts does not reproduce it.
 */
const VANISHED_CODES = new Set(['3F000', '42P01', '42703'])

/** How often a catalog read that lost a race with another session's DDL is tried before the error stands. */
const MIGRATION_ATTEMPTS = 10

/** Brings the schema up to date. Concurrent starts are safe: one migrates, the others wait and find nothing to do. */
export async function migrateToLatest(handle: DatabaseHandle): Promise<string[]> {
  return migrateUpTo(handle, undefined)
}

/**
 * Brings the schema up to the migration named `last` (included), as an older release would leave
 * it: tests of a migration start from the schema before it.
 */
export async function migrateTo(handle: DatabaseHandle, last: string): Promise<string[]> {
  if (!MIGRATION_NAMES.includes(last)) throw new Error(`No migration named ${last}.`)
  return migrateUpTo(handle, last)
}

async function migrateUpTo(handle: DatabaseHandle, last: string | undefined): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(handle, last)
    } catch (error) {
      // Before it migrates, Kysely's migrator reads the catalog of every schema in the database
      // (PostgresIntrospector.getTables): a schema, table or column that someone else drops
      // meanwhile fails that read, not the migration.
      const code = (error as { code?: unknown }).code
      if (handle.dialect !== 'postgres' || attempt >= MIGRATION_ATTEMPTS || typeof code !== 'string' || !VANISHED_CODES.has(code))
        throw error
      // A busy machine makes the read slow and the race likely: back off a little more each time
      // (at most about 1 s in all), so that the read fits between two drops.
      await sleep(20 * attempt)
    }
  }
}

async function migrateOnce({ db, dialect }: DatabaseHandle, last: string | undefined): Promise<string[]> {
  if (dialect === 'sqlite') {
    // Kysely takes no lock on SQLite. BEGIN IMMEDIATE takes the database's write lock (waiting
    // out busy_timeout), so a CLI command and a server starting at once migrate one after the other.
    return db.connection().execute(async (connection) => {
      await sql`begin immediate`.execute(connection)
      try {
        const names = await runMigrator(connection, dialect, last, { disableTransactions: true })
        await sql`commit`.execute(connection)
        return names
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => {})
        throw error
      }
    })
  }
  // Unless told the schema, Kysely takes migration tables found in any schema of the database as
  // its own: a second schema (FILESHARE_DATABASE_SCHEMA) would then never get them and fail.
  const migrationTableSchema = (await sql<{ name: string | null }>`select current_schema() as name`.execute(db)).rows[0]?.name ?? undefined
  return runMigrator(db, dialect, last, { migrationTableSchema })
}

async function runMigrator(
  db: Kysely<Database>,
  dialect: DialectName,
  last: string | undefined,
  options: { migrationTableSchema?: string; disableTransactions?: boolean },
): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new DialectMigrationProvider(dialect), ...options })
  const { error, results } = last === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(last)
  if (error) throw error
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

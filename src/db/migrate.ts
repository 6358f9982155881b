import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely'
import type { DatabaseHandle, DialectName } from './dialect.js'
import * as initial from './migrations/001-initial.js'

type DialectMigration = { up(db: Kysely<unknown>, dialect: DialectName): Promise<void> }

// Listed here rather than read from a folder, so that the compiled build and the tests agree.
const MIGRATIONS: Record<string, DialectMigration> = {
  '001-initial': initial,
}

class DialectMigrationProvider implements MigrationProvider {
  constructor(private readonly dialect: DialectName) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return Object.fromEntries(
      Object.entries(MIGRATIONS).map(([name, migration]) => [name, { up: (db: Kysely<unknown>) => migration.up(db, this.dialect) }]),
    )
  }
}

/** PostgreSQL error codes for a schema or a table that does not exist (any more). */
const VANISHED_CODES = new Set(['3F000', '42P01'])

/** Brings the schema up to date. Kysely's migrator holds a lock, so concurrent starts are safe. */
export async function migrateToLatest(handle: DatabaseHandle): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(handle)
    } catch (error) {
      // Before it migrates, Kysely's migrator reads the catalog of every schema in the database: a
      // schema or table that someone else drops meanwhile fails that read, not the migration.
      const code = (error as { code?: unknown }).code
      if (handle.dialect !== 'postgres' || attempt >= 5 || typeof code !== 'string' || !VANISHED_CODES.has(code)) throw error
    }
  }
}

async function migrateOnce({ db, dialect }: DatabaseHandle): Promise<string[]> {
  // Unless told the schema, Kysely takes migration tables found in any schema of the database as
  // its own: a second schema (FILESHARE_DATABASE_SCHEMA) would then never get them and fail.
  const migrationTableSchema =
    dialect === 'postgres'
      ? ((await sql<{ name: string | null }>`select current_schema() as name`.execute(db)).rows[0]?.name ?? undefined)
      : undefined
  const migrator = new Migrator({ db, provider: new DialectMigrationProvider(dialect), migrationTableSchema })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

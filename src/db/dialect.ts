import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely'
import pg from 'pg'
import type { Database } from './schema.js'

export type DialectName = 'sqlite' | 'postgres'

export interface DatabaseHandle {
  db: Kysely<Database>
  dialect: DialectName
}

/** Opens the embedded SQLite database in WAL mode, shared safely by the server and the CLI. */
export function openSqlite(file: string): DatabaseHandle {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true })
  const database = new SQLite(file)
  database.pragma('journal_mode = WAL')
  // NORMAL is crash-safe in WAL mode; blobs are fsynced before their row commits.
  database.pragma('synchronous = NORMAL')
  database.pragma('foreign_keys = ON')
  // The CLI and the server share the file: wait for a writer instead of failing with SQLITE_BUSY.
  database.pragma('busy_timeout = 5000')
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }), dialect: 'sqlite' }
}

// bigint columns hold byte sizes and counters, all far below 2^53: read them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value))

/**
 * Opens a PostgreSQL pool. `searchPath` confines the service to one schema (tests use a fresh
 * schema each, so that they can run side by side in one database).
 */
export function openPostgres(connectionString: string, options: { searchPath?: string; maxConnections?: number } = {}): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString,
    max: options.maxConnections ?? 10,
    ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
  })
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on('error', () => {})
  return { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), dialect: 'postgres' }
}

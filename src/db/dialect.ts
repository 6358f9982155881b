import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
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

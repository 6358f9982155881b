import type { Config } from '../config.js'
import { openPostgres, openSqlite, type DatabaseHandle } from './dialect.js'
import { migrateToLatest } from './migrate.js'

/** Opens the configured database and brings its schema up to date. */
export async function openDatabase(config: Pick<Config, 'sqlitePath' | 'databaseUrl' | 'databaseSchema'>): Promise<DatabaseHandle> {
  const handle = config.databaseUrl
    ? openPostgres(config.databaseUrl, { searchPath: config.databaseSchema })
    : openSqlite(config.sqlitePath)
  try {
    await migrateToLatest(handle)
  } catch (error) {
    await handle.db.destroy()
    throw error
  }
  return handle
}

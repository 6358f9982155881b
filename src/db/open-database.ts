import type { Config } from '../config.js'
import { openSqlite, type DatabaseHandle } from './dialect.js'
import { migrateToLatest } from './migrate.js'

/** Opens the configured database and brings its schema up to date. */
export async function openDatabase(config: Pick<Config, 'sqlitePath'>): Promise<DatabaseHandle> {
  const handle = openSqlite(config.sqlitePath)
  try {
    await migrateToLatest(handle)
  } catch (error) {
    await handle.db.destroy()
    throw error
  }
  return handle
}

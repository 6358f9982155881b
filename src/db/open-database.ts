import type { Config } from '../config.js'
import { openPostgres, openSqlite, type DatabaseHandle } from './dialect.js'
import { migrateToLatest } from './migrate.js'

/** Without backendTimeoutMs, queries on PostgreSQL wait as long as the database takes; without databasePoolSize, a pool holds 10 connections. */
type DatabaseConfig = Pick<Config, 'sqlitePath' | 'databaseUrl' | 'databaseSchema'> &
  Partial<Pick<Config, 'backendTimeoutMs' | 'databasePoolSize'>>

/** Opens the configured database and brings its schema up to date. */
export async function openDatabase(config: DatabaseConfig): Promise<DatabaseHandle> {
  if (!config.databaseUrl) return migrated(openSqlite(config.sqlitePath))
  const searchPath = config.databaseSchema
  // A migration may take longer than a request should wait (an index built on a large table): it
  // runs on a pool of its own, without the query timeout the service's pool has.
  const migrating = await migrated(openPostgres(config.databaseUrl, { searchPath }))
  await migrating.db.destroy()
  return openPostgres(config.databaseUrl, {
    searchPath,
    ...(config.backendTimeoutMs ? { queryTimeoutMs: config.backendTimeoutMs } : {}),
    ...(config.databasePoolSize ? { maxConnections: config.databasePoolSize } : {}),
  })
}

async function migrated(handle: DatabaseHandle): Promise<DatabaseHandle> {
  try {
    await migrateToLatest(handle)
  } catch (error) {
    await handle.db.destroy()
    throw error
  }
  return handle
}

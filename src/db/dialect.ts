import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, sql, SqliteDialect } from 'kysely'
import type PG from 'pg'
import type { Database } from './schema.js'
import { allowDirectReads, withStatementCache } from './statement-cache.js'
import { isDatabaseUnavailable, withTranslatedErrors } from './translate-errors.js'

export type DialectName = 'sqlite' | 'postgres'

export interface DatabaseHandle {
  db: Kysely<Database>
  dialect: DialectName
  /** Resolves when the database answers a query; rejects (503 once translated) when it does not. */
  check(): Promise<void>
}

function handle(db: Kysely<Database>, dialect: DialectName): DatabaseHandle {
  return {
    db,
    dialect,
    async check() {
      await sql`select 1`.execute(db)
    },
  }
}

/** Opens the embedded SQLite database in WAL mode, shared safely by the server and the CLI. */
export function openSqlite(file: string): DatabaseHandle {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true })
  const database = new SQLite(file)
  database.pragma('journal_mode = WAL')
  // FULL: a commit is on disk before the reply, so an acknowledged upload or delete survives a
  // power loss too (NORMAL in WAL mode survives only a process crash). Blobs are fsynced first.
  database.pragma('synchronous = FULL')
  database.pragma('foreign_keys = ON')
  // The CLI and the server share the file: wait for a writer instead of failing with SQLITE_BUSY.
  database.pragma('busy_timeout = 5000')
  const cached = withStatementCache(database)
  const db = new Kysely<Database>({ dialect: withTranslatedErrors(new SqliteDialect({ database: cached })) })
  // The hot paths' reads skip Kysely's driver when no transaction is open (statement-cache.ts).
  allowDirectReads(db, cached)
  return handle(db, 'sqlite')
}

/**
 * The pg module, loaded on first use: the embedded stack never needs it, and loading it costs
 * every server start and CLI call about 0.15 s. (A synchronous require keeps openPostgres sync.)
 */
let pgModule: typeof PG | undefined
function loadPg(): typeof PG {
  if (!pgModule) {
    pgModule = createRequire(import.meta.url)('pg') as typeof PG
    // bigint columns hold byte sizes and counters, all far below 2^53: read them as numbers.
    pgModule.types.setTypeParser(pgModule.types.builtins.INT8, (value) => Number(value))
  }
  return pgModule
}

/**
 * A query that timed out is still running, or stuck, on its connection: node-postgres queues what
 * comes next (a transaction's ROLLBACK among it) behind it, and the pool would hand the connection
 * on, idle in a transaction that still holds its locks and that a later COMMIT would complete. So
 * a client whose query failed for want of the database (a timeout, or a connection already lost)
 * ends at once: every later query on it fails, the pool drops it on release, and the server rolls
 * the transaction back when the connection closes.
 */
function endClientWhenUnavailable(client: PG.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  ;(client as { query: unknown }).query = (...args: unknown[]) => {
    const result = query(...args)
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        if (isDatabaseUnavailable(error)) client.end().catch(() => {})
      })
    }
    return result
  }
}

/**
 * Opens a PostgreSQL pool. `searchPath` confines the service to one schema (tests use a fresh
 * schema each, so that they can run side by side in one database).
 */
export function openPostgres(
  connectionString: string,
  options: { searchPath?: string; maxConnections?: number; queryTimeoutMs?: number } = {},
): DatabaseHandle {
  const pool = new (loadPg().Pool)({
    connectionString,
    max: options.maxConnections ?? 10,
    // A database that does not answer fails the request (503) instead of queueing it forever: no
    // connection, or no answer to a query on a connection that stalled, within queryTimeoutMs (a
    // refused connection fails at once). Keepalive lets the kernel find a dead peer.
    connectionTimeoutMillis: options.queryTimeoutMs ?? 5_000,
    ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
    keepAlive: true,
    ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
  })
  // A client that loses its server must not crash the process, idle (the pool's 'error') or checked
  // out between two queries (its own 'error'): the query fails, the pool drops the client, the next
  // query connects afresh.
  pool.on('error', () => {})
  pool.on('connect', (client) => {
    client.on('error', () => {})
    if (options.queryTimeoutMs) endClientWhenUnavailable(client)
  })
  return handle(new Kysely<Database>({ dialect: withTranslatedErrors(new PostgresDialect({ pool })) }), 'postgres')
}

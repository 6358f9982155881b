import type { DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely'
import { InsufficientStorageError, ServiceUnavailableError } from '../errors.js'
import { isConnectionError } from '../lib/network-errors.js'

/** PostgreSQL states that mean the server cannot serve now: connection exceptions, shutdown, overload. */
const UNAVAILABLE_STATES = /^(08...|57P0[123]|53300)$/
/** node-postgres raises these (without a state) when a connection dies or cannot be made. */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|connection error|timeout exceeded when trying to connect|not queryable|Query read timeout/i

/** Whether a database error means "the database is unreachable right now", not "this query is wrong". */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (isConnectionError(error)) return true
  const { code, message } = error as { code?: unknown; message?: unknown }
  if (typeof code === 'string' && (UNAVAILABLE_STATES.test(code) || code.startsWith('SQLITE_BUSY'))) return true
  return typeof message === 'string' && typeof code !== 'string' && UNAVAILABLE_MESSAGES.test(message)
}

/** Whether the database refused a write that would break a unique constraint or index (SQLite's, PostgreSQL's 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const { code } = error as { code?: unknown }
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505'
}

/**
 * Whether the database refused a write for want of disk space: SQLite's SQLITE_FULL, or the I/O
 * errors a full disk gives it when the WAL's shared memory or a page cannot grow (seen on a full
 * tmpfs: SQLITE_IOERR_SHMSIZE), and PostgreSQL's disk_full.
 */
export function isDatabaseFull(error: unknown): boolean {
  const { code } = error as { code?: unknown }
  return code === 'SQLITE_FULL' || code === 'SQLITE_IOERR_SHMSIZE' || code === 'SQLITE_IOERR_WRITE' || code === '53100'
}

function translate(error: unknown): unknown {
  if (isDatabaseUnavailable(error)) return new ServiceUnavailableError('The database is unavailable.', { cause: error })
  if (isDatabaseFull(error)) return new InsufficientStorageError({ cause: error })
  return error
}

async function translating<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    throw translate(error)
  }
}

class TranslatingConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}
  executeQuery<R>(query: Parameters<DatabaseConnection['executeQuery']>[0]): Promise<QueryResult<R>> {
    return translating(() => this.inner.executeQuery<R>(query))
  }
  async *streamQuery<R>(
    query: Parameters<DatabaseConnection['streamQuery']>[0],
    chunkSize?: number,
  ): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize)
    } catch (error) {
      throw translate(error)
    }
  }
}

const innerOf = (connection: DatabaseConnection) => (connection as TranslatingConnection).inner

/** Passes everything to the dialect's own driver, turning "unreachable" into 503 and "disk full" into 507. */
class TranslatingDriver implements Driver {
  constructor(private readonly inner: Driver) {}
  init() {
    return translating(() => this.inner.init())
  }
  acquireConnection() {
    return translating(async () => new TranslatingConnection(await this.inner.acquireConnection()))
  }
  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
    return translating(() => this.inner.beginTransaction(innerOf(connection), settings))
  }
  commitTransaction(connection: DatabaseConnection) {
    return translating(() => this.inner.commitTransaction(innerOf(connection)))
  }
  rollbackTransaction(connection: DatabaseConnection) {
    return translating(async () => {
      try {
        await this.inner.rollbackTransaction(innerOf(connection))
      } catch (error) {
        // SQLite ends a transaction itself on some errors (SQLITE_FULL): its rollback is done, and
        // the error the caller must see is the one that ended it, not this one.
        if (/no transaction is active/.test((error as Error).message)) return
        throw error
      }
    })
  }
  releaseConnection(connection: DatabaseConnection) {
    return this.inner.releaseConnection(innerOf(connection))
  }
  destroy() {
    return this.inner.destroy()
  }
}

/**
 * The adapter boundary of the database: whatever the dialect, a database that has gone away
 * surfaces as ServiceUnavailableError (503), and the pool reconnects when it returns; a full disk
 * surfaces as InsufficientStorageError (507).
 */
export function withTranslatedErrors(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new TranslatingDriver(dialect.createDriver()),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  }
}

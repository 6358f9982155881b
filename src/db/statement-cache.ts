import type SQLite from 'better-sqlite3'
import type { Kysely, SqliteDatabase } from 'kysely'

const MAX_STATEMENTS = 200

/**
 * Starts the SQL of a query whose rows better-sqlite3 is to hand over as arrays, in the order of its
 * select list (a comment: PostgreSQL ignores it and answers objects). Building an object per row
 * natively took a third of reading a 100-row page; the caller builds them in JS for less.
 */
export const ROWS_AS_ARRAYS = '/* rows as arrays */ '

/** Kysely's view of the database, and a way round Kysely for the reads of the hot paths. */
export interface CachedSqliteDatabase extends SqliteDatabase {
  /**
   * The rows of a read, run at once on the connection (with the cached statement); undefined when
   * the read must go through Kysely after all: a transaction is open on the connection, the SQL
   * writes, or the read failed (Kysely's path then runs it again and reports its error).
   */
  readNow(sql: string, parameters: readonly unknown[]): unknown[] | undefined
}

/** The databases whose Kysely instance may be read round Kysely (openSqlite registers its own). */
const directReads = new WeakMap<Kysely<never>, CachedSqliteDatabase>()

/**
 * Lets the hot reads of `db` (compiled-query.ts) run on `database` at once. Kysely's SQLite driver
 * hands every query through a mutex and several promise-returning wrappers, each an await, for a
 * connection whose calls are synchronous anyway: in profiles of GET /files/:id that path cost
 * about as much CPU as SQLite reading the row. A read needs none of it unless another caller's
 * transaction is open on the one connection (readNow then declines).
 */
export function allowDirectReads<DB>(db: Kysely<DB>, database: CachedSqliteDatabase): void {
  directReads.set(db as unknown as Kysely<never>, database)
}

/** The database `db` may be read on at once, if allowDirectReads registered one. */
export function directReadsOf<DB>(db: Kysely<DB>): CachedSqliteDatabase | undefined {
  return directReads.get(db as unknown as Kysely<never>)
}

/**
 * Kysely's SQLite driver calls prepare() for every query, and better-sqlite3 compiles the SQL
 * anew each time: in profiles of GET /files/:id that compile took 12% of the CPU, several times
 * the read itself. Kysely passes values as parameters, so a service issues a small set of SQL
 * texts; this keeps the compiled statements of MAX_STATEMENTS of them, dropping one not used for
 * the longest (roughly: "second chance", the clock algorithm). A hit only marks its entry used:
 * moving the entry to the end on every query, for an exact least-recently-used order, was 3% of
 * the CPU of a GET /stats.
 */
export function withStatementCache(database: SQLite.Database): CachedSqliteDatabase {
  const statements = new Map<string, { statement: SQLite.Statement; used: boolean }>()
  const prepareNew = (sql: string) => {
    const statement = database.prepare(sql)
    return sql.startsWith(ROWS_AS_ARRAYS) && statement.reader ? statement.raw(true) : statement
  }
  /** Drops the oldest entry not used since it was last passed over; used ones go to the end, unmarked. */
  const evictOne = () => {
    for (const [sql, entry] of statements) {
      statements.delete(sql)
      if (!entry.used) return
      entry.used = false
      statements.set(sql, entry)
    }
  }
  return {
    close: () => database.close(),
    readNow(sql, parameters) {
      // Inside another caller's transaction the read would see its uncommitted writes: it waits its turn in Kysely instead.
      if (database.inTransaction) return undefined
      const statement = this.prepare(sql)
      if (!statement.reader) return undefined
      try {
        return statement.all(parameters as unknown[])
      } catch {
        // Kysely's path runs it again and reports the error in the service's terms (translate-errors.ts).
        return undefined
      }
    },
    prepare(sql: string) {
      const cached = statements.get(sql)
      // A statement still being iterated (a streamed query) cannot run again until it is done.
      if (cached && !cached.statement.busy) {
        cached.used = true
        return cached.statement
      }
      const statement = prepareNew(sql)
      if (cached) {
        // The busy one is dropped: its text's entry holds the new statement from now on.
        cached.statement = statement
        return statement
      }
      if (statements.size >= MAX_STATEMENTS) evictOne()
      statements.set(sql, { statement, used: false })
      return statement
    },
  }
}

import type SQLite from 'better-sqlite3'
import type { SqliteDatabase } from 'kysely'

const MAX_STATEMENTS = 200

/**
 * Starts the SQL of a query whose rows better-sqlite3 is to hand over as arrays, in the order of its
 * select list (a comment: PostgreSQL ignores it and answers objects). Building an object per row
 * natively took a third of reading a 100-row page; the caller builds them in JS for less.
 */
export const ROWS_AS_ARRAYS = '/* rows as arrays */ '

/**
 * Kysely's SQLite driver calls prepare() for every query, and better-sqlite3 compiles the SQL
 * anew each time: in profiles of GET /files/:id that compile took 12% of the CPU, several times
 * the read itself. Kysely passes values as parameters, so a service issues a small set of SQL
 * texts; this keeps the compiled statements of MAX_STATEMENTS of them, dropping one not used for
 * the longest (roughly: "second chance", the clock algorithm). A hit only marks its entry used:
 * moving the entry to the end on every query, for an exact least-recently-used order, was 3% of
 * the CPU of a GET /stats.
 */
export function withStatementCache(database: SQLite.Database): SqliteDatabase {
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

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
 * texts; this keeps the compiled statements of the MAX_STATEMENTS used last.
 */
export function withStatementCache(database: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>()
  const prepareNew = (sql: string) => {
    const statement = database.prepare(sql)
    return sql.startsWith(ROWS_AS_ARRAYS) && statement.reader ? statement.raw(true) : statement
  }
  return {
    close: () => database.close(),
    prepare(sql: string) {
      const cached = statements.get(sql)
      // A statement still being iterated (a streamed query) cannot run again until it is done.
      const statement = cached && !cached.busy ? cached : prepareNew(sql)
      // Re-inserting keeps the Map in least-recently-used order; the oldest goes when it is full.
      statements.delete(sql)
      statements.set(sql, statement)
      if (statements.size > MAX_STATEMENTS) statements.delete(statements.keys().next().value!)
      return statement
    },
  }
}

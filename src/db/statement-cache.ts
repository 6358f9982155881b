import type SQLite from 'better-sqlite3'
import type { SqliteDatabase } from 'kysely'

const MAX_STATEMENTS = 200

/**
 * Kysely's SQLite driver calls prepare() for every query, and better-sqlite3 compiles the SQL
 * anew each time: in profiles of GET /files/:id that compile took 12% of the CPU, several times
 * the read itself. Kysely passes values as parameters, so a service issues a small set of SQL
 * texts; this keeps the compiled statements of the MAX_STATEMENTS used last.
 */
export function withStatementCache(database: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>()
  return {
    close: () => database.close(),
    prepare(sql: string) {
      const cached = statements.get(sql)
      // A statement still being iterated (a streamed query) cannot run again until it is done.
      const statement = cached && !cached.busy ? cached : database.prepare(sql)
      // Re-inserting keeps the Map in least-recently-used order; the oldest goes when it is full.
      statements.delete(sql)
      statements.set(sql, statement)
      if (statements.size > MAX_STATEMENTS) statements.delete(statements.keys().next().value!)
      return statement
    },
  }
}

import type { Compilable, CompiledQuery, Kysely } from 'kysely'
import type { Database } from '../schema.js'
import { directReadsOf, ROWS_AS_ARRAYS } from '../statement-cache.js'

/** Stand-ins for the parameters while the query is compiled: values no real argument takes. */
const MARKERS = [-1_000_000_001.5, -1_000_000_002.5, -1_000_000_003.5, -1_000_000_004.5]

/**
 * A query of the hot paths (GET /files/:id, /files, /stats), built and compiled by Kysely once.
 * Building and compiling it per call cost about as much as running it on SQLite. `build` gets one
 * stand-in value per parameter; each call runs the same SQL with the real values in their places.
 */
export function compiledOnce<Args extends number[], Row>(
  db: Kysely<Database>,
  arity: Args['length'],
  build: (...args: Args) => Compilable<Row>,
): (...args: Args) => Promise<Row[]>
/** With `rowsAsArrays`: SQLite answers each row as an array in select-list order (statement-cache.ts), PostgreSQL as an object. */
export function compiledOnce<Args extends number[], Row>(
  db: Kysely<Database>,
  arity: Args['length'],
  build: (...args: Args) => Compilable<Row>,
  rowsAsArrays: true,
): (...args: Args) => Promise<Array<Row | unknown[]>>
export function compiledOnce<Args extends number[], Row>(
  db: Kysely<Database>,
  arity: Args['length'],
  build: (...args: Args) => Compilable<Row>,
  rowsAsArrays = false,
): (...args: Args) => Promise<Row[]> {
  const built = build(...(MARKERS.slice(0, arity) as Args)).compile()
  const compiled = rowsAsArrays ? { ...built, sql: ROWS_AS_ARRAYS + built.sql } : built
  // Where each argument goes among the query's parameters; any other parameter is a constant of the query.
  const slots = compiled.parameters.map((value) => MARKERS.indexOf(value as number))
  for (let arg = 0; arg < arity; arg++) {
    if (slots.filter((slot) => slot === arg).length !== 1)
      throw new Error(`compiledOnce: parameter ${arg} must appear once in ${compiled.sql}`)
  }
  // On SQLite (statement-cache.ts), straight on the connection when no transaction is open there.
  const direct = directReadsOf(db)
  return async (...args) => {
    const parameters = slots.map((slot, index) => (slot < 0 ? compiled.parameters[index] : args[slot]))
    const rows = direct?.readNow(compiled.sql, parameters)
    if (rows !== undefined) return rows as Row[]
    const query: CompiledQuery<Row> = { ...compiled, parameters }
    return (await db.executeQuery(query)).rows
  }
}

import { sql, type Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

/**
 * A trigram index of the file names, so that a search (GET /files `q`, files-repository.ts,
 * listingSql) reads the files whose names hold the search's trigrams rather than every name of the
 * account (issue 37; docs/api.md, `GET /files`, cost). The exact check stays the query's
 * instr()/strpos() on the ASCII-folded name: the index only finds the candidates.
 *
 * - SQLite: an FTS5 table with the `trigram` tokenizer, its content read from files (external
 *   content, so the names are not stored twice), kept in step by triggers on insert, rename and
 *   delete (the collector's too), filled from the files stored before it.
 * - PostgreSQL: a GIN index (pg_trgm's gin_trgm_ops) on the very expression the query folds the name
 *   with (migration 015's). pg_trgm is a trusted extension (PostgreSQL 13+): a database owner may
 *   create it. When it is neither installed nor can be created (a user without the right, a server
 *   without contrib), the upgrade goes on without the index and a search reads every name, as before
 *   (docs/configuration.md); the query is the same either way.
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  if (dialect === 'sqlite') {
    await sql`create virtual table files_name_trigrams using fts5(filename, content='files', content_rowid='id', tokenize='trigram')`.execute(
      db,
    )
    await sql`create trigger files_name_trigrams_insert after insert on files begin
      insert into files_name_trigrams (rowid, filename) values (new.id, new.filename);
    end`.execute(db)
    await sql`create trigger files_name_trigrams_delete after delete on files begin
      insert into files_name_trigrams (files_name_trigrams, rowid, filename) values ('delete', old.id, old.filename);
    end`.execute(db)
    await sql`create trigger files_name_trigrams_rename after update of filename on files begin
      insert into files_name_trigrams (files_name_trigrams, rowid, filename) values ('delete', old.id, old.filename);
      insert into files_name_trigrams (rowid, filename) values (new.id, new.filename);
    end`.execute(db)
    await sql`insert into files_name_trigrams (files_name_trigrams) values ('rebuild')`.execute(db)
    return
  }
  const schema = await trigramSchema(db)
  if (schema === undefined) return
  await sql`create index files_name_trigrams on files using gin (lower(filename collate "C") ${sql.id(schema, 'gin_trgm_ops')})`.execute(db)
}

/**
 * The schema pg_trgm is installed in, creating it in `public` if it is not there yet (not in the
 * service's own schema: dropping that schema would take the extension, and every other schema's
 * index on it, along). Undefined when it cannot be had. The attempt runs in a savepoint, so that a
 * refusal leaves the migration's transaction usable.
 */
async function trigramSchema(db: Kysely<unknown>): Promise<string | undefined> {
  const installed = async () =>
    (
      await sql<{ schema: string }>`select nspname as schema from pg_extension join pg_namespace on pg_namespace.oid = extnamespace
        where extname = 'pg_trgm'`.execute(db)
    ).rows[0]?.schema
  const found = await installed()
  if (found !== undefined) return found
  await sql`savepoint pg_trgm_attempt`.execute(db)
  try {
    await sql`create extension if not exists pg_trgm schema public`.execute(db)
    await sql`release savepoint pg_trgm_attempt`.execute(db)
  } catch {
    // No right to create it, no contrib package, or another session creating it at this moment.
    await sql`rollback to savepoint pg_trgm_attempt`.execute(db)
  }
  return installed()
}

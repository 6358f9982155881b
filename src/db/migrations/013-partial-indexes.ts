import { sql, type Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

/** Each index this migration narrows: its name, table, columns and the column most rows leave null. */
const SPARSE_INDEXES = [
  { name: 'files_upload_request', table: 'files', columns: ['upload_request_id', 'id'], sparse: 'upload_request_id' },
  { name: 'files_scan_due', table: 'files', columns: ['scan_status', 'scan_next_at'], sparse: 'scan_status' },
  { name: 'uploads_upload_request', table: 'uploads', columns: ['upload_request_id'], sparse: 'upload_request_id' },
] as const

/**
 * Indexes on columns that most files leave null (a file from an upload request, a file's scan where
 * the server scans) keep only the rows that have a value: at 100 million files the full index of
 * files_upload_request was 3 GiB of nulls (docs/scale-out.md, "Sizing"). Every query on these
 * columns compares them with `=` (or a join), which implies `is not null` on SQLite and PostgreSQL
 * alike, so both still use them, with bound parameters too.
 *
 * On PostgreSQL the new indexes are built first, under other names, and the old ones dropped only
 * then: a build blocks writes to its table, but a DROP INDEX blocks reads too, until the migration's
 * transaction commits, so it must come last. SQLite cannot rename an index, and its migration holds
 * the whole database anyway.
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const building = (name: string) => (dialect === 'postgres' ? `${name}_sparse` : name)
  if (dialect === 'sqlite') for (const { name } of SPARSE_INDEXES) await db.schema.dropIndex(name).execute()
  for (const { name, table, columns, sparse } of SPARSE_INDEXES) {
    await db.schema
      .createIndex(building(name))
      .on(table)
      .columns([...columns])
      .where(sql.ref(sparse), 'is not', null)
      .execute()
  }
  if (dialect === 'postgres') {
    for (const { name } of SPARSE_INDEXES) {
      await db.schema.dropIndex(name).execute()
      await sql`alter index ${sql.id(building(name))} rename to ${sql.id(name)}`.execute(db)
    }
  }
}

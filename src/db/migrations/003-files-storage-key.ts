import type { Kysely } from 'kysely'

/** Garbage collection asks which storage keys rows still reference: an index keeps that a lookup, not a scan. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('files_storage_key').on('files').column('storage_key').execute()
}

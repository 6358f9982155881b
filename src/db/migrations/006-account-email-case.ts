import { sql, type Kysely } from 'kysely'
import type { DialectName } from '../dialect.js'

/**
 * Account emails are unique regardless of letter case, as dashboard sign-in treats them: a unique
 * index on lower(email). The email itself stays as it was typed.
 *
 * "Letter case" means ASCII letters only (A-Z against a-z), in both dialects: that is what SQLite's
 * lower() folds. PostgreSQL's lower() follows the collation, and under the database's default one
 * (a libc or ICU locale) it folds É to é too; with the "C" collation on the column it folds only
 * A-Z, like SQLite. Code that looks an account up by email folds the address the same way in
 * JavaScript (A-Z only, never toLowerCase()) and compares it with lower(email), which this index serves.
 *
 * Existing accounts whose emails differ only in case stop the migration with their addresses and
 * ids (nothing is changed, the schema stays as it was): the operator changes all but one of each
 * group and runs it again (docs/cli.md).
 */
export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  if (dialect === 'postgres') {
    await sql`alter table accounts alter column email type text collate "C"`.execute(db)
  }
  const { rows: clashing } = await sql<{ id: number | string; email: string; folded: string }>`
    select id, email, lower(email) as folded from accounts
    where lower(email) in (select lower(email) from accounts group by lower(email) having count(*) > 1)
    order by lower(email), id
  `.execute(db)
  if (clashing.length > 0) {
    const groups = new Map<string, string[]>()
    for (const row of clashing) {
      const group = groups.get(row.folded) ?? []
      group.push(`${row.email} (account ${row.id})`)
      groups.set(row.folded, group)
    }
    const list = [...groups.values()].map((group) => group.join(' and ')).join('; ')
    throw new Error(
      `Cannot make account emails unique regardless of letter case: these accounts' emails differ only in case: ${list}. ` +
        'Change the email of all but one account of each group in the database, then run "fileshare migrate" again (see docs/cli.md).',
    )
  }
  await db.schema
    .createIndex('accounts_email_lower')
    .unique()
    .on('accounts')
    .expression(sql`lower(email)`)
    .execute()
}

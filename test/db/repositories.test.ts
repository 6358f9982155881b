import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openPostgres, openSqlite, type DatabaseHandle, type DialectName } from '../../src/db/dialect.js'
import { MIGRATION_NAMES, migrateTo, migrateToLatest } from '../../src/db/migrate.js'
import { AccountHoldersRepository } from '../../src/db/repositories/account-holders-repository.js'
import { AccountsRepository, releaseUploadSlotIn, takeUploadSlotIn } from '../../src/db/repositories/accounts-repository.js'
import { ApiKeysRepository } from '../../src/db/repositories/api-keys-repository.js'
import { AuditEventsRepository } from '../../src/db/repositories/audit-events-repository.js'
import { EmailChangesRepository } from '../../src/db/repositories/email-changes-repository.js'
import { FilesRepository } from '../../src/db/repositories/files-repository.js'
import { LinksRepository } from '../../src/db/repositories/links-repository.js'
import type { Database, FileRow, NewFileRow } from '../../src/db/schema.js'
import { InvalidParameterError } from '../../src/errors.js'
import { createPgSchema, dropPgSchema, isPostgresReachable, PG_URL } from '../helpers/scale-out-env.js'
import { makeTempDir } from '../helpers/test-app.js'

/** A fresh, empty database of one dialect; open() gives one more handle on that same database. */
interface TestDatabase {
  open(): DatabaseHandle
  drop(): Promise<void>
}

interface DialectUnderTest {
  name: DialectName
  available: boolean
  create(): Promise<TestDatabase>
}

const postgresReachable = await isPostgresReachable()
if (!postgresReachable) {
  console.warn(`SKIPPING the PostgreSQL half of test/db/repositories.test.ts: no PostgreSQL answers at ${PG_URL}.`)
}

// Kysely's DIALECTS pattern: every repository test below runs once per dialect.
const DIALECTS: DialectUnderTest[] = [
  {
    name: 'sqlite',
    available: true,
    async create() {
      const dir = await makeTempDir('fileshare-db-')
      return { open: () => openSqlite(path.join(dir, 'fileshare.sqlite')), drop: () => fs.rm(dir, { recursive: true, force: true }) }
    },
  },
  {
    name: 'postgres',
    available: postgresReachable,
    async create() {
      const schema = await createPgSchema()
      return { open: () => openPostgres(PG_URL, { searchPath: schema }), drop: () => dropPgSchema(schema) }
    },
  },
]

const DAY_1 = '2030-01-01'
const DAY_2 = '2030-01-02'
const T0 = Date.UTC(2030, 0, 1, 12)

for (const dialect of DIALECTS) {
  describe.skipIf(!dialect.available)(`repositories on ${dialect.name}`, () => {
    let database: TestDatabase
    const handles: DatabaseHandle[] = []
    const open = () => {
      const handle = database.open()
      handles.push(handle)
      return handle
    }

    beforeEach(async () => {
      database = await dialect.create()
    })
    afterEach(async () => {
      await Promise.all(handles.splice(0).map((handle) => handle.db.destroy()))
      await database.drop()
    })

    describe('migrations', () => {
      it('create every table on a fresh database, and a second run changes nothing', async () => {
        const handle = open()
        expect(handle.dialect).toBe(dialect.name)
        expect(await migrateToLatest(handle)).toEqual(MIGRATION_NAMES)
        expect(await migrateToLatest(handle)).toEqual([])
        // Another handle (a restart, or the CLI) finds the schema up to date too.
        expect(await migrateToLatest(open())).toEqual([])
        const tables = (await handle.db.introspection.getTables()).map((table) => table.name)
        expect(tables).toEqual(expect.arrayContaining(['accounts', 'api_keys', 'files']))
        const account = await new AccountsRepository(handle.db).create('after-migration@example.test', 'pro', T0)
        expect(account.id).toBe(1)
      })

      it('refuse emails that differ only in letter case, naming them, and succeed once the operator has changed them', async () => {
        const handle = open()
        // The schema before 006, with accounts that the old unique constraint let in.
        await migrateTo(handle, '005-session-last-seen')
        const repository = new AccountsRepository(handle.db)
        for (const email of ['a@example.test', 'A@example.test', 'b@example.test', 'B@Example.Test', 'b@EXAMPLE.test', 'c@example.test']) {
          await repository.create(email, 'pro', T0)
        }
        await expect(migrateToLatest(handle)).rejects.toThrow(
          "Cannot make account emails unique regardless of letter case: these accounts' emails differ only in case: " +
            'a@example.test (account 1) and A@example.test (account 2); ' +
            'b@example.test (account 3) and B@Example.Test (account 4) and b@EXAMPLE.test (account 5). ' +
            'Change the email of all but one account of each group in the database, then run "fileshare migrate" again (see docs/cli.md).',
        )
        // Nothing changed: the migration is still to run, and no index was made.
        expect(await repository.list()).toHaveLength(6)
        await sql`update accounts set email = ${'a2@example.test'} where id = 2`.execute(handle.db)
        await sql`update accounts set email = ${'b4@example.test'} where id = 4`.execute(handle.db)
        await expect(migrateToLatest(handle)).rejects.toThrow('b@example.test (account 3) and b@EXAMPLE.test (account 5).')
        await sql`delete from accounts where id = 5`.execute(handle.db)
        expect(await migrateToLatest(handle)).toEqual(MIGRATION_NAMES.slice(MIGRATION_NAMES.indexOf('006-account-email-case')))
        await expect(repository.create('C@EXAMPLE.TEST', 'pro', T0)).rejects.toThrow()
      })

      it('009 leaves every existing key with every scope, from anywhere', async () => {
        const handle = open()
        await migrateTo(handle, '008-quotas-idempotency-paging')
        const account = await new AccountsRepository(handle.db).create('before-scopes@example.test', 'pro', T0)
        await sql`insert into api_keys (account_id, name, prefix, key_hash, created_at)
          values (${account.id}, 'old', 'fsk_oldkey', ${'e'.repeat(64)}, ${T0})`.execute(handle.db)
        expect(await migrateToLatest(handle)).toEqual(MIGRATION_NAMES.slice(MIGRATION_NAMES.indexOf('009-key-scopes-audit')))
        const found = await new ApiKeysRepository(handle.db).findByHash('e'.repeat(64))
        expect(found?.key).toMatchObject({ scopes: '*', allowed_ips: null, last_used_ip: null })
      })

      it('007 gives every existing file its default link, with the token and downloads it had', async () => {
        const handle = open()
        await migrateTo(handle, '006-account-email-case')
        const account = await new AccountsRepository(handle.db).create('before-links@example.test', 'pro', T0)
        for (const [n, downloads] of [
          [1, 0],
          [2, 5],
        ] as const) {
          await sql`insert into files (account_id, token, filename, size, content_type, sha256, storage_key, created_at, download_count)
            values (${account.id}, ${`old-token-${n}-abcdefghijklmnop`}, ${`f${n}.txt`}, 10, 'text/plain', ${'a'.repeat(64)}, ${`key${n}`}, ${T0 + n}, ${downloads})`.execute(
            handle.db,
          )
        }
        expect(await migrateToLatest(handle)).toEqual(MIGRATION_NAMES.slice(MIGRATION_NAMES.indexOf('007-links')))
        const links = new LinksRepository(handle.db)
        for (const [n, downloads] of [
          [1, 0],
          [2, 5],
        ] as const) {
          const found = await links.findByToken(`old-token-${n}-abcdefghijklmnop`)
          expect(found?.link).toMatchObject({
            is_default: 1,
            download_count: downloads,
            max_downloads: null,
            password_hash: null,
            expires_at: null,
          })
          expect(found?.file).toMatchObject({ filename: `f${n}.txt`, expires_at: null, download_count: downloads })
        }
        // A file made after the migration gets its default link with it.
        const file = await new FilesRepository(handle.db).insert({
          account_id: account.id,
          token: 'new-token-abcdefghijklmnop',
          filename: 'new.txt',
          size: 1,
          content_type: 'text/plain',
          sha256: 'b'.repeat(64),
          storage_key: 'key3',
          created_at: T0 + 3,
        })
        expect((await links.listForFile(file.id, 0)).map((link) => [link.token, link.is_default])).toEqual([[file.token, 1]])
      })

      // Instances of a scale-out deployment start at once and all migrate; SQLite serves one instance.
      if (dialect.name === 'postgres') {
        it('run concurrently from several handles on the same schema, and none of them fails', async () => {
          const starting = Array.from({ length: 5 }, () => open())
          const results = await Promise.all(starting.map((handle) => migrateToLatest(handle)))
          // Kysely's migrator lock: exactly one handle ran the migration, the others found it done.
          expect(results.flat()).toEqual(MIGRATION_NAMES)
          const executed = await sql<{ name: string }>`select name from kysely_migration`.execute(starting[0]!.db)
          expect(executed.rows.map((row) => row.name)).toEqual(MIGRATION_NAMES)
        })

        it('keep each schema to itself: a second schema in the same database migrates on its own', async () => {
          // The first schema is migrated, so its migration tables exist in the database.
          await migrateToLatest(open())
          const other = await dialect.create()
          const otherHandle = other.open()
          try {
            expect(await migrateToLatest(otherHandle)).toEqual(MIGRATION_NAMES)
            await new AccountsRepository(otherHandle.db).create('other-schema@example.test', 'pro', T0)
            expect(await new AccountsRepository(open().db).list()).toEqual([])
          } finally {
            await otherHandle.db.destroy()
            await other.drop()
          }
        })

        it('succeed while other schemas of the database are created and dropped alongside', async () => {
          // Kysely's migrator reads the catalog of every schema; other tenants or test files drop
          // theirs at any time. Churn schemas on one connection while fresh schemas migrate. (Without
          // the retry in migrate.ts this fails in about half of the runs: the race is a timing one.)
          const churn = new pg.Client({ connectionString: PG_URL })
          await churn.connect()
          let churning = true
          const churned = (async () => {
            let cycles = 0
            while (churning) {
              const name = `t_${randomBytes(6).toString('hex')}`
              await churn.query(`create schema ${name}`)
              await churn.query(`create table ${name}.files (id bigserial primary key, size bigint, name text)`)
              await churn.query(`drop schema ${name} cascade`)
              cycles++
              // Busy rather than saturated: the migrations must get a chance between two drops (at 5 ms
              // a loaded CI machine saw Kysely's catalog read lose the race ten times running).
              await sleep(25)
            }
            return cycles
          })()
          try {
            for (let i = 0; i < 12; i++) {
              const fresh = await dialect.create()
              const handle = fresh.open()
              try {
                expect(await migrateToLatest(handle)).toEqual(MIGRATION_NAMES)
              } finally {
                await handle.db.destroy()
                await fresh.drop()
              }
            }
          } finally {
            churning = false
            expect(await churned).toBeGreaterThan(0)
            await churn.end()
          }
        })
      }
    })

    describe('with the schema in place', () => {
      let accounts: AccountsRepository
      let files: FilesRepository
      let links: LinksRepository
      let apiKeys: ApiKeysRepository
      let db: Kysely<Database>
      let fileCounter = 0

      beforeEach(async () => {
        const handle = open()
        await migrateToLatest(handle)
        db = handle.db
        accounts = new AccountsRepository(handle.db)
        files = new FilesRepository(handle.db)
        links = new LinksRepository(handle.db)
        apiKeys = new ApiKeysRepository(handle.db)
      })

      const newAccount = (email = `owner-${Math.random().toString(36).slice(2)}@example.test`) => accounts.create(email, 'pro', T0)
      const fileRow = (accountId: number, overrides: Partial<NewFileRow> = {}): NewFileRow => {
        fileCounter++
        return {
          account_id: accountId,
          token: `token-${fileCounter}-${Math.random().toString(36).slice(2)}`,
          filename: `file-${fileCounter}.txt`,
          size: 100,
          content_type: 'text/plain',
          sha256: 'a'.repeat(64),
          storage_key: `${fileCounter}`.padStart(32, '0'),
          created_at: T0,
          ...overrides,
        }
      }
      const newFile = (accountId: number, overrides: Partial<NewFileRow> = {}) => files.insert(fileRow(accountId, overrides))
      /** Counts one download through the file's default link, as a GET of its public link does. */
      const countDownload = async (file: FileRow) => {
        const found = await links.findByToken(file.token)
        return found !== undefined && (await links.takeDownload(found.link, T0))
      }
      const findByToken = async (token: string) => (await links.findByToken(token))?.file

      describe('accounts', () => {
        it('create gives a row with empty counters and no overrides, found by id and by email', async () => {
          const created = await accounts.create('alice@example.test', 'business', T0)
          expect(created).toEqual({
            id: expect.any(Number),
            email: 'alice@example.test',
            plan: 'business',
            created_at: T0,
            requests_per_minute: null,
            requests_per_day: null,
            max_file_size: null,
            daily_uploads: null,
            max_storage: null,
            storage_reserved: 0,
            total_files: 0,
            total_size: 0,
            total_downloads: 0,
            uploads_day: '',
            uploads_today: 0,
          })
          expect(await accounts.findById(created.id)).toEqual(created)
          expect(await accounts.findByEmail('alice@example.test')).toEqual(created)
          expect(await accounts.findById(created.id + 1000)).toBeUndefined()
          expect(await accounts.findByEmail('nobody@example.test')).toBeUndefined()
        })

        it('emails are unique', async () => {
          await accounts.create('twice@example.test', 'pro', T0)
          await expect(accounts.create('twice@example.test', 'pro', T0)).rejects.toThrow()
          expect(await accounts.list()).toHaveLength(1)
        })

        it('two creations at once with the same email in different case: one account, and the other gets the duplicate refusal', async () => {
          const outcomes = await Promise.allSettled([
            accounts.create('Race@Example.test', 'pro', T0),
            accounts.create('race@example.TEST', 'pro', T0),
          ])
          expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1)
          const [refused] = outcomes.filter((outcome) => outcome.status === 'rejected')
          expect(refused!.reason).toBeInstanceOf(InvalidParameterError)
          expect((refused!.reason as Error).message).toMatch(/already exists/)
          expect(await accounts.list()).toHaveLength(1)
        })

        it('emails are unique in any letter case, and each is kept as typed', async () => {
          const created = await accounts.create('Mixed.Case@Example.test', 'pro', T0)
          await expect(accounts.create('mixed.case@example.TEST', 'pro', T0)).rejects.toThrow()
          await expect(accounts.create('MIXED.CASE@EXAMPLE.TEST', 'pro', T0)).rejects.toThrow()
          expect(await accounts.list()).toEqual([created])
          expect(created.email).toBe('Mixed.Case@Example.test')
        })

        it('findByEmail finds the one account in any letter case', async () => {
          const created = await accounts.create('Case.Lookup@Example.test', 'pro', T0)
          for (const email of [
            'Case.Lookup@Example.test',
            'case.lookup@example.test',
            'CASE.LOOKUP@EXAMPLE.TEST',
            'cAsE.lOoKuP@eXaMpLe.TeSt',
          ]) {
            expect(await accounts.findByEmail(email), email).toEqual(created)
          }
          expect(await accounts.findByEmail('case.lookup@example.tes')).toBeUndefined()
        })

        it('letter case is ASCII only, the same on both dialects: É and é are different letters, as SQLite lower() has it', async () => {
          const upper = await accounts.create('Émile@example.test', 'pro', T0)
          const lower = await accounts.create('émile@example.test', 'pro', T0)
          expect(await accounts.findByEmail('ÉMILE@example.test')).toEqual(upper)
          expect(await accounts.findByEmail('éMILE@EXAMPLE.TEST')).toEqual(lower)
        })

        it('the sign-in lookup finds the one account in any letter case, with its password hash', async () => {
          const holders = new AccountHoldersRepository(open().db)
          const created = await accounts.create('Holder.Case@Example.test', 'pro', T0)
          await holders.setPassword(created.id, 'scrypt$hash', T0)
          for (const email of ['Holder.Case@Example.test', 'holder.case@example.test', 'HOLDER.CASE@EXAMPLE.TEST']) {
            expect(await holders.findForSignIn(email), email).toEqual({ account: created, passwordHash: 'scrypt$hash' })
          }
          expect(await holders.findForSignIn('other@example.test')).toBeUndefined()
          // ASCII only, in JavaScript as in SQL: É does not fold to é, and the holder of É signs in with É.
          const accented = await accounts.create('Élodie@example.test', 'pro', T0)
          await holders.setPassword(accented.id, 'scrypt$accented', T0)
          expect(await holders.findForSignIn('ÉLODIE@EXAMPLE.TEST')).toEqual({ account: accented, passwordHash: 'scrypt$accented' })
          expect(await holders.findForSignIn('élodie@example.test')).toBeUndefined()
        })

        it('lookups by email in any letter case use the unique index on lower(email)', async () => {
          const { db } = open()
          await newAccount()
          const byEmail = sql`select * from accounts where lower(email) = ${'a@example.test'}`
          const forSignIn = sql`select accounts.* from accounts inner join account_passwords on account_passwords.account_id = accounts.id where lower("accounts"."email") = ${'a@example.test'}`
          for (const query of [byEmail, forSignIn]) {
            const plan =
              dialect.name === 'sqlite'
                ? await sql<{ detail: string }>`explain query plan ${query}`.execute(db)
                : await db.connection().execute(async (connection) => {
                    // A table this small is read whole unless sequential scans are discouraged.
                    await sql`set enable_seqscan = off`.execute(connection)
                    return sql<Record<string, string>>`explain ${query}`.execute(connection)
                  })
            expect(JSON.stringify(plan.rows)).toContain('accounts_email_lower')
          }
        })

        it('queries on columns most rows leave null use their partial indexes (013), with bound parameters', async () => {
          const { db } = open()
          const cases = [
            {
              index: 'files_upload_request',
              query: sql`select id from files where upload_request_id = ${7} and account_id = ${1} order by id desc limit ${10}`,
            },
            {
              index: 'files_scan_due',
              query: sql`select id from files where scan_status = ${'pending'} and scan_next_at <= ${T0} limit ${10}`,
            },
            { index: 'uploads_upload_request', query: sql`select id from uploads where upload_request_id = ${7}` },
          ]
          for (const { index, query } of cases) {
            const definition =
              dialect.name === 'sqlite'
                ? await sql<{ definition: string }>`select sql as definition from sqlite_master where name = ${index}`.execute(db)
                : await sql<{
                    definition: string
                  }>`select indexdef as definition from pg_indexes where indexname = ${index} and schemaname = current_schema()`.execute(db)
            expect(definition.rows[0]?.definition).toMatch(/ where .* is not null/i)
            const plan =
              dialect.name === 'sqlite'
                ? await sql<{ detail: string }>`explain query plan ${query}`.execute(db)
                : await db.connection().execute(async (connection) => {
                    await sql`set enable_seqscan = off`.execute(connection)
                    // A generic plan (what a prepared statement settles on) must still prove the index's predicate.
                    await sql`set plan_cache_mode = force_generic_plan`.execute(connection)
                    return sql<Record<string, string>>`explain ${query}`.execute(connection)
                  })
            expect(JSON.stringify(plan.rows)).toContain(index)
          }
        })

        it('list returns every account in id order', async () => {
          const created = [await newAccount(), await newAccount(), await newAccount()]
          expect((await accounts.list()).map((account) => account.id)).toEqual(created.map((account) => account.id))
        })

        it('update sets and clears limit overrides and the plan, and leaves the rest alone', async () => {
          const created = await newAccount()
          const updated = await accounts.update(created.id, { plan: 'enterprise', requests_per_minute: 7, daily_uploads: 0 })
          expect(updated).toEqual({ ...created, plan: 'enterprise', requests_per_minute: 7, daily_uploads: 0 })
          const cleared = await accounts.update(created.id, { requests_per_minute: null, max_file_size: 1234 })
          expect(cleared).toEqual({ ...created, plan: 'enterprise', daily_uploads: 0, max_file_size: 1234 })
          expect(await accounts.findById(created.id)).toEqual(cleared)
          expect(await accounts.update(created.id + 1000, { plan: 'pro' })).toBeUndefined()
        })
      })

      describe('daily upload slots', () => {
        it('20 concurrent reservations against a limit of 7 take exactly 7 slots', async () => {
          const { id } = await newAccount()
          const granted = await Promise.all(Array.from({ length: 20 }, () => takeUploadSlotIn(db, id, DAY_1, 7)))
          expect(granted.filter(Boolean)).toHaveLength(7)
          expect(await accounts.findById(id)).toMatchObject({ uploads_day: DAY_1, uploads_today: 7 })
          expect(await takeUploadSlotIn(db, id, DAY_1, 7)).toBeUndefined()
        })

        it('concurrent reservations and releases never pass the limit and end at the exact count', async () => {
          const { id } = await newAccount()
          await takeUploadSlotIn(db, id, DAY_1, 5)
          await takeUploadSlotIn(db, id, DAY_1, 5)
          // 2 taken; release both while 10 more try to reserve: at most 5 may be held at any time.
          const outcomes = await Promise.all([
            ...Array.from({ length: 10 }, () => takeUploadSlotIn(db, id, DAY_1, 5)),
            releaseUploadSlotIn(db, id, DAY_1).then(() => 'released'),
            releaseUploadSlotIn(db, id, DAY_1).then(() => 'released'),
          ])
          const granted = outcomes.filter((outcome) => outcome === DAY_1).length
          expect(granted).toBeGreaterThanOrEqual(3)
          expect(granted).toBeLessThanOrEqual(5)
          // 2 held + the granted ones - the 2 released: no reservation or release was lost.
          expect((await accounts.findById(id))!.uploads_today).toBe(granted)
        })

        it('a new UTC day starts from zero', async () => {
          const { id } = await newAccount()
          for (let i = 0; i < 3; i++) expect(await takeUploadSlotIn(db, id, DAY_1, 3)).toBe(DAY_1)
          expect(await takeUploadSlotIn(db, id, DAY_1, 3)).toBeUndefined()
          expect(await takeUploadSlotIn(db, id, DAY_2, 3)).toBe(DAY_2)
          expect(await accounts.findById(id)).toMatchObject({ uploads_day: DAY_2, uploads_today: 1 })
        })

        it('hasUploadSlot answers as taking would, without taking', async () => {
          const { id } = await newAccount()
          expect(await accounts.hasUploadSlot(id, DAY_1, 1)).toBe(true)
          expect(await accounts.hasUploadSlot(id, DAY_1, 1)).toBe(true)
          expect(await takeUploadSlotIn(db, id, DAY_1, 1)).toBe(DAY_1)
          expect(await accounts.hasUploadSlot(id, DAY_1, 1)).toBe(false)
          expect(await accounts.hasUploadSlot(id, DAY_2, 1)).toBe(true)
          expect(await accounts.hasUploadSlot(id, DAY_2, 0)).toBe(false)
          expect(await accounts.findById(id)).toMatchObject({ uploads_day: DAY_1, uploads_today: 1 })
        })

        it('a day never goes back: a reservation dated before the current day counts on the current day', async () => {
          // Two instances either side of midnight (or one that read the clock just before it) take
          // turns: the count must not restart at each turn, or the limit would never be reached.
          const { id } = await newAccount()
          expect(await takeUploadSlotIn(db, id, DAY_2, 2)).toBe(DAY_2)
          expect(await takeUploadSlotIn(db, id, DAY_1, 2)).toBe(DAY_2)
          expect(await takeUploadSlotIn(db, id, DAY_2, 2)).toBeUndefined()
          expect(await takeUploadSlotIn(db, id, DAY_1, 2)).toBeUndefined()
          expect(await accounts.findById(id)).toMatchObject({ uploads_day: DAY_2, uploads_today: 2 })
          // The slot handed out belongs to the current day, so giving it back gives back a slot today.
          await releaseUploadSlotIn(db, id, DAY_2)
          expect(await takeUploadSlotIn(db, id, DAY_1, 2)).toBe(DAY_2)
        })

        it('releasing a slot of a past day leaves today alone; releasing today gives one back, never below zero', async () => {
          const { id } = await newAccount()
          await takeUploadSlotIn(db, id, DAY_1, 10)
          await takeUploadSlotIn(db, id, DAY_2, 10)
          await takeUploadSlotIn(db, id, DAY_2, 10)
          await releaseUploadSlotIn(db, id, DAY_1)
          expect(await accounts.findById(id)).toMatchObject({ uploads_day: DAY_2, uploads_today: 2 })
          await releaseUploadSlotIn(db, id, DAY_2)
          expect(await accounts.findById(id)).toMatchObject({ uploads_day: DAY_2, uploads_today: 1 })
          await releaseUploadSlotIn(db, id, DAY_2)
          await releaseUploadSlotIn(db, id, DAY_2)
          expect(await accounts.findById(id)).toMatchObject({ uploads_day: DAY_2, uploads_today: 0 })
        })

        it('a limit of 0 refuses every upload, on any day', async () => {
          const { id } = await newAccount()
          expect(await takeUploadSlotIn(db, id, DAY_1, 0)).toBeUndefined()
          expect(await takeUploadSlotIn(db, id, DAY_2, 0)).toBeUndefined()
          expect(await accounts.findById(id)).toMatchObject({ uploads_day: '', uploads_today: 0 })
        })

        it('slots are counted per account', async () => {
          const [first, second] = [await newAccount(), await newAccount()]
          await Promise.all(Array.from({ length: 4 }, () => takeUploadSlotIn(db, first.id, DAY_1, 2)))
          expect(await takeUploadSlotIn(db, second.id, DAY_1, 2)).toBe(DAY_1)
          expect((await accounts.findById(first.id))!.uploads_today).toBe(2)
          expect((await accounts.findById(second.id))!.uploads_today).toBe(1)
        })
      })

      describe('files', () => {
        it('insertTakingUploadSlot: 10 concurrent inserts against 4 slots record exactly 4, and the others write nothing', async () => {
          const { id } = await newAccount()
          // A resumable upload holds one of the 5 slots already.
          expect(await takeUploadSlotIn(db, id, DAY_1, 5)).toBe(DAY_1)
          const inserted = await Promise.all(Array.from({ length: 10 }, () => files.insertTakingUploadSlot(fileRow(id), DAY_1, 5)))
          expect(inserted.filter(Boolean)).toHaveLength(4)
          expect(await accounts.findById(id)).toMatchObject({ uploads_day: DAY_1, uploads_today: 5, total_files: 4, total_size: 400 })
          expect(await files.listPage(id, 0, 100, T0)).toHaveLength(4)
        })

        it('insert returns the row and bumps the account counters', async () => {
          const { id } = await newAccount()
          const row = await newFile(id, { size: 300, filename: 'a.txt' })
          expect(row).toMatchObject({ id: expect.any(Number), account_id: id, filename: 'a.txt', size: 300, download_count: 0 })
          await newFile(id, { size: 45 })
          expect(await accounts.findById(id)).toMatchObject({ total_files: 2, total_size: 345, total_downloads: 0 })
          expect(await files.findOwned(id, row.id, T0)).toEqual(row)
          expect(await findByToken(row.token)).toEqual(row)
        })

        it('a file is found only by its owner, and by its exact token', async () => {
          const [owner, other] = [await newAccount(), await newAccount()]
          const row = await newFile(owner.id)
          expect(await files.findOwned(other.id, row.id, T0)).toBeUndefined()
          expect(await findByToken(row.token.toUpperCase())).toBeUndefined()
          expect(await findByToken(`${row.token}x`)).toBeUndefined()
        })

        it('concurrent inserts keep the counters exact', async () => {
          const { id } = await newAccount()
          await Promise.all(Array.from({ length: 25 }, (_, i) => newFile(id, { size: i + 1 })))
          expect(await accounts.findById(id)).toMatchObject({ total_files: 25, total_size: (25 * 26) / 2 })
        })

        it('listPage orders newest first, ties by id (highest first), and pages by offset and limit', async () => {
          const [owner, other] = [await newAccount(), await newAccount()]
          // Inserted out of time order, with two ties on created_at.
          const inserted = [
            await newFile(owner.id, { created_at: T0 + 2000 }),
            await newFile(owner.id, { created_at: T0 }),
            await newFile(owner.id, { created_at: T0 + 1000 }),
            await newFile(owner.id, { created_at: T0 + 1000 }),
            await newFile(owner.id, { created_at: T0 + 3000 }),
            await newFile(owner.id, { created_at: T0 }),
          ]
          await newFile(other.id, { created_at: T0 + 5000 })
          const [a, b, c, d, e, f] = inserted.map((row) => row.id)
          const expected = [e, a, d, c, f, b]
          expect((await files.listPage(owner.id, 0, 100, T0)).map((row) => row.id)).toEqual(expected)
          expect((await files.listPage(owner.id, 0, 2, T0)).map((row) => row.id)).toEqual(expected.slice(0, 2))
          expect((await files.listPage(owner.id, 2, 2, T0)).map((row) => row.id)).toEqual(expected.slice(2, 4))
          expect((await files.listPage(owner.id, 4, 2, T0)).map((row) => row.id)).toEqual(expected.slice(4, 6))
          expect((await files.listPage(owner.id, 5, 10, T0)).map((row) => row.id)).toEqual(expected.slice(5))
          expect(await files.listPage(owner.id, 6, 10, T0)).toEqual([])
        })

        it("listPage reads each file with the columns it is shown with, each in its place, and leaves out owner, storage key and the scanner's bookkeeping", async () => {
          const { id } = await newAccount()
          const row = await newFile(id, { size: 7, content_type: 'image/png', sha256: 'b'.repeat(64), created_at: T0 + 1 })
          await countDownload(row)
          const found = (await files.findOwned(id, row.id, T0))!
          const {
            account_id: _owner,
            storage_key: _key,
            scan_attempts: _attempts,
            scan_next_at: _next,
            scan_lease_until: _lease,
            ...shown
          } = found
          expect(shown.download_count).toBe(1)
          for (const oldestFirst of [false, true]) expect(await files.listPage(id, 0, 10, T0, oldestFirst)).toEqual([shown])
        })

        it('deleteOwned removes the row and lowers every counter, downloads included', async () => {
          const { id } = await newAccount()
          const kept = await newFile(id, { size: 1000 })
          const gone = await newFile(id, { size: 250 })
          for (let i = 0; i < 3; i++) await countDownload(gone)
          await countDownload(kept)
          expect(await accounts.findById(id)).toMatchObject({ total_files: 2, total_size: 1250, total_downloads: 4 })

          const deleted = await files.deleteOwned(id, gone.id, T0)
          expect(deleted).toMatchObject({ id: gone.id, size: 250, download_count: 3 })
          expect(await accounts.findById(id)).toMatchObject({ total_files: 1, total_size: 1000, total_downloads: 1 })
          expect(await files.findOwned(id, gone.id, T0)).toBeUndefined()
          expect(await findByToken(gone.token)).toBeUndefined()
          expect(await files.deleteOwned(id, gone.id, T0)).toBeUndefined()
          expect(await accounts.findById(id)).toMatchObject({ total_files: 1, total_size: 1000, total_downloads: 1 })
        })

        it("deleteOwned refuses another account's file and changes nothing", async () => {
          const [owner, other] = [await newAccount(), await newAccount()]
          const row = await newFile(owner.id, { size: 10 })
          expect(await files.deleteOwned(other.id, row.id, T0)).toBeUndefined()
          expect(await files.findOwned(owner.id, row.id, T0)).toEqual(row)
          expect(await accounts.findById(owner.id)).toMatchObject({ total_files: 1, total_size: 10 })
          expect(await accounts.findById(other.id)).toMatchObject({ total_files: 0, total_size: 0 })
        })

        it('50 concurrent countDownload calls count 50 on the file and on the account', async () => {
          const { id } = await newAccount()
          const row = await newFile(id)
          const counted = await Promise.all(Array.from({ length: 50 }, () => countDownload(row)))
          expect(counted.every(Boolean)).toBe(true)
          expect((await files.findOwned(id, row.id, T0))!.download_count).toBe(50)
          expect((await accounts.findById(id))!.total_downloads).toBe(50)
        })

        it('countDownload of a deleted file is false and counts nothing', async () => {
          const { id } = await newAccount()
          const row = await newFile(id)
          await countDownload(row)
          await files.deleteOwned(id, row.id, T0)
          expect(await countDownload(row)).toBe(false)
          expect((await accounts.findById(id))!.total_downloads).toBe(0)
        })

        it('downloads counted while the file is deleted leave the counters consistent', async () => {
          const { id } = await newAccount()
          const row = await newFile(id, { size: 7 })
          const kept = await newFile(id, { size: 3 })
          const downloads = Array.from({ length: 20 }, () => countDownload(row))
          const deleted = files.deleteOwned(id, row.id, T0)
          const counted = (await Promise.all(downloads)).filter(Boolean).length
          const deletedRow = await deleted
          // Whatever got counted before the delete left with the file, and nothing counted after it.
          expect(deletedRow!.download_count).toBe(counted)
          expect(await accounts.findById(id)).toMatchObject({ total_files: 1, total_size: 3, total_downloads: 0 })
          expect((await files.findOwned(id, kept.id, T0))!.download_count).toBe(0)
        })

        it('ids are never reused after a delete', async () => {
          const { id } = await newAccount()
          const rows = [await newFile(id), await newFile(id), await newFile(id)]
          const highest = Math.max(...rows.map((row) => row.id))
          await files.deleteOwned(id, highest, T0)
          const next = await newFile(id)
          expect(next.id).toBeGreaterThan(highest)
          for (const row of await files.listPage(id, 0, 100, T0)) await files.deleteOwned(id, row.id, T0)
          expect((await newFile(id)).id).toBeGreaterThan(next.id)
        })

        it('referencedStorageKeys tells which of the given keys a file row references, for any number of keys', async () => {
          const { id } = await newAccount()
          const rows = await Promise.all(Array.from({ length: 3 }, () => newFile(id)))
          const gone = await newFile(id)
          await files.deleteOwned(id, gone.id, T0)
          const stray = Array.from({ length: 1200 }, (_, i) => `f${i}`.padEnd(32, 'f'))
          const referenced = rows.map((row) => row.storage_key)
          // More keys than one query takes, with the referenced ones in different batches.
          const asked = [referenced[0]!, ...stray.slice(0, 600), referenced[1]!, gone.storage_key, ...stray.slice(600), referenced[2]!]
          expect(await files.referencedStorageKeys(asked)).toEqual(new Set(referenced))
          expect(await files.referencedStorageKeys(stray)).toEqual(new Set())
          expect(await files.referencedStorageKeys([])).toEqual(new Set())
        })

        it('sizes above 2^32 round-trip as numbers, in rows and in counters', async () => {
          const { id } = await newAccount()
          const size = 6_000_000_000
          const row = await newFile(id, { size })
          expect(row.size).toBe(size)
          expect(typeof row.size).toBe('number')
          expect((await files.findOwned(id, row.id, T0))!.size).toBe(size)
          expect((await findByToken(row.token))!.size).toBe(size)
          expect((await files.listPage(id, 0, 10, T0))[0]!.size).toBe(size)
          await newFile(id, { size })
          const account = await accounts.findById(id)
          expect(account!.total_size).toBe(2 * size)
          expect(typeof account!.total_size).toBe('number')
          expect((await accounts.update(id, { max_file_size: size }))!.max_file_size).toBe(size)
          await files.deleteOwned(id, row.id, T0)
          expect((await accounts.findById(id))!.total_size).toBe(size)
        })
      })

      describe('links', () => {
        const linkFields = (file: FileRow, overrides: Partial<Parameters<LinksRepository['create']>[0]> = {}) => ({
          file_id: file.id,
          account_id: file.account_id,
          token: `link-${randomBytes(12).toString('base64url')}`,
          label: null,
          expires_at: null,
          max_downloads: null,
          password_hash: null,
          created_at: T0,
          ...overrides,
        })

        it('takeDownload: of 50 concurrent takers of a link with 7 downloads left, exactly 7 count, on link, file and account', async () => {
          const { id } = await newAccount()
          const file = await newFile(id)
          const link = (await links.create(linkFields(file, { max_downloads: 10 }), 100))!
          for (let i = 0; i < 3; i++) expect(await links.takeDownload(link, T0)).toBe(true)
          const taken = await Promise.all(
            Array.from({ length: 50 }, (_, i) =>
              links.takeDownload(link, T0, { tokenHash: String(i).padStart(64, 'g'), expiresAt: T0 + 3_600_000 }),
            ),
          )
          expect(taken.filter(Boolean)).toHaveLength(7)
          expect((await links.findOwned(id, link.id))!.link.download_count).toBe(10)
          expect((await files.findOwned(id, file.id, T0))!.download_count).toBe(10)
          expect((await accounts.findById(id))!.total_downloads).toBe(10)
          // Only the counted takers got a grant.
          const granted = await Promise.all(taken.map((_, i) => links.findGranted(link.token, String(i).padStart(64, 'g'), T0 + 1)))
          expect(granted.filter(Boolean)).toHaveLength(7)
        })

        it('takeDownload counts nothing on a revoked or expired link, or a file past its expiry', async () => {
          const { id } = await newAccount()
          const file = await newFile(id, { expires_at: T0 + 1000 })
          const expiring = (await links.create(linkFields(file, { expires_at: T0 + 500 }), 100))!
          const revoked = (await links.create(linkFields(file), 100))!
          expect(await links.revoke(revoked.id, T0)).toBe(true)
          expect(await links.takeDownload(revoked, T0)).toBe(false)
          expect(await links.takeDownload(expiring, T0 + 500)).toBe(false)
          expect(await links.takeDownload(expiring, T0 + 499)).toBe(true)
          const defaultLink = (await links.findByToken(file.token))!.link
          expect(await links.takeDownload(defaultLink, T0 + 1000)).toBe(false)
          expect((await accounts.findById(id))!.total_downloads).toBe(1)
        })

        it('create stops at the limit of links that are not revoked, under concurrency', async () => {
          const { id } = await newAccount()
          const file = await newFile(id)
          const created = await Promise.all(Array.from({ length: 12 }, () => links.create(linkFields(file), 5)))
          // The default link is one of the five.
          expect(created.filter(Boolean)).toHaveLength(4)
          await links.revoke(created.find(Boolean)!.id, T0)
          expect(await links.create(linkFields(file), 5)).toBeDefined()
          expect(await links.create(linkFields(file), 5)).toBeUndefined()
        })

        it("rotate gives a new token, the default link's to its file too, and ends its grants; revoke spares the default link", async () => {
          const { id } = await newAccount()
          const file = await newFile(id)
          const defaultLink = (await links.findByToken(file.token))!.link
          await links.takeDownload(defaultLink, T0, { tokenHash: 'g'.repeat(64), expiresAt: T0 + 3_600_000 })
          expect(await links.findGranted(file.token, 'g'.repeat(64), T0)).toBeDefined()
          const rotated = (await links.rotate(defaultLink.id, 'rotated-token-abcdefghijkl'))!
          expect(rotated).toMatchObject({ token: 'rotated-token-abcdefghijkl', download_count: 1 })
          expect((await files.findOwned(id, file.id, T0))!.token).toBe('rotated-token-abcdefghijkl')
          expect(await links.findByToken(file.token)).toBeUndefined()
          expect(await links.findGranted('rotated-token-abcdefghijkl', 'g'.repeat(64), T0)).toBeUndefined()
          expect(await links.revoke(defaultLink.id, T0)).toBe(false)
        })

        it('purge removes links revoked before the cutoff and grants past their hour, and nothing else', async () => {
          const { id } = await newAccount()
          const file = await newFile(id)
          const [old, recent, live] = [
            (await links.create(linkFields(file), 100))!,
            (await links.create(linkFields(file), 100))!,
            (await links.create(linkFields(file), 100))!,
          ]
          await links.revoke(old.id, T0)
          await links.revoke(recent.id, T0 + 10_000)
          await links.takeDownload(live, T0, { tokenHash: 'a'.repeat(64), expiresAt: T0 + 1000 })
          await links.takeDownload(live, T0, { tokenHash: 'b'.repeat(64), expiresAt: T0 + 5000 })
          expect(await links.purge(T0 + 5000, T0 + 1000)).toEqual({ links: 1, grants: 1 })
          expect((await links.listForFile(file.id, 0)).map((link) => link.id).sort()).toEqual(
            [recent.id, live.id, (await links.findByToken(file.token))!.link.id].sort(),
          )
          expect(await links.findGranted(live.token, 'b'.repeat(64), T0 + 1000)).toBeDefined()
        })

        it('a file past its expiry is left out of reads and figures before deleteExpired removes it with its counts', async () => {
          const { id } = await newAccount()
          const kept = await newFile(id, { size: 10 })
          const expiring = await newFile(id, { size: 20, expires_at: T0 + 1000 })
          await countDownload(expiring)
          expect((await accounts.findWithExpiredTotals(id, T0 + 999))?.expired).toEqual({ files: 0, size: 0, downloads: 0 })
          expect(await accounts.findWithExpiredTotals(id, T0 + 1000)).toMatchObject({
            account: { id, total_files: 2, total_size: 30, total_downloads: 1 },
            expired: { files: 1, size: 20, downloads: 1 },
          })
          expect(await accounts.findWithExpiredTotals(id + 1000, T0 + 1000)).toBeUndefined()
          expect(await files.findOwned(id, expiring.id, T0 + 1000)).toBeUndefined()
          expect((await files.listPage(id, 0, 10, T0 + 1000)).map((row) => row.id)).toEqual([kept.id])
          expect(await files.deleteOwned(id, expiring.id, T0 + 1000)).toBeUndefined()
          expect((await files.deleteExpired(T0 + 1000, 10)).map((row) => row.id)).toEqual([expiring.id])
          expect(await accounts.findById(id)).toMatchObject({ total_files: 1, total_size: 10, total_downloads: 0 })
          expect((await accounts.findWithExpiredTotals(id, T0 + 1000))?.expired).toEqual({ files: 0, size: 0, downloads: 0 })
          expect(await files.deleteExpired(T0 + 1000, 10)).toEqual([])
        })
      })

      describe('api keys', () => {
        it('create, find by hash with the account, list, touch and revoke (once)', async () => {
          const account = await newAccount()
          const fields = {
            account_id: account.id,
            name: 'ci',
            prefix: 'fsk_abcd',
            key_hash: 'h'.repeat(64),
            created_at: T0,
            expires_at: null,
          }
          const key = await apiKeys.create(fields)
          // A key created without scopes holds every scope ('*'), from anywhere.
          expect(key).toEqual({
            ...fields,
            id: expect.any(Number),
            last_used_at: null,
            revoked_at: null,
            scopes: '*',
            allowed_ips: null,
            last_used_ip: null,
          })
          expect(await apiKeys.findByHash('h'.repeat(64))).toEqual({ key, account })
          expect(await apiKeys.findByHash('x'.repeat(64))).toBeUndefined()
          expect(await apiKeys.listForAccount(account.id)).toEqual([key])
          await apiKeys.touch(key.id, T0 + 60_000, '192.0.2.7')
          expect(await apiKeys.findById(key.id)).toMatchObject({ last_used_at: T0 + 60_000, last_used_ip: '192.0.2.7' })
          expect((await apiKeys.revoke(key.id, T0 + 120_000))!.revoked_at).toBe(T0 + 120_000)
          // A second revoke is refused, and keeps the first time.
          expect(await apiKeys.revoke(key.id, T0 + 180_000)).toBeUndefined()
          expect((await apiKeys.findById(key.id))!.revoked_at).toBe(T0 + 120_000)
        })

        it('key hashes are unique', async () => {
          const account = await newAccount()
          const key = { account_id: account.id, name: 'a', prefix: 'fsk_x', key_hash: 'd'.repeat(64), created_at: T0, expires_at: null }
          await apiKeys.create(key)
          await expect(apiKeys.create({ ...key, name: 'b' })).rejects.toThrow()
        })
      })

      describe('email changes', () => {
        const event = (accountId: number) => ({
          account_id: accountId,
          at: T0,
          action: 'email.change_cancelled',
          actor_type: 'system',
          actor_id: null,
          actor_name: null,
          ip: null,
          user_agent: null,
          target_type: 'account',
          target_id: accountId,
          details: '{}',
        })

        it('cancels only the change to the address named, when one is named: a newer request stays', async () => {
          const changes = new EmailChangesRepository(db)
          const account = await newAccount()
          await changes.request(account.id, 'first@example.test', T0, { ...event(account.id), action: 'email.change_requested' })
          // Asked again meanwhile, for another address: declining the first must not withdraw it.
          await changes.request(account.id, 'second@example.test', T0 + 1, { ...event(account.id), action: 'email.change_requested' })
          expect(await changes.cancel(account.id, event(account.id), 'first@example.test')).toBe(false)
          expect((await changes.find(account.id))?.new_email).toBe('second@example.test')
          expect(await changes.cancel(account.id, event(account.id), 'second@example.test')).toBe(true)
          expect(await changes.find(account.id)).toBeUndefined()
          // Without an address: whatever is pending.
          await changes.request(account.id, 'third@example.test', T0 + 2, { ...event(account.id), action: 'email.change_requested' })
          expect(await changes.cancel(account.id, event(account.id))).toBe(true)
        })
      })

      describe('audit events', () => {
        const event = (accountId: number, action: string, at: number) => ({
          account_id: accountId,
          at,
          action,
          actor_type: 'system',
          actor_id: null,
          actor_name: null,
          ip: null,
          user_agent: null,
          target_type: 'file',
          target_id: 1,
          details: '{"n":1}',
        })

        it('lists an account newest first, by exact action, family and time, and removes old ones in batches', async () => {
          const events = new AuditEventsRepository(db)
          const one = await newAccount()
          const other = await newAccount()
          for (const [action, at] of [
            ['file.uploaded', T0],
            ['file.deleted', T0 + 1000],
            ['link.created', T0 + 2000],
            ['file.uploaded', T0 + 3000],
          ] as const) {
            await events.record(event(one.id, action, at))
          }
          await events.record(event(other.id, 'file.uploaded', T0))
          const all = await events.list(one.id, { limit: 10 })
          expect(all.map((row) => row.action)).toEqual(['file.uploaded', 'link.created', 'file.deleted', 'file.uploaded'])
          expect(all.map((row) => Number(row.id))).toEqual([...all.map((row) => Number(row.id))].sort((a, b) => b - a))
          expect(await events.list(one.id, { limit: 2, beforeId: Number(all[1]!.id) })).toEqual(all.slice(2))
          expect((await events.list(one.id, { limit: 10, action: { exact: 'file.uploaded' } })).length).toBe(2)
          expect((await events.list(one.id, { limit: 10, action: { prefix: 'file.' } })).length).toBe(3)
          expect((await events.list(one.id, { limit: 10, sinceMs: T0 + 2000 })).map((row) => row.action)).toEqual([
            'file.uploaded',
            'link.created',
          ])
          expect(await events.removeOlderThan(T0 + 2500, 2)).toBe(2)
          expect(await events.removeOlderThan(T0 + 2500, 2)).toBe(2)
          expect(await events.removeOlderThan(T0 + 2500, 2)).toBe(0)
          expect((await events.list(one.id, { limit: 10 })).map((row) => row.at)).toEqual([T0 + 3000])
        })
      })
    })
  })
}

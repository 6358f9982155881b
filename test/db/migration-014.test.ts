import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DEFAULT_PLANS } from '../../src/config.js'
import { openPostgres, openSqlite, type DatabaseHandle, type DialectName } from '../../src/db/dialect.js'
import { MIGRATION_NAMES, migrateTo, migrateToLatest } from '../../src/db/migrate.js'
import { AccountsRepository } from '../../src/db/repositories/accounts-repository.js'
import { SessionsRepository } from '../../src/db/repositories/sessions-repository.js'
import { TwoFactorRepository } from '../../src/db/repositories/two-factor-repository.js'
import { SessionService } from '../../src/services/sessions.js'
import { sha256Hex } from '../../src/lib/sha256-hex.js'
import { createPgSchema, dropPgSchema, isPostgresReachable, PG_URL } from '../helpers/scale-out-env.js'
import { makeTempDir } from '../helpers/test-app.js'

/**
 * Migration 014 (protecting the account) on SQLite and PostgreSQL: sessions that exist before it
 * keep working and are listed with an unknown device and address; its tables take what the
 * services write (one second factor per account, a recovery code used once, a step accepted once).
 */
const postgresReachable = await isPostgresReachable()
const T0 = Date.UTC(2030, 0, 1, 12)

const DIALECTS: { name: DialectName; available: boolean; create(): Promise<{ handle: DatabaseHandle; drop(): Promise<void> }> }[] = [
  {
    name: 'sqlite',
    available: true,
    async create() {
      const dir = await makeTempDir('fileshare-db-')
      return { handle: openSqlite(path.join(dir, 'fileshare.sqlite')), drop: () => fs.rm(dir, { recursive: true, force: true }) }
    },
  },
  {
    name: 'postgres',
    available: postgresReachable,
    async create() {
      const schema = await createPgSchema()
      return { handle: openPostgres(PG_URL, { searchPath: schema }), drop: () => dropPgSchema(schema) }
    },
  },
]

for (const dialect of DIALECTS) {
  describe.skipIf(!dialect.available)(`migration 014 on ${dialect.name}`, () => {
    let database: { handle: DatabaseHandle; drop(): Promise<void> }
    beforeEach(async () => {
      database = await dialect.create()
    })
    afterEach(async () => {
      await database.handle.db.destroy()
      await database.drop()
    })

    it('a session from before it goes on, listed as an unknown device; new sessions keep theirs', async () => {
      const { handle } = database
      await migrateTo(handle, '013-partial-indexes')
      const account = await new AccountsRepository(handle.db).create('before-014@example.test', 'pro', T0)
      // A session as the release before 014 stored it.
      const oldToken = 'o'.repeat(43)
      await handle.db
        .insertInto('sessions')
        .values({
          account_id: account.id,
          token_hash: sha256Hex(oldToken),
          created_at: T0,
          expires_at: T0 + 3_600_000,
          last_seen_at: T0,
        })
        .execute()
      expect(await migrateToLatest(handle)).toEqual(MIGRATION_NAMES.slice(MIGRATION_NAMES.indexOf('014-account-protection')))

      const sessions = new SessionService(
        new SessionsRepository(handle.db),
        { plans: DEFAULT_PLANS, sessionIdleTimeoutMs: 1_800_000, auditIp: 'truncated' },
        () => T0 + 1000,
      )
      expect(await sessions.find(oldToken)).toMatchObject({ account: { id: account.id }, twoFactor: false })
      const { sessionId } = await sessions.create(account.id, undefined, T0 + 1000, { ip: '203.0.113.9', userAgent: 'curl/8.0' })
      const listed = await sessions.list(account.id, sessionId, T0 + 1000)
      expect(listed.map((s) => [s.device, s.ip, s.current])).toEqual([
        ['curl', '203.0.113.0', true],
        [null, null, false],
      ])
    })

    it('one second factor per account; a step and a recovery code are accepted once', async () => {
      const { handle } = database
      await migrateToLatest(handle)
      const account = await new AccountsRepository(handle.db).create('two-factor@example.test', 'pro', T0)
      const repository = new TwoFactorRepository(handle.db)
      expect(await repository.startEnrolment(account.id, 'plain:A', T0)).toBe(true)
      // A new enrolment replaces one that waits.
      expect(await repository.startEnrolment(account.id, 'plain:B', T0)).toBe(true)
      expect((await repository.find(account.id))?.secret).toBe('plain:B')
      expect(await repository.acceptStep(account.id, 100, false)).toBe(true)
      const event = {
        account_id: account.id,
        at: T0,
        action: 'two_factor.enabled',
        actor_type: 'session',
        actor_id: account.id,
        details: '{}',
      }
      await repository.enable(account.id, ['h1', 'h2'], T0, event)
      // On: no new enrolment; the same step or an earlier one is refused.
      expect(await repository.startEnrolment(account.id, 'plain:C', T0)).toBe(false)
      expect(await repository.acceptStep(account.id, 100, true)).toBe(false)
      expect(await repository.acceptStep(account.id, 99, true)).toBe(false)
      const [first, second] = await Promise.all([
        repository.acceptStep(account.id, 101, true),
        repository.acceptStep(account.id, 101, true),
      ])
      expect([first, second].sort()).toEqual([false, true])
      const used = () => repository.useRecoveryCode(account.id, 'h1', T0, () => ({ ...event, action: 'two_factor.recovery_code_used' }))
      expect(await used()).toBe(true)
      expect(await used()).toBe(false)
      expect(await repository.recoveryCodesLeft(account.id)).toBe(1)
      expect(await repository.remove(account.id)).toBe(true)
      expect(await repository.find(account.id)).toBeUndefined()
      expect(await repository.recoveryCodesLeft(account.id)).toBe(0)
    })
  })
}

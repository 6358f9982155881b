import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TwoFactorSecretBox } from '../../src/services/two-factor-secret.js'
import { runCommand } from '../helpers/cli.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { AppClock, holderWithTwoFactor, signInWithCode, totpAt } from '../helpers/two-factor.js'

/**
 * `fileshare two-factor encrypt-secrets` on the database of a running server (review R3 a): the
 * secrets stored as they were before FILESHARE_TWO_FACTOR_KEY was set are encrypted, all at once,
 * and still sign in; encrypted ones are left as they are and checked against the key; one that
 * does not decrypt is named and nothing is encrypted (exit 1: the key may be the wrong one);
 * without the key nothing happens; a dry run writes nothing; a second run changes nothing.
 */
const KEY = 'a1'.repeat(32)
const OTHER_KEY = '5c'.repeat(32)

describe('fileshare two-factor encrypt-secrets', () => {
  let t: TestApp
  let clock: AppClock
  let env: Record<string, string>
  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_TWO_FACTOR_KEY: KEY })
    clock = new AppClock(t)
    env = { FILESHARE_DATA_DIR: t.dataDir, FILESHARE_TWO_FACTOR_KEY: KEY }
  })
  afterAll(async () => {
    await t?.close()
  })

  const stored = async (accountId: number) =>
    (
      await t.app.database.db
        .selectFrom('account_two_factor')
        .select('secret')
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow()
    ).secret
  const store = (accountId: number, secret: string) =>
    t.app.database.db.updateTable('account_two_factor').set({ secret }).where('account_id', '=', accountId).execute()

  it('is in the help', async () => {
    expect((await runCommand(['help'], env)).stdout).toContain('two-factor encrypt-secrets [--dry-run] [--unchecked-key] [--json]')
  })

  it('encrypts the plain secrets, keeps the encrypted ones; with one that does not decrypt, encrypts nothing', async () => {
    const stamp = Date.now()
    // Enrolled before the key was set: stored as it was.
    const before = await holderWithTwoFactor(t, clock, `before-key-${stamp}@example.test`)
    await store(before.accountId, `plain:${before.secret}`)
    const after = await holderWithTwoFactor(t, clock, `after-key-${stamp}@example.test`)
    const sealedAfter = await stored(after.accountId)
    expect(sealedAfter).toMatch(/^aes256gcm:/)
    const lost = await holderWithTwoFactor(t, clock, `other-key-${stamp}@example.test`)
    await store(lost.accountId, new TwoFactorSecretBox(OTHER_KEY).seal(lost.secret, lost.accountId))

    // Without the key there is nothing to encrypt with: refused, nothing changes.
    const keyless = await runCommand(['two-factor', 'encrypt-secrets'], { FILESHARE_DATA_DIR: t.dataDir })
    expect(keyless.code).toBe(1)
    expect(keyless.stderr).toContain('FILESHARE_TWO_FACTOR_KEY is not set')
    expect(await stored(before.accountId)).toBe(`plain:${before.secret}`)

    // A secret that does not decrypt: this may be the wrong key, so nothing is encrypted under it.
    const refused = await runCommand(['two-factor', 'encrypt-secrets'], env)
    expect(refused).toEqual({
      code: 1,
      stderr: '',
      stdout:
        `Nothing encrypted: 1 two-factor secret(s) do not decrypt with this FILESHARE_TWO_FACTOR_KEY (accounts ${lost.accountId}). ` +
        'If the servers have another key, run this with theirs; if they have this one, those holders cannot sign in: ' +
        '`fileshare account reset-two-factor ID` each, then run this again. ' +
        'Stored plain: 1; encrypted already (and decrypting with this key): 1.\n',
    })
    expect(await stored(before.accountId)).toBe(`plain:${before.secret}`)
    // Run with another key (the servers' being this one), every secret but the lost one fails to decrypt: nothing written either.
    const wrongKey = await runCommand(['two-factor', 'encrypt-secrets', '--json'], { ...env, FILESHARE_TWO_FACTOR_KEY: '77'.repeat(32) })
    expect(wrongKey.code).toBe(1)
    expect(JSON.parse(wrongKey.stdout)).toMatchObject({ encrypted: 0, plain: 1, already_encrypted: 0 })
    expect(await stored(before.accountId)).toBe(`plain:${before.secret}`)

    // The operator resets the lost one; a dry run says what would happen and writes nothing.
    expect((await runCommand(['account', 'reset-two-factor', String(lost.accountId)], env)).code).toBe(0)
    const dry = await runCommand(['two-factor', 'encrypt-secrets', '--dry-run'], env)
    expect(dry).toEqual({
      code: 0,
      stderr: '',
      stdout: 'Dry run, nothing written. Stored plain, to encrypt: 1; encrypted already (and decrypting with this key): 1.\n',
    })
    expect(await stored(before.accountId)).toBe(`plain:${before.secret}`)

    const run = await runCommand(['two-factor', 'encrypt-secrets'], env)
    expect(run).toEqual({
      code: 0,
      stderr: '',
      stdout: 'Two-factor secrets encrypted now: 1; encrypted already (and decrypting with this key): 1.\n',
    })
    const now = await stored(before.accountId)
    expect(now).toMatch(/^aes256gcm:/)
    expect(now).not.toContain(before.secret)
    expect(await stored(after.accountId)).toBe(sealedAfter)
    // The same second factor: the holder signs in with the code of the app.
    expect((await signInWithCode(t, before.email, totpAt(before.secret, clock.now()))).status).toBe(200)

    // A second run has nothing to do, and says so in JSON too.
    const again = await runCommand(['two-factor', 'encrypt-secrets', '--json'], env)
    expect(again).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(again.stdout)).toEqual({
      dry_run: false,
      encrypted: 0,
      plain: 0,
      already_encrypted: 2,
      unreadable: [],
      key_checked: true,
    })
  })

  it("with no secret encrypted yet, encrypts nothing until told the key is the servers' (--unchecked-key)", async () => {
    // A database whose only second factors were set up before any server had the key.
    const fresh = await startTestApp()
    try {
      const freshClock = new AppClock(fresh)
      const holder = await holderWithTwoFactor(fresh, freshClock, `unchecked-${Date.now()}@example.test`)
      const secretOf = async () =>
        (
          await fresh.app.database.db
            .selectFrom('account_two_factor')
            .select('secret')
            .where('account_id', '=', holder.accountId)
            .executeTakeFirstOrThrow()
        ).secret
      const plainStored = await secretOf()
      expect(plainStored).toMatch(/^plain:/)
      // A mistyped key passes every check there is: nothing is written under it.
      const freshEnv = { FILESHARE_DATA_DIR: fresh.dataDir, FILESHARE_TWO_FACTOR_KEY: OTHER_KEY }
      const refused = await runCommand(['two-factor', 'encrypt-secrets'], freshEnv)
      expect(refused.code).toBe(1)
      expect(refused.stdout).toContain(
        "Nothing encrypted: no two-factor secret is encrypted yet, so this FILESHARE_TWO_FACTOR_KEY cannot be checked against the servers'.",
      )
      expect(await secretOf()).toBe(plainStored)
      const dry = await runCommand(['two-factor', 'encrypt-secrets', '--dry-run', '--json'], freshEnv)
      expect(dry.code).toBe(0)
      expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, encrypted: 0, plain: 1, key_checked: false })
      // The operator has checked it: encrypted.
      const told = await runCommand(['two-factor', 'encrypt-secrets', '--unchecked-key'], freshEnv)
      expect(told).toMatchObject({ code: 0, stderr: '' })
      expect(await secretOf()).toMatch(/^aes256gcm:/)
    } finally {
      await fresh.close()
    }
  })
})

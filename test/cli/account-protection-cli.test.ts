import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCommand } from '../helpers/cli.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

const PASSWORD = 'correct horse battery staple'
/** Whether the text carries escape, bell or U+202E as they are (what a terminal would act on). */
const raw = (text: string) => ['\u001b', '\u0007', '\u202e'].some((char) => text.includes(char))

/**
 * `account email-changes`, `account confirm-email` and `account reset-two-factor` against the
 * database of a running server (SQLite in the test app's data folder): what a holder asked for in
 * the dashboard, confirmed by the operator, then checked through the dashboard's HTTP.
 */
describe('fileshare account email-changes / confirm-email / reset-two-factor', () => {
  let t: TestApp
  let env: Record<string, string>
  beforeAll(async () => {
    t = await startTestApp()
    env = { FILESHARE_DATA_DIR: t.dataDir }
  })
  afterAll(async () => {
    await t.close()
  })

  const signIn = (email: string) =>
    fetch(`${t.url}/dashboard/api/sign-in`, {
      method: 'POST',
      headers: { origin: t.url, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    })

  it('help lists the three commands', async () => {
    const { stdout } = await runCommand(['help'], env)
    expect(stdout).toContain('account email-changes [--json]')
    expect(stdout).toContain('account confirm-email ID [--json]')
    expect(stdout).toContain('account reset-two-factor ID')
  })

  it('lists a pending change, confirms it (the new address signs in, the old one not), then has none', async () => {
    const email = `cli-email-${Date.now()}@example.test`
    const newEmail = `cli-new-${Date.now()}@example.test`
    const { accountId } = await t.createAccount('pro', email)
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    expect((await runCommand(['account', 'email-changes'], env)).stdout).toBe('No email change is pending.\n')
    await t.app.services.emailChanges.request(accountId, email, newEmail, { type: 'session', id: accountId })

    const listed = await runCommand(['account', 'email-changes'], env)
    expect(listed).toMatchObject({ code: 0, stderr: '' })
    expect(listed.stdout).toMatch(new RegExp(`^${accountId}\\t${email}\\t-> ${newEmail}\\t\\(asked \\d{4}-\\d{2}-\\d{2}T`))
    const json = JSON.parse((await runCommand(['account', 'email-changes', '--json'], env)).stdout) as unknown[]
    expect(json).toEqual([{ account_id: accountId, email, new_email: newEmail, requested_at: expect.any(Number), taken_by: null }])
    // Pending: the old address signs in.
    expect((await signIn(email)).status).toBe(200)

    const confirmed = await runCommand(['account', 'confirm-email', String(accountId), '--json'], env)
    expect(confirmed).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(confirmed.stdout)).toEqual({ account_id: accountId, old_email: email, email: newEmail })
    expect((await signIn(newEmail)).status).toBe(200)
    expect((await signIn(email)).status).toBe(401)

    const again = await runCommand(['account', 'confirm-email', String(accountId)], env)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`Account ${accountId} has no pending email change.`)
    expect((await runCommand(['account', 'confirm-email', 'x'], env)).code).not.toBe(0)
    const events = (await t.app.services.auditLog.list(accountId, { limit: 5, action: 'email.changed' })).events
    expect(events).toMatchObject([{ actor: { type: 'operator' }, details: { old_email: email, new_email: newEmail } }])
  })

  it('an address another account has: listed as taken; confirm-email declines the change, exit 1, and says so', async () => {
    const stamp = Date.now()
    const { accountId } = await t.createAccount('pro', `cli-asker-${stamp}@example.test`)
    const other = await t.createAccount('pro', `cli-holder-${stamp}@example.test`)
    // Asked as any other address is (the dashboard does not tell the asker it is taken).
    await t.app.services.emailChanges.request(accountId, `cli-asker-${stamp}@example.test`, `CLI-holder-${stamp}@example.test`, {
      type: 'session',
      id: accountId,
    })
    const listed = await runCommand(['account', 'email-changes'], env)
    expect(listed.stdout).toContain(`-> CLI-holder-${stamp}@example.test`)
    expect(listed.stdout).toMatch(new RegExp(`^${accountId}\t.*\tTAKEN by account ${other.accountId}: confirming declines it$`, 'm'))
    const json = JSON.parse((await runCommand(['account', 'email-changes', '--json'], env)).stdout) as Array<{ account_id: number }>
    expect(json.find((change) => change.account_id === accountId)).toMatchObject({ taken_by: other.accountId })

    const confirmed = await runCommand(['account', 'confirm-email', String(accountId)], env)
    expect(confirmed).toMatchObject({ code: 1, stdout: '' })
    expect(confirmed.stderr).toBe(
      `fileshare: Account ${other.accountId} has the new address of account ${accountId} (in some letter case): ` +
        'the change was declined, and the holder sees why under Activity.\n',
    )
    expect(await t.app.services.emailChanges.pending(accountId)).toBeUndefined()
    const events = (await t.app.services.auditLog.list(accountId, { limit: 5, action: 'email.change_cancelled' })).events
    expect(events).toMatchObject([{ actor: { type: 'operator' }, details: { reason: 'address_taken' } }])
  })

  it('email-changes and confirm-email escape control and text-direction characters instead of printing them', async () => {
    // Refused when asked now (services/email-changes.ts); a row stored before that rule is written directly.
    const email = `cli-raw-${Date.now()}@example.test`
    const newEmail = `x\u001b]52;c;aGk=\u0007\u202e${Date.now()}@evil.example`
    const { accountId } = await t.createAccount('pro', email)
    await t.app.database.db
      .insertInto('email_changes')
      .values({ account_id: accountId, new_email: newEmail, requested_at: Date.now() })
      .execute()

    const listed = await runCommand(['account', 'email-changes'], env)
    expect(listed.code).toBe(0)
    expect(raw(listed.stdout)).toBe(false)
    expect(listed.stdout).toContain(`${accountId}\t${email}\t-> x\\u001b]52;c;aGk=\\u0007\\u202e`)
    // --json: the same escapes (U+202E included, which JSON.stringify leaves raw); a script reads the address back.
    const json = await runCommand(['account', 'email-changes', '--json'], env)
    expect(raw(json.stdout)).toBe(false)
    expect((JSON.parse(json.stdout) as Array<{ new_email: string }>).find((c) => c.new_email === newEmail)).toBeDefined()

    const confirmed = await runCommand(['account', 'confirm-email', String(accountId)], env)
    expect(confirmed).toMatchObject({ code: 0, stderr: '' })
    expect(raw(confirmed.stdout)).toBe(false)
    expect(confirmed.stdout).toContain('now signs in as x\\u001b]52;c;aGk=\\u0007\\u202e')
    const accounts = await runCommand(['account', 'list'], env)
    expect(raw(accounts.stdout)).toBe(false)
  })

  it('reset-two-factor turns the second factor off; said plainly when there is none', async () => {
    const email = `cli-2fa-${Date.now()}@example.test`
    const { accountId } = await t.createAccount('pro', email)
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    const enrolment = await t.app.services.twoFactor.startEnrolment(accountId, email)
    const { TOTP, Secret } = await import('otpauth')
    const code = TOTP.generate({ secret: Secret.fromBase32(enrolment.secret), timestamp: Date.now() })
    await t.app.services.twoFactor.confirmEnrolment(accountId, code, { type: 'session', id: accountId })
    expect(((await (await signIn(email)).json()) as { two_factor_required?: boolean }).two_factor_required).toBe(true)

    const reset = await runCommand(['account', 'reset-two-factor', String(accountId)], env)
    expect(reset).toEqual({
      code: 0,
      stderr: '',
      stdout: `Turned off two-factor sign-in of account ${accountId}; its recovery codes no longer work.\n`,
    })
    expect(((await (await signIn(email)).json()) as { csrf_token?: string }).csrf_token).toBeDefined()
    expect((await runCommand(['account', 'reset-two-factor', String(accountId)], env)).stdout).toBe(
      `Account ${accountId} has no two-factor sign-in; nothing changed.\n`,
    )
  })
})

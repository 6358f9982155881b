import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCommand } from '../helpers/cli.js'
import { runCliWithInput } from '../helpers/server-process.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

const PASSWORD = 'correct horse battery staple'

/**
 * `account invite` and `account set-password` against the database of a running server (SQLite in
 * the test app's data folder), then checked through the dashboard's HTTP. `set-password` runs as a
 * real process, since reading stdin and hashing at production's cost are the point; the other
 * commands run in this process (test/helpers/cli.ts: the binary's own parsing, output and exit codes).
 */
describe('fileshare account invite / set-password', () => {
  let t: TestApp
  let env: Record<string, string>
  beforeAll(async () => {
    t = await startTestApp()
    env = { FILESHARE_DATA_DIR: t.dataDir, FILESHARE_PUBLIC_URL: 'https://files.example.test/' }
  })
  afterAll(async () => {
    await t.close()
  })

  const signIn = (email: string, password: string) =>
    fetch(`${t.url}/dashboard/api/sign-in`, {
      method: 'POST',
      headers: { origin: t.url, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    })

  it('help lists both commands and says the password never comes from an argument', async () => {
    const { stdout } = await runCommand(['help'], env)
    expect(stdout).toContain('account invite ID [--json]')
    expect(stdout).toContain('account set-password ID')
    expect(stdout).toMatch(/read from stdin/)
  })

  it('invite prints a one-time link under the public URL, with the token in the fragment; it works once', async () => {
    const email = `invited-${Date.now()}@example.test`
    const { accountId } = await t.createAccount('pro', email)
    const text = await runCommand(['account', 'invite', String(accountId)], env)
    expect(text).toMatchObject({ code: 0, stderr: '' })
    const [first, link, ...rest] = text.stdout.trim().split('\n')
    expect(first).toMatch(
      new RegExp(`^One-time link for ${email} \\(valid until \\d{4}-\\d{2}-\\d{2}T[0-9:.]+Z; a new invite replaces it\\):$`),
    )
    expect(link).toMatch(/^https:\/\/files\.example\.test\/dashboard\/invite#[A-Za-z0-9_-]{43}$/)
    expect(rest).toEqual([])

    // The second invite replaces the first.
    const json = await runCommand(['account', 'invite', String(accountId), '--json'], env)
    expect(json).toMatchObject({ code: 0, stderr: '' })
    const invite = JSON.parse(json.stdout) as { account_id: number; email: string; invite_url: string; expires_at: string }
    expect(invite).toEqual({
      account_id: accountId,
      email,
      invite_url: expect.stringMatching(/#[A-Za-z0-9_-]{43}$/),
      expires_at: expect.any(String),
    })
    const days = (Date.parse(invite.expires_at) - Date.now()) / 86_400_000
    expect(days).toBeGreaterThan(6.9)
    expect(days).toBeLessThanOrEqual(7)

    const accept = (url: string) =>
      fetch(`${t.url}/dashboard/api/invite`, {
        method: 'POST',
        headers: { origin: t.url, 'content-type': 'application/json' },
        body: JSON.stringify({ token: new URL(url).hash.slice(1), password: PASSWORD }),
      })
    expect((await accept(link!)).status).toBe(400)
    expect((await accept(invite.invite_url)).status).toBe(200)
    expect((await accept(invite.invite_url)).status).toBe(400)
    expect((await signIn(email, PASSWORD)).status).toBe(200)
  })

  it('set-password reads the first line of stdin, and signs out the sessions of the account', async () => {
    const email = `stdin-${Date.now()}@example.test`
    const { accountId } = await t.createAccount('pro', email)
    const result = await runCliWithInput(['account', 'set-password', String(accountId)], env, `${PASSWORD}\nignored second line\n`)
    expect(result).toEqual({
      code: 0,
      stderr: '',
      stdout: `Set the dashboard password of account ${accountId} (${email}); its sessions were signed out.\n`,
    })
    // A real process hashes at production's cost (the in-process test app uses a lower one).
    const stored = await t.app.database.db
      .selectFrom('account_passwords')
      .select('password_hash')
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow()
    expect(stored.password_hash).toMatch(/^scrypt\$32768\$8\$1\$/)
    const signedIn = await signIn(email, PASSWORD)
    expect(signedIn.status).toBe(200)
    const cookie = signedIn.headers.getSetCookie()[0]!.split(';')[0]!

    const changed = await runCliWithInput(['account', 'set-password', String(accountId)], env, 'a different long password')
    expect(changed.code).toBe(0)
    expect((await fetch(`${t.url}/dashboard/api/session`, { headers: { cookie } })).status).toBe(401)
    expect((await signIn(email, PASSWORD)).status).toBe(401)
    expect((await signIn(email, 'a different long password')).status).toBe(200)
  })

  it('refuses a short password, empty stdin, and unknown accounts, with one-line errors', async () => {
    const { accountId } = await t.createAccount('pro')
    const short = await runCliWithInput(['account', 'set-password', String(accountId)], env, 'short\n')
    expect(short).toEqual({ code: 1, stdout: '', stderr: 'fileshare: The password must have at least 12 characters.\n' })
    const empty = await runCliWithInput(['account', 'set-password', String(accountId)], env, '')
    expect(empty.code).toBe(2)
    expect(empty.stderr).toBe('fileshare: account set-password reads the password from stdin, which was empty.\n')
    expect(await runCliWithInput(['account', 'set-password', '999999'], env, `${PASSWORD}\n`)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'fileshare: No account with id 999999.\n',
    })
    expect(await runCommand(['account', 'invite', '999999'], env)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'fileshare: No account with id 999999.\n',
    })
    expect((await runCommand(['account', 'invite'], env)).code).toBe(2)
    expect((await runCommand(['account', 'set-password', 'abc'], env)).code).toBe(2)
  })

  it('never accepts the password as an argument', async () => {
    const { accountId } = await t.createAccount('pro')
    const result = await runCommand(['account', 'set-password', String(accountId), '--password', PASSWORD], env)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^fileshare: Unknown option '--password'/)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/lib/sha256-hex.js'
import { SLOW_SIGN_IN_DELAY_MS } from '../../src/services/sign-in.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

/**
 * Issue 18, "Account security", over HTTP on both stacks (SQLite + in-memory limiters, PostgreSQL +
 * Redis limiters): password change, sign out everywhere, invites that die once a password exists,
 * the idle timeout, cookie and header rules, and a sign-in guard that keeps attackers out without
 * keeping the holder out.
 */
const PASSWORD = 'correct horse battery staple'
const NEW_PASSWORD = 'a brand new password, long enough'

let counter = 0

interface Session {
  id: string
  csrf: string
}

function sessionCookie(response: Response): { value: string; attributes: string[] } | undefined {
  const header = response.headers.getSetCookie().find((cookie) => cookie.startsWith('fileshare_session='))
  if (!header) return undefined
  const [pair, ...attributes] = header.split(/;\s*/)
  return { value: pair!.slice('fileshare_session='.length), attributes }
}

function post(t: TestApp, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${t.url}/dashboard/api/${path}`, {
    method: 'POST',
    headers: { origin: t.url, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
}

function withSession(t: TestApp, session: Session, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`${t.url}/dashboard/api/${path}`, {
    method,
    headers: {
      origin: t.url,
      cookie: `fileshare_session=${session.id}`,
      'x-csrf-token': session.csrf,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
}

async function createHolder(t: TestApp) {
  const email = `security${++counter}-${Date.now()}@example.test`
  const { accountId } = await t.createAccount('pro', email)
  await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
  return { accountId, email }
}

async function signIn(t: TestApp, email: string, password = PASSWORD, ip?: string): Promise<Session> {
  const response = await post(t, 'sign-in', { email, password }, ip ? { 'x-forwarded-for': ip } : {})
  expect(response.status).toBe(200)
  return { id: sessionCookie(response)!.value, csrf: ((await response.json()) as { csrf_token: string }).csrf_token }
}

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status)
  expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code)
}

const sessionStatus = async (t: TestApp, session: Session) => (await withSession(t, session, 'GET', 'session')).status

let t: TestApp
beforeAll(async () => {
  t = await startTestApp({
    FILESHARE_TRUST_PROXY: 'true',
    FILESHARE_SIGN_IN_FAILURES_PER_MINUTE: '6',
    FILESHARE_SIGN_IN_ACCOUNT_FAILURES_PER_MINUTE: '3',
    FILESHARE_SIGN_IN_EMAIL_FAILURES_PER_HOUR: '8',
    FILESHARE_SESSION_IDLE_TIMEOUT_MS: '60000',
  })
})
afterAll(async () => {
  await t?.close()
})

describe('changing the password', () => {
  it('needs the current password; ends every other session and keeps this one', async () => {
    const holder = await createHolder(t)
    const here = await signIn(t, holder.email, PASSWORD, '198.18.0.1')
    const elsewhere = await signIn(t, holder.email, PASSWORD, '198.18.0.2')

    await expectError(
      await withSession(t, here, 'POST', 'password', { current_password: 'not my password', new_password: NEW_PASSWORD }),
      400,
      'wrong_password',
    )
    await expectError(
      await withSession(t, here, 'POST', 'password', { current_password: PASSWORD, new_password: 'too short' }),
      400,
      'invalid_parameter',
    )
    // Without the CSRF token: refused, nothing changes.
    await expectError(
      await withSession(t, here, 'POST', 'password', { current_password: PASSWORD, new_password: NEW_PASSWORD }, { 'x-csrf-token': 'x' }),
      403,
      'csrf_failed',
    )
    expect(await sessionStatus(t, elsewhere)).toBe(200)

    const changed = await withSession(t, here, 'POST', 'password', { current_password: PASSWORD, new_password: NEW_PASSWORD })
    expect(changed.status).toBe(200)
    expect(sessionCookie(changed)).toBeUndefined()
    expect(await sessionStatus(t, here)).toBe(200)
    expect(await sessionStatus(t, elsewhere)).toBe(401)
    await expectError(
      await post(t, 'sign-in', { email: holder.email, password: PASSWORD }, { 'x-forwarded-for': '198.18.0.3' }),
      401,
      'sign_in_failed',
    )
    await signIn(t, holder.email, NEW_PASSWORD, '198.18.0.3')
  })

  it('a wrong current password counts like a failed sign-in: past the budget, even the right one is 429', async () => {
    const holder = await createHolder(t)
    const session = await signIn(t, holder.email, PASSWORD, '198.18.1.1')
    const change = (current: string) =>
      withSession(
        t,
        session,
        'POST',
        'password',
        { current_password: current, new_password: NEW_PASSWORD },
        { 'x-forwarded-for': '198.18.1.1' },
      )
    for (let i = 0; i < 3; i++) await expectError(await change('wrong'), 400, 'wrong_password')
    const blocked = await change(PASSWORD)
    await expectError(blocked, 429, 'rate_limited')
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  })
})

describe('sign out everywhere', () => {
  it('ends every session of the account, this one included, and clears the cookie; other accounts keep theirs', async () => {
    const holder = await createHolder(t)
    const other = await createHolder(t)
    const sessions = [await signIn(t, holder.email), await signIn(t, holder.email), await signIn(t, holder.email)]
    const bystander = await signIn(t, other.email)
    await expectError(
      await withSession(t, sessions[0]!, 'POST', 'sign-out-everywhere', undefined, { 'x-csrf-token': 'x' }),
      403,
      'csrf_failed',
    )
    const response = await withSession(t, sessions[0]!, 'POST', 'sign-out-everywhere')
    expect(response.status).toBe(200)
    expect(sessionCookie(response)!.value).toBe('')
    for (const session of sessions) expect(await sessionStatus(t, session)).toBe(401)
    expect(await sessionStatus(t, bystander)).toBe(200)
    const rows = await t.app.database.db.selectFrom('sessions').select('id').where('account_id', '=', holder.accountId).execute()
    expect(rows).toEqual([])
  })
})

describe('invitations die once a password exists', () => {
  async function inviteFor(accountId: number) {
    return (await t.app.services.accountHolders.createInvite(accountId)).token
  }

  it("shows the account's email for a usable invitation (POST, so the token stays out of URLs)", async () => {
    const { accountId } = await t.createAccount('pro', `invited${++counter}@example.test`)
    const token = await inviteFor(accountId)
    const response = await post(t, 'invite/details', { token })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ success: true, email: `invited${counter}@example.test`, expires_at: expect.any(String) })
    await expectError(await post(t, 'invite/details', { token: 'x'.repeat(43) }), 400, 'invalid_invite')
    await expectError(await post(t, 'invite/details', { token }, { origin: 'https://evil.example' }), 403, 'csrf_failed')
  })

  it('an unused invitation stops working when a password is set another way (CLI, another invitation, a change)', async () => {
    // set-password (the CLI's path)
    const first = await t.createAccount('pro')
    const stale = await inviteFor(first.accountId)
    await t.app.services.accountHolders.setPassword(first.accountId, PASSWORD)
    await expectError(await post(t, 'invite/details', { token: stale }), 400, 'invalid_invite')
    await expectError(await post(t, 'invite', { token: stale, password: NEW_PASSWORD }), 400, 'invalid_invite')

    // A change in Settings
    const holder = await createHolder(t)
    const reset = await inviteFor(holder.accountId)
    const session = await signIn(t, holder.email)
    expect((await withSession(t, session, 'POST', 'password', { current_password: PASSWORD, new_password: NEW_PASSWORD })).status).toBe(200)
    await expectError(await post(t, 'invite', { token: reset, password: 'the attacker chooses this' }), 400, 'invalid_invite')
    await signIn(t, holder.email, NEW_PASSWORD)
  })

  it('an invitation older than the password is refused even if it was left in the table (made before this rule)', async () => {
    const holder = await createHolder(t)
    const token = 'A'.repeat(20) + String(Date.now()).padStart(23, '0')
    const password = await t.app.database.db
      .selectFrom('account_passwords')
      .selectAll()
      .where('account_id', '=', holder.accountId)
      .executeTakeFirstOrThrow()
    await t.app.database.db
      .insertInto('account_invites')
      .values({
        account_id: holder.accountId,
        token_hash: sha256Hex(token),
        created_at: password.updated_at - 1000,
        expires_at: Date.now() + 3_600_000,
      })
      .execute()
    await expectError(await post(t, 'invite/details', { token }), 400, 'invalid_invite')
    await expectError(await post(t, 'invite', { token, password: 'the attacker chooses this' }), 400, 'invalid_invite')
    await signIn(t, holder.email)
  })

  it("an invitation made after the password (the operator's reset) works once", async () => {
    const holder = await createHolder(t)
    t.advanceClock(5)
    const token = await inviteFor(holder.accountId)
    expect((await post(t, 'invite/details', { token })).status).toBe(200)
    expect((await post(t, 'invite', { token, password: NEW_PASSWORD })).status).toBe(200)
    await expectError(await post(t, 'invite', { token, password: NEW_PASSWORD }), 400, 'invalid_invite')
  })
})

describe('session idle timeout (60 s here)', () => {
  it('a session used within the timeout goes on; one left idle past it ends', async () => {
    const holder = await createHolder(t)
    const session = await signIn(t, holder.email)
    t.advanceClock(50_000)
    expect(await sessionStatus(t, session)).toBe(200)
    t.advanceClock(50_000)
    // 100 s after sign-in, 50 s after its last use.
    expect(await sessionStatus(t, session)).toBe(200)
    t.advanceClock(61_000)
    await expectError(await withSession(t, session, 'GET', 'session'), 401, 'sign_in_required')
    // Pages too.
    const page = await fetch(`${t.url}/dashboard/settings`, { headers: { cookie: `fileshare_session=${session.id}` }, redirect: 'manual' })
    expect(page.status).toBe(303)
  })

  it('the 12-hour lifetime still ends a session that is never idle', async () => {
    const holder = await createHolder(t)
    const session = await signIn(t, holder.email)
    for (let elapsed = 0; elapsed < 12 * 60 * 60 * 1000; elapsed += 50_000) {
      t.advanceClock(50_000)
      // Every few steps is enough for the test; the session is "used" by each find.
      if (elapsed % 3_000_000 === 0) expect(await sessionStatus(t, session)).toBe(200)
      else await t.app.services.sessions.find(session.id)
    }
    expect(await sessionStatus(t, session)).toBe(401)
  })
})

describe('headers and cookie on an https public URL', () => {
  let https: TestApp
  beforeAll(async () => {
    https = await startTestApp({ FILESHARE_PUBLIC_URL: 'https://files.example.test' })
  })
  afterAll(async () => {
    await https?.close()
  })

  it('the session cookie is Secure when set and when cleared; every answer carries Permissions-Policy', async () => {
    const holder = await createHolder(https)
    const response = await post(https, 'sign-in', { email: holder.email, password: PASSWORD })
    expect(sessionCookie(response)!.attributes).toEqual(expect.arrayContaining(['Secure', 'HttpOnly', 'SameSite=Strict']))
    const session = { id: sessionCookie(response)!.value, csrf: ((await response.json()) as { csrf_token: string }).csrf_token }
    const cleared = await withSession(https, session, 'POST', 'sign-out-everywhere')
    expect(sessionCookie(cleared)!.attributes).toContain('Secure')
    for (const path of ['sign-in', 'invite', 'assets/settings.js', 'api/session']) {
      const answer = await fetch(`${https.url}/dashboard/${path}`)
      const policy = answer.headers.get('permissions-policy')
      expect(policy, path).toContain('camera=()')
      expect(policy, path).toContain('geolocation=()')
      expect(policy, path).toContain('clipboard-write=(self)')
    }
  })
})

describe('the sign-in guard keeps attackers out without keeping the holder out', () => {
  const attempt = (email: string, password: string, ip: string) => post(t, 'sign-in', { email, password }, { 'x-forwarded-for': ip })

  it('while another IP floods wrong passwords for the address (concurrently), the holder gets in from theirs', async () => {
    const holder = await createHolder(t)
    const flood = Array.from({ length: 25 }, () => attempt(holder.email, 'guess', '203.0.113.66'))
    const holderIn = attempt(holder.email, PASSWORD, '198.51.100.7')
    const [answers, own] = await Promise.all([Promise.all(flood), holderIn])
    expect(own.status).toBe(200)
    const statuses = answers.map((answer) => answer.status)
    // At most the pair's budget (3) of passwords were checked; the rest was refused unchecked.
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(3)
    expect(statuses.filter((status) => status === 401).length + statuses.filter((status) => status === 429).length).toBe(25)
    // The attacker stays locked out, even with the right password; the holder signs in again.
    await expectError(await attempt(holder.email, PASSWORD, '203.0.113.66'), 429, 'rate_limited')
    expect((await attempt(holder.email, PASSWORD, '198.51.100.7')).status).toBe(200)
    expect((await attempt(holder.email, PASSWORD, '198.51.100.8')).status).toBe(200)
  })

  it('per IP: concurrent failures on many addresses never pass the budget, and lock out that IP only', async () => {
    const holder = await createHolder(t)
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => attempt(`nobody${i}-${Date.now()}@example.test`, 'guess', '203.0.113.77')),
    )
    const checked = answers.filter((answer) => answer.status === 401).length
    expect(checked).toBe(6)
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(14)
    await expectError(await attempt(holder.email, PASSWORD, '203.0.113.77'), 429, 'rate_limited')
    expect((await attempt(holder.email, PASSWORD, '203.0.113.78')).status).toBe(200)
  })

  it('successful sign-ins are given back: a holder signing in often is never limited', async () => {
    const holder = await createHolder(t)
    for (let i = 0; i < 10; i++) expect((await attempt(holder.email, PASSWORD, '198.51.100.20')).status).toBe(200)
  })

  it('once the address has spent its hourly budget (from many IPs), every attempt waits, none is refused', async () => {
    const holder = await createHolder(t)
    // 8 failures from 4 IPs (2 each, under the pair's budget of 3).
    for (let i = 0; i < 8; i++) await expectError(await attempt(holder.email, 'guess', `192.0.2.${10 + (i % 4)}`), 401, 'sign_in_failed')
    let started = Date.now()
    await expectError(await attempt(holder.email, 'guess', '192.0.2.50'), 401, 'sign_in_failed')
    expect(Date.now() - started).toBeGreaterThanOrEqual(SLOW_SIGN_IN_DELAY_MS - 50)
    started = Date.now()
    expect((await attempt(holder.email, PASSWORD, '192.0.2.51')).status).toBe(200)
    expect(Date.now() - started).toBeGreaterThanOrEqual(SLOW_SIGN_IN_DELAY_MS - 50)
    // Another address is not slowed.
    const other = await createHolder(t)
    started = Date.now()
    expect((await attempt(other.email, PASSWORD, '192.0.2.52')).status).toBe(200)
    expect(Date.now() - started).toBeLessThan(SLOW_SIGN_IN_DELAY_MS)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, TEST_FRONT, type TestApp } from '../helpers/test-app.js'

/**
 * Issue 37, "Protect the account", over HTTP on both stacks: the holder's list of sessions (device,
 * address as FILESHARE_AUDIT_IP keeps it, times, this one marked) with sign-out per session, and an
 * email change that waits for the operator (the old address signs in until it is confirmed).
 */
const PASSWORD = 'correct horse battery staple'
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:135.0) Gecko/20100101 Firefox/135.0'
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.2 Mobile/15E148 Safari/604.1'

let counter = 0

interface Session {
  id: string
  csrf: string
}

function cookieOf(response: Response): string | undefined {
  const header = response.headers.getSetCookie().find((cookie) => cookie.startsWith('fileshare_session='))
  return header?.split(';')[0]!.slice('fileshare_session='.length)
}

function post(t: TestApp, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${t.url}/dashboard/api/${path}`, {
    method: 'POST',
    headers: { origin: t.url, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
}

function call(t: TestApp, session: Session, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
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

async function createHolder(t: TestApp, email = `holder${++counter}-${Date.now()}@example.test`) {
  const { accountId } = await t.createAccount('pro', email)
  await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
  return { accountId, email }
}

async function signIn(t: TestApp, email: string, headers: Record<string, string> = {}): Promise<Session> {
  const response = await post(t, 'sign-in', { email, password: PASSWORD }, headers)
  expect(response.status).toBe(200)
  return { id: cookieOf(response)!, csrf: ((await response.json()) as { csrf_token: string }).csrf_token }
}

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status)
  expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code)
}

interface ListedSession {
  session_id: number
  device: string | null
  ip: string | null
  created_at: string
  last_seen_at: string
  current: boolean
}

async function listSessions(t: TestApp, session: Session): Promise<ListedSession[]> {
  const response = await call(t, session, 'GET', 'sessions')
  expect(response.status).toBe(200)
  return ((await response.json()) as { sessions: ListedSession[] }).sessions
}

let t: TestApp
beforeAll(async () => {
  t = await startTestApp({ FILESHARE_TRUST_PROXY: 'true', FILESHARE_SIGN_IN_ACCOUNT_FAILURES_PER_MINUTE: '50' })
})
afterAll(async () => {
  await t?.close()
})

describe('active sessions', () => {
  it('lists the holder’s sessions with device, truncated address and times; this one is marked; no token is shown', async () => {
    const holder = await createHolder(t)
    const laptop = await signIn(t, holder.email, { 'user-agent': FIREFOX, 'x-forwarded-for': '198.51.100.23' })
    const phone = await signIn(t, holder.email, { 'user-agent': IPHONE, 'x-forwarded-for': '2001:db8:1234:5678::9' })
    const other = await createHolder(t)
    await signIn(t, other.email, { 'user-agent': FIREFOX })

    const listed = await listSessions(t, laptop)
    expect(listed).toHaveLength(2)
    // Most recently used first: the phone signed in last.
    // Behind nginx the forwarded address is nginx's own view of the client (it replaces X-Forwarded-For).
    const [phoneIp, laptopIp] = TEST_FRONT === 'nginx' ? ['127.0.0.0', '127.0.0.0'] : ['2001:db8:1234::', '198.51.100.0']
    expect(listed.map((s) => [s.device, s.ip, s.current])).toEqual([
      ['Safari on iOS', phoneIp, false],
      ['Firefox on Windows', laptopIp, true],
    ])
    for (const s of listed) {
      expect(Date.parse(s.created_at)).toBeGreaterThan(Date.now() - 60_000)
      expect(Date.parse(s.last_seen_at)).toBeGreaterThanOrEqual(Date.parse(s.created_at))
    }
    const text = JSON.stringify(listed)
    expect(text).not.toContain(laptop.id)
    expect(text).not.toContain(phone.id)
    expect((await listSessions(t, phone)).map((s) => s.current)).toEqual([true, false])
  })

  it('signs out one session: that one ends, this one goes on; another account’s session or an unknown id is 404', async () => {
    const holder = await createHolder(t)
    const here = await signIn(t, holder.email, { 'user-agent': FIREFOX })
    const there = await signIn(t, holder.email, { 'user-agent': IPHONE })
    const stranger = await createHolder(t)
    const strangers = await signIn(t, stranger.email)
    const [strangerRow] = await listSessions(t, strangers)

    const [thereRow] = (await listSessions(t, here)).filter((s) => !s.current)
    // Without the CSRF token: refused.
    await expectError(
      await call(t, here, 'DELETE', `sessions/${thereRow!.session_id}`, undefined, { 'x-csrf-token': 'x' }),
      403,
      'csrf_failed',
    )
    const ended = await call(t, here, 'DELETE', `sessions/${thereRow!.session_id}`)
    expect(ended.status).toBe(200)
    expect(cookieOf(ended)).toBeUndefined()
    expect((await call(t, there, 'GET', 'session')).status).toBe(401)
    expect((await call(t, here, 'GET', 'session')).status).toBe(200)

    await expectError(await call(t, here, 'DELETE', `sessions/${strangerRow!.session_id}`), 404, 'not_found')
    expect((await call(t, strangers, 'GET', 'session')).status).toBe(200)
    await expectError(await call(t, here, 'DELETE', `sessions/${thereRow!.session_id}`), 404, 'not_found')
    await expectError(await call(t, here, 'DELETE', 'sessions/abc'), 400, 'invalid_parameter')

    // The audit log names the session ended, never a token.
    const events = await t.app.services.auditLog.list(holder.accountId, { limit: 10 })
    const signedOut = events.events.find((event) => event.action === 'session.signed_out')
    expect(signedOut).toMatchObject({ target: { type: 'session', id: thereRow!.session_id } })
  })

  it('signing out this session from the list clears its cookie', async () => {
    const holder = await createHolder(t)
    const here = await signIn(t, holder.email)
    const [row] = await listSessions(t, here)
    const ended = await call(t, here, 'DELETE', `sessions/${row!.session_id}`)
    expect(ended.status).toBe(200)
    expect(ended.headers.getSetCookie().join()).toMatch(/fileshare_session=;/)
    expect((await call(t, here, 'GET', 'session')).status).toBe(401)
  })
})

describe('email change', () => {
  it('needs the password; waits for the operator while the old address signs in; then only the new one does', async () => {
    const holder = await createHolder(t)
    const session = await signIn(t, holder.email)
    const newEmail = `New-${holder.email}`

    await expectError(await call(t, session, 'POST', 'email', { new_email: newEmail, password: 'not my password' }), 400, 'wrong_password')
    await expectError(
      await call(t, session, 'POST', 'email', { new_email: 'not an address', password: PASSWORD }),
      400,
      'invalid_parameter',
    )
    await expectError(
      await call(t, session, 'POST', 'email', { new_email: holder.email.toUpperCase(), password: PASSWORD }),
      400,
      'invalid_parameter',
    )
    const asked = await call(t, session, 'POST', 'email', { new_email: ` ${newEmail} `, password: PASSWORD })
    expect(asked.status).toBe(200)
    expect(((await asked.json()) as { pending_email: { new_email: string } }).pending_email.new_email).toBe(newEmail)
    const body = (await (await call(t, session, 'GET', 'session')).json()) as { account: { email: string }; pending_email: unknown }
    expect(body.account.email).toBe(holder.email)
    expect(body.pending_email).toEqual({ new_email: newEmail, requested_at: expect.any(String) })

    // Pending: the old address signs in, the new one does not.
    await signIn(t, holder.email)
    await expectError(await post(t, 'sign-in', { email: newEmail, password: PASSWORD }), 401, 'sign_in_failed')

    const done = await t.app.services.emailChanges.confirm(holder.accountId)
    expect(done).toMatchObject({ oldEmail: holder.email, account: { email: newEmail } })
    await signIn(t, newEmail.toLowerCase())
    await expectError(await post(t, 'sign-in', { email: holder.email, password: PASSWORD }), 401, 'sign_in_failed')
    expect(((await (await call(t, session, 'GET', 'session')).json()) as { pending_email: unknown }).pending_email).toBeNull()

    const actions = (await t.app.services.auditLog.list(holder.accountId, { limit: 20 })).events.map((event) => event.action)
    expect(actions).toContain('email.change_requested')
    expect(actions).toContain('email.changed')
  })

  it('asking for an address another account has answers as for a free one: nothing tells the asker it is taken', async () => {
    const holder = await createHolder(t)
    const taken = await createHolder(t)
    const session = await signIn(t, holder.email)
    const answerFor = async (newEmail: string) => {
      const response = await call(t, session, 'POST', 'email', { new_email: newEmail, password: PASSWORD })
      const body = (await response.json()) as { pending_email: { new_email: string; requested_at: string } }
      const pending = ((await (await call(t, session, 'GET', 'session')).json()) as { pending_email: unknown }).pending_email
      // The same answer but for the address itself and the time.
      const same = (value: unknown) =>
        JSON.stringify(value)
          .replaceAll(newEmail, 'ADDRESS')
          .replace(/"\d{4}-[^"]+"/g, 'TIME')
      return { status: response.status, body: same(body), session: same(pending) }
    }
    const takenAnswer = await answerFor(taken.email.toUpperCase())
    const freeAnswer = await answerFor(`free-${holder.email}`)
    expect(takenAnswer).toEqual(freeAnswer)
    expect(takenAnswer.status).toBe(200)
    // The audit row of the request is the same kind too.
    const requests = (await t.app.services.auditLog.list(holder.accountId, { limit: 5, action: 'email.change_requested' })).events
    expect(requests.map((event) => Object.keys(event.details).sort())).toEqual([['new_email'], ['new_email']])
  })

  it('an address another account has is decided at confirmation: declined, the operator told, the holder sees why', async () => {
    const holder = await createHolder(t)
    const taken = await createHolder(t)
    const session = await signIn(t, holder.email)
    expect((await call(t, session, 'POST', 'email', { new_email: taken.email.toUpperCase(), password: PASSWORD })).status).toBe(200)
    // The operator's list shows it taken before confirming.
    const listed = (await t.app.services.emailChanges.listPending()).find((change) => change.accountId === holder.accountId)
    expect(listed).toMatchObject({ takenBy: taken.accountId })
    await expect(t.app.services.emailChanges.confirm(holder.accountId)).rejects.toMatchObject({
      code: 'invalid_parameter',
      message: expect.stringContaining(`Account ${taken.accountId} has the new address of account ${holder.accountId}`),
    })
    // Declined: nothing pending, the holder's address unchanged, the reason in the holder's activity.
    expect(((await (await call(t, session, 'GET', 'session')).json()) as { pending_email: unknown }).pending_email).toBeNull()
    await signIn(t, holder.email)
    const declined = (await t.app.services.auditLog.list(holder.accountId, { limit: 5, action: 'email.change_cancelled' })).events
    expect(declined).toMatchObject([
      { actor: { type: 'operator' }, details: { new_email: taken.email.toUpperCase(), reason: 'address_taken' } },
    ])

    // Free when asked and when listed, taken just before the operator confirms: declined the same way.
    const later = `later-${holder.email}`
    expect((await call(t, session, 'POST', 'email', { new_email: later, password: PASSWORD })).status).toBe(200)
    const other = await t.createAccount('pro', later.toUpperCase())
    await expect(t.app.services.emailChanges.confirm(holder.accountId)).rejects.toMatchObject({
      message: expect.stringContaining(`Account ${other.accountId} has the new address`),
    })
    expect(await t.app.services.emailChanges.pending(holder.accountId)).toBeUndefined()
    await signIn(t, holder.email)
  })

  it('an address with a control or text-direction character is refused (it would reach the operator’s terminal)', async () => {
    const holder = await createHolder(t)
    const session = await signIn(t, holder.email)
    const hostile = [
      // OSC 52: a terminal that prints it sets the clipboard.
      'x\u001b]52;c;aGk=\u0007@evil.example',
      // Shown reversed: the operator would check another address than the one stored.
      'moc.elpmaxe\u202e@holder.example',
      'x\u2066@evil.example',
      'x\u0085@evil.example',
      // At an end, where trim() would have dropped it silently.
      `${holder.email}x\u2028`,
    ]
    for (const newEmail of hostile) {
      await expectError(await call(t, session, 'POST', 'email', { new_email: newEmail, password: PASSWORD }), 400, 'invalid_parameter')
    }
    expect(await t.app.services.emailChanges.pending(holder.accountId)).toBeUndefined()
    // The operator's `account create` keeps the same rule.
    await expect(t.app.services.accounts.create('x\u001b[2Ky@example.test', 'pro')).rejects.toMatchObject({ code: 'invalid_parameter' })
    await expect(t.app.services.accounts.create('x\u202ey@example.test', 'pro')).rejects.toMatchObject({ code: 'invalid_parameter' })
  })

  it('a new request replaces the pending one; cancelling removes it (then 404)', async () => {
    const holder = await createHolder(t)
    const session = await signIn(t, holder.email)
    await call(t, session, 'POST', 'email', { new_email: `first-${holder.email}`, password: PASSWORD })
    await call(t, session, 'POST', 'email', { new_email: `second-${holder.email}`, password: PASSWORD })
    expect(await t.app.services.emailChanges.pending(holder.accountId)).toMatchObject({ newEmail: `second-${holder.email}` })
    expect((await call(t, session, 'DELETE', 'email')).status).toBe(200)
    await expectError(await call(t, session, 'DELETE', 'email'), 404, 'not_found')
    await expect(t.app.services.emailChanges.confirm(holder.accountId)).rejects.toMatchObject({ code: 'not_found' })
  })
})

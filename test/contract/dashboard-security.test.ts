import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, fileForm, startTestApp, TEST_PASSWORD_HASH_COST, uploadFile, type TestApp } from '../helpers/test-app.js'

const PASSWORD = 'correct horse battery staple'
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/

interface Holder {
  accountId: number
  email: string
  apiKey: string
}

let holderCounter = 0

/** An account whose holder has a dashboard password. */
async function createHolder(t: TestApp, plan = 'pro'): Promise<Holder> {
  const email = `holder${++holderCounter}-${Date.now()}@example.test`
  const { accountId, apiKey } = await t.createAccount(plan, email)
  await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
  return { accountId, email, apiKey }
}

/** The session cookie a response sets, with its attributes; undefined if it sets none. */
function sessionCookie(response: Response): { value: string; attributes: string[] } | undefined {
  const header = response.headers.getSetCookie().find((cookie) => cookie.startsWith('fileshare_session='))
  if (!header) return undefined
  const [pair, ...attributes] = header.split(/;\s*/)
  return { value: pair!.slice('fileshare_session='.length), attributes }
}

/** A signed-in holder, as the browser holds it: the cookie and the CSRF token the page reads. */
interface Session {
  id: string
  csrf: string
}

function dashboardRequest(t: TestApp, session: Session | undefined, method: string, path: string, init: RequestInit = {}) {
  const headers: Record<string, string> = { origin: t.url, ...(init.headers as Record<string, string>) }
  if (session) {
    headers.cookie = `fileshare_session=${session.id}`
    if (method !== 'GET' && !('x-csrf-token' in headers)) headers['x-csrf-token'] = session.csrf
  }
  return fetch(`${t.url}/dashboard/api/${path}`, { ...init, method, headers })
}

function postJson(t: TestApp, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${t.url}/dashboard/api/${path}`, {
    method: 'POST',
    headers: { origin: t.url, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
}

async function signIn(t: TestApp, holder: Pick<Holder, 'email'>, headers: Record<string, string> = {}): Promise<Session> {
  const response = await postJson(t, 'sign-in', { email: holder.email, password: PASSWORD }, headers)
  expect(response.status).toBe(200)
  const body = (await response.json()) as { csrf_token: string }
  return { id: sessionCookie(response)!.value, csrf: body.csrf_token }
}

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  const body = (await response.json()) as { success: boolean; error: { code: string; message: string } }
  expect(body).toEqual({ success: false, error: { code, message: expect.any(String) } })
  return body
}

async function activeKeyNames(t: TestApp, accountId: number) {
  return (await t.app.services.apiKeys.list(accountId)).filter((key) => key.revoked_at === null).map((key) => key.name)
}

// One app on the default configuration for the blocks that need nothing else (a fresh one each cost
// a PostgreSQL schema, a bucket and migrations on the scale-out stack): every test works with
// holders of its own, and the failed sign-ins of all of them stay below the per-IP guard.
let defaultApp: TestApp
beforeAll(async () => {
  defaultApp = await startTestApp()
})
afterAll(async () => {
  await defaultApp.close()
})

describe('dashboard sign-in and sessions', () => {
  let t: TestApp
  beforeAll(() => {
    t = defaultApp
  })

  it('signs in with email and password: a new HttpOnly, SameSite=Strict cookie on /dashboard, never Secure over http', async () => {
    const holder = await createHolder(t)
    const response = await postJson(t, 'sign-in', { email: holder.email, password: PASSWORD })
    expect(response.status).toBe(200)
    const cookie = sessionCookie(response)!
    expect(cookie.value).toMatch(SESSION_ID)
    expect(cookie.attributes).toEqual(expect.arrayContaining(['Path=/dashboard', 'HttpOnly', 'SameSite=Strict']))
    expect(cookie.attributes).not.toContain('Secure')
    const body = (await response.json()) as Record<string, unknown>
    expect(body).toMatchObject({
      success: true,
      account: { account_id: holder.accountId, email: holder.email, plan: 'pro', api_access: true },
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      api_base_url: 'http://files.example.test/api/v1',
    })
    expect(JSON.stringify(body)).not.toContain(cookie.value)
  })

  it('accepts the email in any letter case', async () => {
    const holder = await createHolder(t)
    await signIn(t, { email: holder.email.toUpperCase() })
  })

  it('signs the holder of a mixed-case email in with it in any letter case: no other account can take it in another case', async () => {
    const email = `Holder.Case${++holderCounter}-${Date.now()}@Example.test`
    const { accountId } = await t.createAccount('pro', email)
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    // Once, a second account took the address in lower case, and signing in with that case found it instead.
    await expect(t.createAccount('pro', email.toLowerCase())).rejects.toThrow(`An account with email ${email} already exists.`)
    for (const typed of [email, email.toLowerCase(), email.toUpperCase()]) {
      const response = await postJson(t, 'sign-in', { email: typed, password: PASSWORD })
      expect(response.status, typed).toBe(200)
      const body = (await response.json()) as { account: { account_id: number; email: string } }
      expect(body.account).toMatchObject({ account_id: accountId, email })
    }
  })

  it('answers a wrong password and an unknown email alike (no account enumeration), and sets no cookie', async () => {
    const holder = await createHolder(t)
    const wrongPassword = await postJson(t, 'sign-in', { email: holder.email, password: 'not the password' })
    const unknownEmail = await postJson(t, 'sign-in', { email: 'nobody@example.test', password: PASSWORD })
    const noPasswordYet = await t.createAccount('pro')
    const withoutPassword = await postJson(t, 'sign-in', {
      email: (await t.app.services.accounts.list()).find((a) => a.id === noPasswordYet.accountId)!.email,
      password: PASSWORD,
    })
    const bodies = []
    for (const response of [wrongPassword, unknownEmail, withoutPassword]) {
      bodies.push(await expectError(response, 401, 'sign_in_failed'))
      expect(sessionCookie(response)).toBeUndefined()
      expect(response.headers.get('www-authenticate')).toBeNull()
    }
    expect(new Set(bodies.map((body) => JSON.stringify(body))).size).toBe(1)
  })

  it('stores only a hash of the session id and an scrypt hash of the password', async () => {
    const holder = await createHolder(t)
    const session = await signIn(t, holder)
    const { db } = t.app.database
    const sessions = await db.selectFrom('sessions').selectAll().where('account_id', '=', holder.accountId).execute()
    expect(sessions).toHaveLength(1)
    expect(JSON.stringify(sessions)).not.toContain(session.id)
    const passwords = await db.selectFrom('account_passwords').selectAll().where('account_id', '=', holder.accountId).execute()
    // The test app hashes at TEST_PASSWORD_HASH_COST; the CLI test checks production's cost.
    expect(passwords[0]!.password_hash).toMatch(
      new RegExp(`^scrypt\\$${TEST_PASSWORD_HASH_COST.N}\\$8\\$1\\$[A-Za-z0-9_-]{22}\\$[A-Za-z0-9_-]{43}$`),
    )
    expect(JSON.stringify(passwords)).not.toContain(PASSWORD)
  })

  it('a session reads its own account only; signing out ends it on the server and clears the cookie', async () => {
    const holder = await createHolder(t)
    const session = await signIn(t, holder)
    const me = await dashboardRequest(t, session, 'GET', 'session')
    expect(me.status).toBe(200)
    expect(await me.json()).toMatchObject({ account: { email: holder.email } })

    const signOut = await dashboardRequest(t, session, 'POST', 'sign-out')
    expect(signOut.status).toBe(200)
    const cleared = sessionCookie(signOut)!
    expect(cleared.value).toBe('')
    expect(cleared.attributes.some((attribute) => /^Expires=Thu, 01 Jan 1970/.test(attribute) || attribute === 'Max-Age=0')).toBe(true)
    await expectError(await dashboardRequest(t, session, 'GET', 'session'), 401, 'sign_in_required')
    await expectError(await dashboardRequest(t, session, 'GET', 'keys'), 401, 'sign_in_required')
  })

  it('every endpoint but sign-in and invite needs a session', async () => {
    for (const [method, path] of [
      ['GET', 'session'],
      ['POST', 'sign-out'],
      ['GET', 'keys'],
      ['POST', 'keys'],
      ['DELETE', 'keys/1'],
      ['GET', 'usage'],
      ['GET', 'files'],
      ['GET', 'files/1'],
      ['DELETE', 'files/1'],
      ['POST', 'files/upload'],
    ] as const) {
      await expectError(await dashboardRequest(t, undefined, method, path), 401, 'sign_in_required')
      const forged = { id: 'A'.repeat(43), csrf: 'B'.repeat(43) }
      await expectError(await dashboardRequest(t, forged, method, path), 401, 'sign_in_required')
    }
  })

  it('pages need a session: without one they redirect to sign-in (relative Location), with one they are served', async () => {
    const holder = await createHolder(t)
    for (const page of ['files', 'usage', 'settings', 'reference']) {
      const anonymous = await fetch(`${t.url}/dashboard/${page}`, { redirect: 'manual' })
      expect(anonymous.status).toBe(303)
      expect(anonymous.headers.get('location')).toBe('sign-in')
    }
    const session = await signIn(t, holder)
    for (const page of ['files', 'usage', 'settings', 'reference']) {
      const response = await fetch(`${t.url}/dashboard/${page}`, { headers: { cookie: `fileshare_session=${session.id}` } })
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    }
    const signedInSignIn = await fetch(`${t.url}/dashboard/sign-in`, {
      redirect: 'manual',
      headers: { cookie: `fileshare_session=${session.id}` },
    })
    expect(signedInSignIn.headers.get('location')).toBe('files')
    for (const [path, location] of [
      ['/', 'dashboard/files'],
      ['/dashboard', 'dashboard/files'],
      ['/dashboard/', 'files'],
    ]) {
      const response = await fetch(`${t.url}${path!}`, { redirect: 'manual' })
      expect(response.status, path).toBe(302)
      expect(response.headers.get('location'), path).toBe(location)
    }
  })
})

describe('session fixation', () => {
  let t: TestApp
  beforeAll(() => {
    t = defaultApp
  })

  it('a session id the server did not issue is never adopted: sign-in sets a new one and the planted one stays invalid', async () => {
    const holder = await createHolder(t)
    const planted = 'P'.repeat(43)
    const session = await signIn(t, holder, { cookie: `fileshare_session=${planted}` })
    expect(session.id).not.toBe(planted)
    await expectError(await dashboardRequest(t, { id: planted, csrf: session.csrf }, 'GET', 'session'), 401, 'sign_in_required')
  })

  it("a valid session planted in the browser (say, the attacker's own) ends when the holder signs in", async () => {
    const attacker = await createHolder(t)
    const victim = await createHolder(t)
    const attackerSession = await signIn(t, attacker)
    const victimSession = await signIn(t, victim, { cookie: `fileshare_session=${attackerSession.id}` })
    expect(victimSession.id).not.toBe(attackerSession.id)
    await expectError(await dashboardRequest(t, attackerSession, 'GET', 'session'), 401, 'sign_in_required')
    const me = await dashboardRequest(t, victimSession, 'GET', 'session')
    expect(await me.json()).toMatchObject({ account: { email: victim.email } })
  })

  it('every sign-in gets a new id and a new CSRF token', async () => {
    const holder = await createHolder(t)
    const first = await signIn(t, holder)
    const second = await signIn(t, holder)
    expect(second.id).not.toBe(first.id)
    expect(second.csrf).not.toBe(first.csrf)
  })

  it('setting a password ends every session of the account', async () => {
    const holder = await createHolder(t)
    const session = await signIn(t, holder)
    await t.app.services.accountHolders.setPassword(holder.accountId, 'another password, also long')
    await expectError(await dashboardRequest(t, session, 'GET', 'session'), 401, 'sign_in_required')
  })
})

describe('CSRF', () => {
  let t: TestApp
  let holder: Holder
  let session: Session
  beforeAll(async () => {
    t = defaultApp
    holder = await createHolder(t)
    session = await signIn(t, holder)
  })

  const createKey = (headers: Record<string, string>) =>
    dashboardRequest(t, session, 'POST', 'keys', {
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ name: 'csrf probe' }),
    })

  it("a state change with the session's token from our own origin works", async () => {
    const response = await createKey({})
    expect(response.status).toBe(201)
    expect(await response.json()).toMatchObject({ success: true, key: { name: 'csrf probe' }, api_key: expect.stringMatching(/^fsk_/) })
  })

  it("is refused without the token, with a wrong one, or with another session's, and changes nothing", async () => {
    const other = await signIn(t, await createHolder(t))
    const before = await activeKeyNames(t, holder.accountId)
    for (const token of ['', 'x'.repeat(43), other.csrf, session.csrf.slice(0, -1)]) {
      await expectError(await createKey({ 'x-csrf-token': token }), 403, 'csrf_failed')
    }
    const withoutHeader = await fetch(`${t.url}/dashboard/api/keys`, {
      method: 'POST',
      headers: { origin: t.url, cookie: `fileshare_session=${session.id}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'csrf probe' }),
    })
    await expectError(withoutHeader, 403, 'csrf_failed')
    expect(await activeKeyNames(t, holder.accountId)).toEqual(before)
  })

  it('is refused from another origin or without an Origin header, even with the right token', async () => {
    const before = await activeKeyNames(t, holder.accountId)
    for (const origin of ['https://evil.example', 'http://files.example.test.evil.example', 'null']) {
      await expectError(await createKey({ origin }), 403, 'csrf_failed')
    }
    const noOrigin = await fetch(`${t.url}/dashboard/api/keys`, {
      method: 'POST',
      headers: { cookie: `fileshare_session=${session.id}`, 'x-csrf-token': session.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'csrf probe' }),
    })
    await expectError(noOrigin, 403, 'csrf_failed')
    expect(await activeKeyNames(t, holder.accountId)).toEqual(before)
  })

  it("the public URL's origin is accepted as well as the request's own", async () => {
    const response = await createKey({ origin: 'http://files.example.test' })
    expect(response.status).toBe(201)
  })

  it('guards delete, revoke, upload and sign-out the same way', async () => {
    const { body: uploaded } = await uploadFile(t, holder.apiKey, 'keep me', 'keep.txt')
    const key = await t.app.services.apiKeys.create(holder.accountId, 'keep')
    const blobs = await t.storedBlobs()
    const forged = { ...session, csrf: 'x'.repeat(43) }
    await expectError(await dashboardRequest(t, forged, 'DELETE', `files/${uploaded.file_id}`), 403, 'csrf_failed')
    await expectError(await dashboardRequest(t, forged, 'DELETE', `keys/${key.key.id}`), 403, 'csrf_failed')
    await expectError(await dashboardRequest(t, forged, 'POST', 'files/upload', { body: fileForm('nope', 'nope.txt') }), 403, 'csrf_failed')
    await expectError(await dashboardRequest(t, forged, 'POST', 'sign-out'), 403, 'csrf_failed')
    expect((await fetch(`${t.api}/files/${uploaded.file_id}`, { headers: bearer(holder.apiKey) })).status).toBe(200)
    expect((await fetch(`${t.api}/stats`, { headers: bearer(key.apiKey) })).status).toBe(200)
    expect(await t.storedBlobs()).toEqual(blobs)
    expect((await dashboardRequest(t, session, 'GET', 'session')).status).toBe(200)
  })

  it('sign-in and invitations from another origin are refused (login CSRF) and set no cookie', async () => {
    for (const [path, body] of [
      ['sign-in', { email: holder.email, password: PASSWORD }],
      ['invite', { token: 'x'.repeat(43), password: PASSWORD }],
    ] as const) {
      const response = await postJson(t, path, body, { origin: 'https://evil.example' })
      await expectError(response, 403, 'csrf_failed')
      expect(sessionCookie(response)).toBeUndefined()
    }
  })
})

describe('failed sign-in guard', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp({
      FILESHARE_TRUST_PROXY: 'true',
      FILESHARE_SIGN_IN_FAILURES_PER_MINUTE: '3',
      FILESHARE_SIGN_IN_ACCOUNT_FAILURES_PER_MINUTE: '2',
    })
  })
  afterAll(async () => {
    await t.close()
  })

  const attempt = (email: string, password: string, ip: string) => postJson(t, 'sign-in', { email, password }, { 'x-forwarded-for': ip })

  it('per client IP: after the allowed failures, every attempt from that IP is 429 with Retry-After, even a right one', async () => {
    const holder = await createHolder(t)
    for (let i = 0; i < 3; i++)
      await expectError(await attempt(`nobody${i}@example.test`, 'wrong password', '198.51.100.1'), 401, 'sign_in_failed')
    const blocked = await attempt(holder.email, PASSWORD, '198.51.100.1')
    await expectError(blocked, 429, 'rate_limited')
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(sessionCookie(blocked)).toBeUndefined()
    // Another address is not affected.
    expect((await attempt(holder.email, PASSWORD, '198.51.100.2')).status).toBe(200)
  })

  it('per IP and email pair: failures lock that email for that IP only, not other IPs nor other accounts', async () => {
    const holder = await createHolder(t)
    const bystander = await createHolder(t)
    await expectError(await attempt(holder.email, 'wrong password', '203.0.113.1'), 401, 'sign_in_failed')
    await expectError(await attempt(holder.email.toUpperCase(), 'wrong password', '203.0.113.1'), 401, 'sign_in_failed')
    await expectError(await attempt(holder.email, PASSWORD, '203.0.113.1'), 429, 'rate_limited')
    // The holder, from another address, is not kept out (test/contract/dashboard-account-security.test.ts).
    expect((await attempt(holder.email, PASSWORD, '203.0.113.3')).status).toBe(200)
    expect((await attempt(bystander.email, PASSWORD, '203.0.113.4')).status).toBe(200)
  })

  it('an unknown email is guarded the same way, so the guard tells nothing about which emails exist', async () => {
    const email = 'ghost@example.test'
    await expectError(await attempt(email, 'wrong password', '192.0.2.1'), 401, 'sign_in_failed')
    await expectError(await attempt(email, 'wrong password', '192.0.2.1'), 401, 'sign_in_failed')
    await expectError(await attempt(email, 'wrong password', '192.0.2.1'), 429, 'rate_limited')
  })
})

describe('invitations', () => {
  let t: TestApp
  beforeAll(() => {
    t = defaultApp
  })

  it('an invitation sets the password once, signs the holder in, and ends older sessions', async () => {
    const holder = await createHolder(t)
    const old = await signIn(t, holder)
    const { token } = await t.app.services.accountHolders.createInvite(holder.accountId)
    const accepted = await postJson(t, 'invite', { token, password: 'a brand new password' })
    expect(accepted.status).toBe(200)
    expect(sessionCookie(accepted)!.value).toMatch(SESSION_ID)
    expect(await accepted.json()).toMatchObject({ account: { email: holder.email } })
    await expectError(await dashboardRequest(t, old, 'GET', 'session'), 401, 'sign_in_required')
    await expectError(await postJson(t, 'sign-in', { email: holder.email, password: PASSWORD }), 401, 'sign_in_failed')
    expect((await postJson(t, 'sign-in', { email: holder.email, password: 'a brand new password' })).status).toBe(200)

    const again = await postJson(t, 'invite', { token, password: 'yet another long password' })
    await expectError(again, 400, 'invalid_invite')
    expect(sessionCookie(again)).toBeUndefined()
  })

  it('refuses an expired, a replaced, an unknown or a malformed invitation, and a short password', async () => {
    const holder = await createHolder(t)
    const expired = await t.app.services.accountHolders.createInvite(holder.accountId, Date.now() - 8 * 24 * 60 * 60 * 1000)
    await expectError(await postJson(t, 'invite', { token: expired.token, password: 'a long enough password' }), 400, 'invalid_invite')
    const replaced = await t.app.services.accountHolders.createInvite(holder.accountId)
    const current = await t.app.services.accountHolders.createInvite(holder.accountId)
    await expectError(await postJson(t, 'invite', { token: replaced.token, password: 'a long enough password' }), 400, 'invalid_invite')
    for (const token of ['x'.repeat(43), '', 'not a token']) {
      await expectError(await postJson(t, 'invite', { token, password: 'a long enough password' }), 400, 'invalid_invite')
    }
    const short = await postJson(t, 'invite', { token: current.token, password: 'too short' })
    expect((await expectError(short, 400, 'invalid_parameter')).error.message).toBe('The password must have at least 12 characters.')
    // A refused password does not use the invitation up.
    expect((await postJson(t, 'invite', { token: current.token, password: 'a long enough password' })).status).toBe(200)
  })

  it('stores only a hash of the invitation token', async () => {
    const holder = await createHolder(t)
    const { token } = await t.app.services.accountHolders.createInvite(holder.accountId)
    const rows = await t.app.database.db.selectFrom('account_invites').selectAll().where('account_id', '=', holder.accountId).execute()
    expect(rows).toHaveLength(1)
    expect(JSON.stringify(rows)).not.toContain(token)
  })
})

describe("dashboard actions go through the API's services and limits", () => {
  let t: TestApp
  beforeAll(() => {
    t = defaultApp
  })

  it("uploads, lists, reads and deletes files like the API, within the account's daily upload limit", async () => {
    const holder = await createHolder(t)
    await t.app.services.accounts.setLimits(holder.accountId, { daily_uploads: 1 })
    const session = await signIn(t, holder)
    const uploaded = await dashboardRequest(t, session, 'POST', 'files/upload', { body: fileForm('from the dashboard', 'dash.txt') })
    expect(uploaded.status).toBe(201)
    const file = (await uploaded.json()) as { file_id: number; public_link: string; filename: string }
    expect(file).toMatchObject({ success: true, filename: 'dash.txt', size: 18 })

    const second = await dashboardRequest(t, session, 'POST', 'files/upload', { body: fileForm('one too many', 'more.txt') })
    await expectError(second, 403, 'daily_upload_limit_exceeded')

    const viaApi = (await (await fetch(`${t.api}/files`, { headers: bearer(holder.apiKey) })).json()) as unknown
    const viaDashboard = (await (await dashboardRequest(t, session, 'GET', 'files')).json()) as unknown
    expect(viaDashboard).toEqual(viaApi)
    await expectError(await dashboardRequest(t, session, 'GET', 'files?limit=101'), 400, 'invalid_parameter')

    // One API request so far (the list above): the dashboard's own calls do not count against the API's limits.
    const usage = (await (await dashboardRequest(t, session, 'GET', 'usage')).json()) as Record<string, unknown>
    expect(usage).toMatchObject({
      plan: 'pro',
      stats: { total_files: 1, uploads_today: 1 },
      limits: { daily_uploads: 1 },
      requests_today: 1,
    })

    expect((await dashboardRequest(t, session, 'DELETE', `files/${file.file_id}`)).status).toBe(200)
    expect((await fetch(`${t.url}${new URL(file.public_link).pathname}`)).status).toBe(404)
  })

  it('a holder sees and touches only their own files and keys', async () => {
    const owner = await createHolder(t)
    const intruder = await createHolder(t)
    const { body: file } = await uploadFile(t, owner.apiKey, 'private', 'private.txt')
    const [ownerKey] = await t.app.services.apiKeys.list(owner.accountId)
    const session = await signIn(t, intruder)
    await expectError(await dashboardRequest(t, session, 'GET', `files/${file.file_id}`), 404, 'not_found')
    await expectError(await dashboardRequest(t, session, 'DELETE', `files/${file.file_id}`), 404, 'not_found')
    await expectError(await dashboardRequest(t, session, 'DELETE', `keys/${ownerKey!.id}`), 404, 'not_found')
    const keys = (await (await dashboardRequest(t, session, 'GET', 'keys')).json()) as { keys: { key_id: number }[] }
    expect(keys.keys.map((key) => key.key_id)).not.toContain(ownerKey!.id)
    expect((await fetch(`${t.api}/files/${file.file_id}`, { headers: bearer(owner.apiKey) })).status).toBe(200)
  })

  it('creates a named key shown once, lists it by prefix, and revokes it at once', async () => {
    const holder = await createHolder(t)
    const session = await signIn(t, holder)
    const created = await dashboardRequest(t, session, 'POST', 'keys', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: '  ci deploy  ' }),
    })
    expect(created.status).toBe(201)
    const { key, api_key: apiKey } = (await created.json()) as { key: { key_id: number; name: string; prefix: string }; api_key: string }
    expect(key.name).toBe('ci deploy')
    expect(apiKey.startsWith(key.prefix)).toBe(true)
    expect((await fetch(`${t.api}/stats`, { headers: bearer(apiKey) })).status).toBe(200)

    const listed = JSON.stringify(await (await dashboardRequest(t, session, 'GET', 'keys')).json())
    expect(listed).toContain(key.prefix)
    expect(listed).not.toContain(apiKey)

    for (const name of ['', '   ', 'x'.repeat(101)]) {
      const refused = await dashboardRequest(t, session, 'POST', 'keys', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      })
      await expectError(refused, 400, 'invalid_request')
    }
    // The key service's rule (as `fileshare key create --name`): no control characters (C0, DEL, C1).
    const before = await (await dashboardRequest(t, session, 'GET', 'keys')).json()
    for (const name of [
      'two\nlines',
      'name\n',
      'tab\there',
      'red \u001b[31mname',
      'nul\u0000',
      'del\u007f',
      'next\u0085line',
      'csi\u009b31m',
      '\u0001',
    ]) {
      const refused = await dashboardRequest(t, session, 'POST', 'keys', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      })
      await expectError(refused, 400, 'invalid_request')
    }
    expect(await (await dashboardRequest(t, session, 'GET', 'keys')).json()).toEqual(before)
    // 100 characters, not UTF-16 units, counted after trimming (as the CLI does); non-ASCII and
    // inner spaces are fine.
    for (const name of ['\u{1F511}'.repeat(100), 'Ünïcødé  name', `  ${'k'.repeat(100)}  `]) {
      const accepted = await dashboardRequest(t, session, 'POST', 'keys', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      })
      expect(accepted.status, name).toBe(201)
      expect(((await accepted.json()) as { key: { name: string } }).key.name).toBe(name.trim())
    }
    const revoked = await dashboardRequest(t, session, 'DELETE', `keys/${key.key_id}`)
    expect(revoked.status).toBe(200)
    expect(await revoked.json()).toMatchObject({ key: { revoked_at: expect.any(String) } })
    await expectError(await fetch(`${t.api}/stats`, { headers: bearer(apiKey) }), 401, 'unauthorized')
  })
})

describe('dashboard pages: headers and markup', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: 'https://files.example.test' })
  })
  afterAll(async () => {
    await t.close()
  })

  it('with an https public URL the cookie is Secure', async () => {
    const holder = await createHolder(t)
    const response = await postJson(t, 'sign-in', { email: holder.email, password: PASSWORD })
    expect(sessionCookie(response)!.attributes).toContain('Secure')
  })

  it('every page, asset and endpoint carries a strict CSP, refuses framing, and pages have no inline script', async () => {
    const holder = await createHolder(t)
    const session = await signIn(t, holder)
    const cookie = `fileshare_session=${session.id}`
    const paths = [
      '/dashboard/sign-in',
      '/dashboard/invite',
      '/dashboard/files',
      '/dashboard/usage',
      '/dashboard/settings',
      '/dashboard/reference',
      '/dashboard/assets/common.js',
      '/dashboard/assets/dashboard.css',
      '/dashboard/assets/swagger-ui/swagger-ui-bundle.js',
      '/dashboard/api/session',
    ]
    for (const path of paths) {
      const response = await fetch(`${t.url}${path}`, { headers: { cookie } })
      expect(response.status, path).toBe(200)
      const csp = response.headers.get('content-security-policy')!
      expect(csp, path).toContain("default-src 'self'")
      expect(csp, path).toContain("script-src 'self'")
      expect(csp, path).toContain("frame-ancestors 'none'")
      expect(csp, path).not.toContain('unsafe')
      expect(response.headers.get('x-frame-options'), path).toBe('DENY')
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff')
      expect(response.headers.get('cross-origin-opener-policy'), path).toBe('same-origin')
      const text = await response.text()
      if (response.headers.get('content-type')!.startsWith('text/html')) {
        expect(response.headers.get('cache-control'), path).toBe('no-store')
        for (const tag of text.match(/<script\b[^>]*>/g) ?? []) expect(tag, path).toMatch(/\ssrc="/)
        expect(text, path).not.toMatch(/\son[a-z]+=/i)
        expect(text, path).not.toMatch(/(src|href)="(https?:)?\/\//)
      }
    }
  })

  it('an unknown dashboard path is a 404 with the same headers; the HTML one keeps its stricter policy', async () => {
    for (const [method, path, accept] of [
      ['GET', '/dashboard/api/nope', 'application/json'],
      ['POST', '/dashboard/api/nope', 'application/json'],
      ['GET', '/dashboard/nope', 'text/html'],
    ] as const) {
      const what = `${method} ${path} (${accept})`
      const response = await fetch(`${t.url}${path}`, { method, headers: { accept, origin: 'https://files.example.test' } })
      expect(response.status, what).toBe(404)
      expect(response.headers.get('content-type'), what).toContain(accept)
      expect(response.headers.get('content-security-policy'), what).toContain("frame-ancestors 'none'")
      expect(response.headers.get('content-security-policy'), what).toContain(
        accept === 'text/html' ? "default-src 'none'" : "default-src 'self'",
      )
      expect(response.headers.get('x-frame-options'), what).toBe('DENY')
      expect(response.headers.get('x-content-type-options'), what).toBe('nosniff')
      expect(response.headers.get('permissions-policy'), what).toContain('camera=()')
      expect(response.headers.get('cache-control'), what).toBe('no-store')
    }
  })

  it('Swagger UI is served from this service, and only its two files', async () => {
    expect((await fetch(`${t.url}/dashboard/assets/swagger-ui/swagger-ui.css`)).status).toBe(200)
    expect((await fetch(`${t.url}/dashboard/assets/swagger-ui/index.html`)).status).toBe(404)
    expect((await fetch(`${t.url}/dashboard/assets/swagger-ui/swagger-initializer.js`)).status).toBe(404)
    expect((await fetch(`${t.url}/dashboard/assets/../../package.json`)).status).toBe(404)
  })

  it('the dashboard stays out of the OpenAPI document', async () => {
    const document = (await (await fetch(`${t.api}/openapi.json`)).json()) as { paths: Record<string, unknown> }
    expect(
      Object.keys(document.paths).filter(
        (path) =>
          !path.startsWith('/api/v1/') &&
          // The public routes besides the API: downloads, health, and an upload request guest's grant.
          !['/healthz', '/readyz', '/download/{token}', '/download/{token}/{grant}', '/r/{token}/grant'].includes(path),
      ),
    ).toEqual([])
  })
})

describe('the download host never serves the dashboard', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_DOWNLOAD_URL: 'http://dl.example.test' })
  })
  afterAll(async () => {
    await t.close()
  })

  /** fetch() ignores a Host header, so requests "to" the download host go through node:http. */
  function send(method: string, path: string, headers: Record<string, string>, body?: string) {
    const { port } = new URL(t.url)
    return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, method, path, headers }, (response) => {
        let text = ''
        response.on('data', (chunk: Buffer) => (text += chunk.toString()))
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }))
      })
      request.on('error', reject)
      request.end(body)
    })
  }

  it('answers 404 JSON for every page, asset and endpoint of the dashboard, even with a valid session', async () => {
    const holder = await createHolder(t)
    const session = await signIn(t, holder)
    const headers = { host: 'dl.example.test', cookie: `fileshare_session=${session.id}` }
    for (const path of [
      '/',
      '/dashboard',
      '/dashboard/',
      '/dashboard/sign-in',
      '/dashboard/invite',
      '/dashboard/files',
      '/dashboard/settings',
      '/dashboard/usage',
      '/dashboard/reference',
      '/dashboard/assets/common.js',
      '/dashboard/assets/dashboard.css',
      '/dashboard/assets/swagger-ui/swagger-ui-bundle.js',
      '/dashboard/api/session',
      '/dashboard/api/keys',
      '/dashboard/api/files',
      '/dashboard/api/usage',
    ]) {
      const answer = await send('GET', path, headers)
      expect(answer.status, path).toBe(404)
      expect(answer.headers['content-type'], path).toMatch(/^application\/json/)
      expect(JSON.parse(answer.body), path).toMatchObject({ success: false, error: { code: 'not_found' } })
    }
  })

  it('sign-in, invitations and state changes there are 404 and change nothing', async () => {
    const holder = await createHolder(t)
    const session = await signIn(t, holder)
    const json = { 'content-type': 'application/json', origin: 'http://dl.example.test' }
    const signInThere = await send(
      'POST',
      '/dashboard/api/sign-in',
      { host: 'dl.example.test', ...json },
      JSON.stringify({ email: holder.email, password: PASSWORD }),
    )
    expect(signInThere.status).toBe(404)
    expect(signInThere.headers['set-cookie']).toBeUndefined()
    const before = await activeKeyNames(t, holder.accountId)
    const keyThere = await send(
      'POST',
      '/dashboard/api/keys',
      { host: 'dl.example.test', cookie: `fileshare_session=${session.id}`, 'x-csrf-token': session.csrf, ...json },
      JSON.stringify({ name: 'from the download host' }),
    )
    expect(keyThere.status).toBe(404)
    expect(await activeKeyNames(t, holder.accountId)).toEqual(before)
    const signOutThere = await send('POST', '/dashboard/api/sign-out', {
      host: 'dl.example.test',
      cookie: `fileshare_session=${session.id}`,
      'x-csrf-token': session.csrf,
      origin: 'http://dl.example.test',
    })
    expect(signOutThere.status).toBe(404)
    expect((await dashboardRequest(t, session, 'GET', 'session')).status).toBe(200)
  })
})

import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { bearer, fileForm, makeTempDir, startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'

interface ErrorBody {
  success: boolean
  error: { code: string; message: string }
}

/** One call of each API endpoint, with the given headers. File id 1 may or may not exist. */
function everyEndpoint(api: string): { name: string; call: (headers: Record<string, string>) => Promise<Response> }[] {
  return [
    { name: 'POST /files/upload', call: (headers) => fetch(`${api}/files/upload`, { method: 'POST', headers, body: fileForm('hi') }) },
    { name: 'GET /files', call: (headers) => fetch(`${api}/files`, { headers }) },
    { name: 'GET /files/1', call: (headers) => fetch(`${api}/files/1`, { headers }) },
    { name: 'DELETE /files/1', call: (headers) => fetch(`${api}/files/1`, { method: 'DELETE', headers }) },
    { name: 'GET /stats', call: (headers) => fetch(`${api}/stats`, { headers }) },
  ]
}

async function expectError(response: Response, status: number, code: string): Promise<ErrorBody> {
  expect(response.status).toBe(status)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  const body = (await response.json()) as ErrorBody
  expect(body).toEqual({ success: false, error: { code, message: expect.any(String) } })
  expect(body.error.message.length).toBeGreaterThan(0)
  return body
}

async function expectUnauthorized(response: Response): Promise<void> {
  expect(response.headers.get('www-authenticate')).toMatch(/^Bearer\b/)
  await expectError(response, 401, 'unauthorized')
}

/** A key of the right shape that no account holds. */
function unknownKey(): string {
  return `fsk_${randomBytes(32).toString('base64url')}`
}

async function stats(t: TestApp, apiKey: string): Promise<Response> {
  return fetch(`${t.api}/stats`, { headers: bearer(apiKey) })
}

describe('authentication', () => {
  // One app for these tests (each in accounts of its own). Many failed requests here: keep the
  // per-IP guard out of the way.
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_AUTH_FAILURES_PER_MINUTE: '100000' })
  })
  afterAll(async () => {
    await t.close()
  })

  it('accepts the Bearer scheme in any letter case', async () => {
    const { apiKey } = await t.createAccount('pro')
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const response = await fetch(`${t.api}/stats`, { headers: { authorization: `${scheme} ${apiKey}` } })
      expect(response.status, scheme).toBe(200)
      expect(await response.json()).toMatchObject({ success: true, plan: 'pro' })
    }
  })

  it('answers 401 with WWW-Authenticate: Bearer on every endpoint when the header is missing', async () => {
    for (const endpoint of everyEndpoint(t.api)) {
      await expectUnauthorized(await endpoint.call({}))
    }
  })

  it('answers 401 to malformed Authorization headers', async () => {
    const { apiKey } = await t.createAccount('pro')
    const malformed = [
      '',
      'Bearer',
      apiKey,
      `Basic ${Buffer.from(`user:${apiKey}`).toString('base64')}`,
      `Token ${apiKey}`,
      `Bearer ${apiKey} extra`,
      `Bearer ${apiKey.slice(0, -1)}`,
      `Bearer ${apiKey}x`,
      `Bearer ${apiKey.replace(/^fsk_/, 'fsk-')}`,
      `Bearer ${apiKey.toUpperCase()}`,
    ]
    for (const authorization of malformed) {
      const response = await fetch(`${t.api}/stats`, { headers: { authorization } })
      expect(response.status, authorization).toBe(401)
      await expectUnauthorized(response)
    }
    // The well-formed key itself works, so the refusals above are about the header's form.
    expect((await stats(t, apiKey)).status).toBe(200)
  })

  it('answers 401 to a well-formed key that no account holds, on every endpoint', async () => {
    for (const endpoint of everyEndpoint(t.api)) {
      await expectUnauthorized(await endpoint.call(bearer(unknownKey())))
    }
  })

  it('answers 401 to a revoked key on every endpoint', async () => {
    const { accountId, apiKey } = await t.createAccount('pro')
    const second = await t.app.services.apiKeys.create(accountId, 'to revoke')
    expect((await stats(t, second.apiKey)).status).toBe(200)
    await t.app.services.apiKeys.revoke(second.key.id)
    for (const endpoint of everyEndpoint(t.api)) {
      await expectUnauthorized(await endpoint.call(bearer(second.apiKey)))
    }
    expect((await stats(t, apiKey)).status).toBe(200)
  })

  it('answers 401 to an expired key, and a key works until its expiry', async () => {
    const { accountId } = await t.createAccount('pro')
    const expired = await t.app.services.apiKeys.create(accountId, 'expired', { expiresAt: Date.now() - 1_000 })
    for (const endpoint of everyEndpoint(t.api)) {
      await expectUnauthorized(await endpoint.call(bearer(expired.apiKey)))
    }

    const expiresAt = Date.now() + 1_500
    const shortLived = await t.app.services.apiKeys.create(accountId, 'short-lived', { expiresAt })
    expect((await stats(t, shortLived.apiKey)).status).toBe(200)
    t.advanceClock(expiresAt - Date.now() + 50)
    await expectUnauthorized(await stats(t, shortLived.apiKey))
  })

  it('answers 403 plan_not_supported to a free account on every endpoint', async () => {
    const { apiKey } = await t.createAccount('free')
    for (const endpoint of everyEndpoint(t.api)) {
      const response = await endpoint.call(bearer(apiKey))
      expect(response.status, endpoint.name).toBe(403)
      await expectError(response, 403, 'plan_not_supported')
    }
  })

  it.each(['pro', 'business', 'enterprise'])('lets a %s account use every endpoint', async (plan) => {
    const { apiKey } = await t.createAccount(plan)
    const upload = await uploadFile(t, apiKey, 'content')
    expect(upload.response.status).toBe(201)
    expect(upload.body.success).toBe(true)
    const id = upload.body.file_id
    const calls = [
      fetch(`${t.api}/files`, { headers: bearer(apiKey) }),
      fetch(`${t.api}/files/${id}`, { headers: bearer(apiKey) }),
      fetch(`${t.api}/stats`, { headers: bearer(apiKey) }),
    ]
    for (const response of await Promise.all(calls)) {
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ success: true })
    }
    const deleted = await fetch(`${t.api}/files/${id}`, { method: 'DELETE', headers: bearer(apiKey) })
    expect(deleted.status).toBe(200)
    expect(await deleted.json()).toMatchObject({ success: true })
  })

  it('follows plan changes: a downgrade to free locks the API, an upgrade opens it again', async () => {
    const { accountId, apiKey } = await t.createAccount('pro')
    expect((await stats(t, apiKey)).status).toBe(200)
    await t.app.services.accounts.setPlan(accountId, 'free')
    await expectError(await stats(t, apiKey), 403, 'plan_not_supported')
    await t.app.services.accounts.setPlan(accountId, 'business')
    const response = await stats(t, apiKey)
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ plan: 'business' })
  })

  it('lets an account hold several keys, each working and revocable on its own', async () => {
    const { accountId, apiKey: first } = await t.createAccount('pro')
    const second = await t.app.services.apiKeys.create(accountId, 'second')
    const third = await t.app.services.apiKeys.create(accountId, 'third')
    expect(new Set([first, second.apiKey, third.apiKey]).size).toBe(3)

    // Every key acts for the same account: a file uploaded with one is seen with the others.
    const { body } = await uploadFile(t, second.apiKey, 'shared')
    for (const key of [first, second.apiKey, third.apiKey]) {
      const detail = await fetch(`${t.api}/files/${body.file_id}`, { headers: bearer(key) })
      expect(detail.status).toBe(200)
    }

    await t.app.services.apiKeys.revoke(second.key.id)
    await expectUnauthorized(await stats(t, second.apiKey))
    expect((await stats(t, first)).status).toBe(200)
    expect((await stats(t, third.apiKey)).status).toBe(200)

    await t.app.services.apiKeys.revoke(third.key.id)
    await expectUnauthorized(await stats(t, third.apiKey))
    expect((await stats(t, first)).status).toBe(200)
  })

  it('keeps accounts apart: a key never reaches another account', async () => {
    const alice = await t.createAccount('pro')
    const bob = await t.createAccount('pro')
    const { body } = await uploadFile(t, alice.apiKey, 'private')
    const response = await fetch(`${t.api}/files/${body.file_id}`, { headers: bearer(bob.apiKey) })
    await expectError(response, 404, 'not_found')
  })
})

describe('failed-authentication guard per client IP', () => {
  let t: TestApp
  beforeEach(async () => {
    t = await startTestApp({ FILESHARE_AUTH_FAILURES_PER_MINUTE: '3', FILESHARE_TRUST_PROXY: 'true' })
  })
  afterEach(async () => {
    await t.close()
  })

  it('answers 429 rate_limited with Retry-After once the failures are spent, while a valid key still works', async () => {
    const { apiKey } = await t.createAccount('pro')
    await expectUnauthorized(await fetch(`${t.api}/stats`))
    await expectUnauthorized(await fetch(`${t.api}/stats`, { headers: { authorization: 'Bearer nonsense' } }))
    await expectUnauthorized(await stats(t, unknownKey()))

    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await stats(t, unknownKey())
      expect(refused.headers.get('retry-after')).toMatch(/^[0-9]+$/)
      const retryAfter = Number(refused.headers.get('retry-after'))
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      await expectError(refused, 429, 'rate_limited')
    }

    const valid = await stats(t, apiKey)
    expect(valid.status).toBe(200)
    expect(await valid.json()).toMatchObject({ success: true })
  })

  it('counts failures per client IP', async () => {
    const fromA = { 'x-forwarded-for': '203.0.113.10' }
    const fromB = { 'x-forwarded-for': '203.0.113.20' }
    for (let i = 0; i < 3; i++) await expectUnauthorized(await fetch(`${t.api}/stats`, { headers: fromA }))
    await expectError(await fetch(`${t.api}/stats`, { headers: fromA }), 429, 'rate_limited')
    await expectUnauthorized(await fetch(`${t.api}/stats`, { headers: fromB }))
  })

  it('does not count failed authentications against any account', async () => {
    const { accountId, apiKey } = await t.createAccount('pro')
    const revoked = await t.app.services.apiKeys.create(accountId, 'revoked')
    await t.app.services.apiKeys.revoke(revoked.key.id)

    const before = await stats(t, apiKey)
    expect(before.headers.get('ratelimit-limit')).toBe('50')
    expect(before.headers.get('ratelimit-remaining')).toBe('49')

    // Failures with the account's own revoked key, an unknown key and no key; then the guard trips.
    await expectUnauthorized(await stats(t, revoked.apiKey))
    await expectUnauthorized(await stats(t, unknownKey()))
    await expectUnauthorized(await fetch(`${t.api}/stats`))
    await expectError(await stats(t, revoked.apiKey), 429, 'rate_limited')

    const after = await stats(t, apiKey)
    expect(after.status).toBe(200)
    expect(after.headers.get('ratelimit-limit')).toBe('50')
    expect(after.headers.get('ratelimit-remaining')).toBe('48')
  })
})

describe('logging', () => {
  const closers: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const close of closers.splice(0)) await close()
  })

  /** The real app with its own logger configuration, writing into `lines`. */
  async function startLoggedApp(lines: string[]) {
    const dataDir = await makeTempDir()
    const config = loadConfig({
      FILESHARE_DATA_DIR: dataDir,
      FILESHARE_LOG_LEVEL: 'trace',
      FILESHARE_PUBLIC_URL: 'http://files.example.test',
      FILESHARE_CACHE_TTL_MS: '0',
    })
    const app = await buildApp(config, { logStream: { write: (line: string) => void lines.push(line) } })
    await app.listen({ port: 0, host: '127.0.0.1' })
    closers.push(async () => {
      await app.close()
      await fs.rm(dataDir, { recursive: true, force: true })
    })
    const { port } = app.server.address() as AddressInfo
    return { app, api: `http://127.0.0.1:${port}/api/v1` }
  }

  it('never writes the Authorization header or a key into the logs', async () => {
    const lines: string[] = []
    const { app, api } = await startLoggedApp(lines)
    const { account, apiKey } = await app.services.accounts.create('logged@example.test', 'pro')
    const free = await app.services.accounts.create('logged-free@example.test', 'free')
    const wrongKey = unknownKey()
    const secret = apiKey.slice('fsk_'.length)

    const upload = await fetch(`${api}/files/upload`, { method: 'POST', headers: bearer(apiKey), body: fileForm('log me') })
    expect(upload.status).toBe(201)
    const requestId = upload.headers.get('x-request-id')
    expect((await fetch(`${api}/files?page=abc`, { headers: bearer(apiKey) })).status).toBe(400)
    expect((await fetch(`${api}/stats`, { headers: bearer(free.apiKey) })).status).toBe(403)
    expect((await fetch(`${api}/stats`, { headers: bearer(wrongKey) })).status).toBe(401)
    expect((await fetch(`${api}/stats`, { headers: { authorization: `Basic ${apiKey}` } })).status).toBe(401)
    // A log line that carries the request headers (a future serializer, a debug line) is censored too.
    app.log.info({ req: { headers: { authorization: `Bearer ${apiKey}` } } }, 'headers logged on purpose')
    app.log.info({ headers: { authorization: `Bearer ${apiKey}` } }, 'bare headers logged on purpose')
    expect(account.id).toBeGreaterThan(0)

    const log = lines.join('')
    // The capture works: the requests above were logged, with their request ids.
    expect(log).toContain(requestId)
    expect(log).toContain('headers logged on purpose')
    expect(log).toContain('[redacted]')
    for (const text of [apiKey, secret, free.apiKey, wrongKey]) expect(log).not.toContain(text)
    expect(log).not.toMatch(/fsk_[A-Za-z0-9_-]{10}/)
  })

  it('never writes a session cookie or a CSRF token into the logs, even at trace', async () => {
    const lines: string[] = []
    const { app, api } = await startLoggedApp(lines)
    const { apiKey } = await app.services.accounts.create('cookies@example.test', 'pro')
    const session = randomBytes(32).toString('base64url')
    const csrf = randomBytes(32).toString('base64url')
    const secrets = { cookie: `fileshare_session=${session}`, 'x-csrf-token': csrf }
    // The multipart parser logs every request header at trace ("Providing options to busboy").
    const upload = await fetch(`${api}/files/upload`, { method: 'POST', headers: { ...bearer(apiKey), ...secrets }, body: fileForm('x') })
    expect(upload.status).toBe(201)
    app.log.info({ req: { headers: secrets } }, 'dashboard headers logged on purpose')

    const log = lines.join('')
    expect(log).toContain('Providing options to busboy')
    expect(log).toContain('dashboard headers logged on purpose')
    for (const text of [session, csrf]) expect(log).not.toContain(text)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, fileForm, startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'

/**
 * The audit log (../shared/spec/keys-and-audit.md) over HTTP, on both stacks: every change the API
 * and the dashboard make is an event, with its actor and address; reads are not; events hold no
 * secret; paging and filters.
 */

interface AuditEvent {
  event_id: number
  at: string
  action: string
  actor: { type: string; id: number | null; name?: string }
  ip: string | null
  user_agent: string | null
  target: { type: string; id: number | null } | null
  details: Record<string, unknown>
}

interface Page {
  events: AuditEvent[]
  pagination: { limit: number; next_before_id: number | null }
}

const PASSWORD = 'correct horse battery staple'
const LINK_PASSWORD = 'the link password 42'
const TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/

describe('the audit log', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_DOWNLOADS_PER_MINUTE: '100000' })
  })
  afterAll(async () => {
    await t.close()
  })

  /** An account with a full key, an auditor key (audit:read only) and a dashboard password. */
  async function holder() {
    const email = `audit-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test`
    const { accountId, apiKey } = await t.createAccount('pro', email)
    await t.app.services.accounts.setLimits(accountId, { requests_per_minute: 100_000, requests_per_day: 100_000 })
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    const auditor = (await t.app.services.apiKeys.create(accountId, 'auditor', { scopes: ['audit:read'] })).apiKey
    return { accountId, email, apiKey, auditor }
  }

  async function events(auditor: string, query = ''): Promise<Page> {
    const response = await fetch(`${t.api}/audit-events${query}`, { headers: bearer(auditor) })
    expect(response.status, await response.clone().text()).toBe(200)
    return (await response.json()) as Page
  }

  function api(apiKey: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    return fetch(`${t.api}${path}`, {
      method,
      headers: { ...bearer(apiKey), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  }

  it('records the changes of a key, newest first, with the key as actor and the address truncated; reads are not recorded', async () => {
    const { apiKey, auditor, accountId } = await holder()
    const before = (await events(auditor)).events.length
    const upload = await fetch(`${t.api}/files/upload`, {
      method: 'POST',
      headers: { ...bearer(apiKey), 'user-agent': 'audit-test/1.0' },
      body: fileForm('audited bytes', 'audited.txt'),
    })
    const { file_id: fileId } = (await upload.json()) as { file_id: number }
    // Reads: none of them is an event.
    await (await api(apiKey, 'GET', '/files')).arrayBuffer()
    await (await api(apiKey, 'GET', `/files/${fileId}`)).arrayBuffer()
    await (await api(apiKey, 'GET', '/stats')).arrayBuffer()
    expect((await api(apiKey, 'PATCH', `/files/${fileId}`, { filename: 'renamed.txt' })).status).toBe(200)
    const link = (await (await api(apiKey, 'POST', `/files/${fileId}/links`, { label: 'for the client', max_downloads: 1 })).json()) as {
      link: { link_id: number; url: string }
    }
    const linkId = link.link.link_id
    expect((await api(apiKey, 'PATCH', `/links/${linkId}`, { password: LINK_PASSWORD })).status).toBe(200)
    expect((await api(apiKey, 'POST', `/links/${linkId}/rotate`)).status).toBe(200)
    expect((await api(apiKey, 'DELETE', `/links/${linkId}`)).status).toBe(200)
    expect((await api(apiKey, 'DELETE', `/files/${fileId}`)).status).toBe(200)

    const page = await events(auditor)
    const mine = page.events.slice(0, page.events.length - before)
    expect(mine.map((event) => event.action)).toEqual([
      'file.deleted',
      'link.revoked',
      'link.rotated',
      'link.updated',
      'link.created',
      'file.updated',
      'file.uploaded',
    ])
    const ids = mine.map((event) => event.event_id)
    expect([...ids].sort((a, b) => b - a)).toEqual(ids)
    const [keyRow] = await t.app.services.apiKeys.list(accountId)
    for (const event of mine) {
      expect(event.at).toMatch(TIME)
      expect(event.actor).toEqual({ type: 'key', id: keyRow!.id, name: keyRow!.name })
      expect(event.ip).toBe('127.0.0.0')
    }
    expect(mine.at(-1)).toMatchObject({
      user_agent: 'audit-test/1.0',
      target: { type: 'file', id: fileId },
      details: { filename: 'audited.txt', size: 13, via: 'multipart' },
    })
    expect(mine[5]!.details).toMatchObject({ filename: 'renamed.txt', changed: ['filename'] })
    expect(mine[3]).toMatchObject({ target: { type: 'link', id: linkId }, details: { changed: ['password'], password_protected: true } })
    // Never a secret: the key, the link's password, its token or URL.
    const text = JSON.stringify(mine)
    expect(text).not.toContain(apiKey)
    expect(text).not.toContain(LINK_PASSWORD)
    expect(text).not.toContain(link.link.url)
    expect(text).not.toContain(link.link.url.split('/').pop()!)
  })

  it('records resumable uploads when they complete, and what visitors do to a link: wrong passwords and the last download', async () => {
    const { apiKey, auditor } = await holder()
    const created = await fetch(`${t.api}/uploads`, {
      method: 'POST',
      headers: {
        ...bearer(apiKey),
        'tus-resumable': '1.0.0',
        'upload-length': '5',
        'upload-metadata': `filename ${Buffer.from('tus.txt').toString('base64')}`,
        'content-type': 'application/offset+octet-stream',
      },
      body: 'hello',
    })
    expect(created.status).toBe(201)
    const { body } = await uploadFile(t, apiKey, 'linked', 'linked.txt')
    const link = (await (
      await api(apiKey, 'POST', `/files/${body.file_id}/links`, { max_downloads: 1, password: LINK_PASSWORD })
    ).json()) as {
      link: { link_id: number; url: string }
    }
    const grant = (password: string) =>
      fetch(link.link.url.replace(t.config.publicUrl, t.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'visitor/2' },
        body: JSON.stringify({ password }),
        redirect: 'manual',
      })
    expect((await grant('not the password')).status).toBe(401)
    expect((await grant(LINK_PASSWORD)).status).toBe(303)

    const actions = (await events(auditor)).events.map((event) => event.action)
    expect(actions.slice(0, 5)).toEqual(['link.exhausted', 'link.password_failed', 'link.created', 'file.uploaded', 'file.uploaded'])
    const [exhausted, failed] = (await events(auditor)).events
    expect(exhausted).toMatchObject({ actor: { type: 'public', id: null }, user_agent: 'visitor/2', details: { download_count: 1 } })
    expect(failed).toMatchObject({ actor: { type: 'public' }, ip: '127.0.0.0', target: { type: 'link', id: link.link.link_id } })
    expect(JSON.stringify(failed)).not.toContain('not the password')
    const tus = (await events(auditor, '?action=file.uploaded')).events.find((event) => event.details.via === 'resumable')
    expect(tus).toMatchObject({ details: { filename: 'tus.txt', size: 5 } })
  })

  it('records the dashboard: sign-in, a failed sign-in, keys, a password change and signing out', async () => {
    const { email, auditor, accountId } = await holder()
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${t.url}/dashboard/api/${path}`, {
        method: 'POST',
        headers: { origin: t.url, 'content-type': 'application/json', 'user-agent': 'browser/3', ...headers },
        body: JSON.stringify(body),
      })
    expect((await post('sign-in', { email, password: 'wrong password!' })).status).toBe(401)
    const signedIn = await post('sign-in', { email, password: PASSWORD })
    expect(signedIn.status).toBe(200)
    const cookie = signedIn.headers
      .getSetCookie()
      .find((value) => value.startsWith('fileshare_session='))!
      .split(';')[0]!
    const { csrf_token: csrf } = (await signedIn.json()) as { csrf_token: string }
    const session = { cookie, 'x-csrf-token': csrf }
    const created = await post('keys', { name: 'form key', scopes: ['files:write'], allowed_ips: ['192.0.2.0/24'] }, session)
    expect(created.status).toBe(201)
    const { key, api_key: newKey } = (await created.json()) as { key: { key_id: number }; api_key: string }
    const revoked = await fetch(`${t.url}/dashboard/api/keys/${key.key_id}`, {
      method: 'DELETE',
      headers: { origin: t.url, ...session },
    })
    expect(revoked.status).toBe(200)
    expect((await post('password', { current_password: PASSWORD, new_password: 'another long password' }, session)).status).toBe(200)
    expect((await post('sign-out', {}, session)).status).toBe(200)

    // The failed sign-in is recorded after its answer (it must take as long as an unknown address's).
    await expect.poll(async () => (await events(auditor, '?action=session.*')).events.length).toBe(3)
    const page = (await events(auditor)).events
    expect(page.slice(0, 6).map((event) => event.action)).toEqual([
      'session.signed_out',
      'password.changed',
      'key.revoked',
      'key.created',
      'session.signed_in',
      'session.sign_in_failed',
    ])
    const session_actor = { type: 'session', id: accountId, name: email }
    for (const event of page.slice(0, 4)) expect(event.actor).toEqual(session_actor)
    expect(page[3]!.details).toMatchObject({ name: 'form key', scopes: ['files:write'], allowed_ips: ['192.0.2.0/24'] })
    expect(page[4]).toMatchObject({ actor: session_actor, user_agent: 'browser/3' })
    expect(page[5]).toMatchObject({ actor: { type: 'public', id: null }, target: { type: 'account', id: accountId } })
    const text = JSON.stringify(page)
    for (const secret of [PASSWORD, 'another long password', 'wrong password!', newKey, cookie.split('=')[1]!, csrf]) {
      expect(text).not.toContain(secret)
    }
  })

  it('pages with before_id and filters by action, family and time', async () => {
    const { apiKey, auditor } = await holder()
    for (let i = 0; i < 5; i++) await uploadFile(t, apiKey, `file ${i}`, `f${i}.txt`)
    const all = (await events(auditor, '?limit=100')).events
    const first = await events(auditor, '?limit=2')
    expect(first.pagination).toEqual({ limit: 2, next_before_id: first.events[1]!.event_id })
    const walked: number[] = []
    let query = '?limit=2'
    for (;;) {
      const page = await events(auditor, query)
      walked.push(...page.events.map((event) => event.event_id))
      if (page.pagination.next_before_id === null) break
      query = `?limit=2&before_id=${page.pagination.next_before_id}`
    }
    expect(walked).toEqual(all.map((event) => event.event_id))
    expect((await events(auditor, '?action=file.uploaded')).events).toHaveLength(5)
    expect((await events(auditor, '?action=file.*')).events).toHaveLength(5)
    // The account's first key and the auditor key.
    expect((await events(auditor, '?action=key.*')).events.map((event) => event.action)).toEqual(['key.created', 'key.created'])
    const today = new Date().toISOString().slice(0, 10)
    expect((await events(auditor, `?since=${today}&action=file.*`)).events).toHaveLength(5)
    expect((await events(auditor, '?since=2999-01-01T00:00:00Z')).events).toEqual([])
    for (const bad of ['action=file', 'action=nothing.*', 'since=2026-02-30', 'since=yesterday', 'limit=0', 'limit=101', 'before_id=0']) {
      const response = await fetch(`${t.api}/audit-events?${bad}`, { headers: bearer(auditor) })
      expect(response.status, bad).toBe(400)
      expect(((await response.json()) as { error: { code: string } }).error.code, bad).toBe('invalid_parameter')
    }
  })

  it("shows only the account's own events", async () => {
    const one = await holder()
    const other = await holder()
    await uploadFile(t, other.apiKey, 'not yours', 'other.txt')
    const mine = (await events(one.auditor)).events
    expect(mine.every((event) => event.target === null || event.target.type !== 'file')).toBe(true)
  })

  it('records a call with an expired key, without the key', async () => {
    const { accountId, auditor } = await holder()
    const { apiKey, key } = await t.app.services.apiKeys.create(accountId, 'short-lived', { expiresInMs: 60_000 })
    t.advanceClock(61_000)
    expect((await api(apiKey, 'GET', '/stats')).status).toBe(401)
    // Recorded after the answer, once a minute per key: a second call adds nothing.
    expect((await api(apiKey, 'GET', '/stats')).status).toBe(401)
    await expect.poll(async () => (await events(auditor, '?action=key.expired_use')).events.length).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect((await events(auditor, '?action=key.expired_use')).events).toHaveLength(1)
    const [event] = (await events(auditor, '?action=key.expired_use')).events
    expect(event).toMatchObject({ actor: { type: 'key', id: key.id }, target: { type: 'key', id: key.id } })
    expect(JSON.stringify(event)).not.toContain(apiKey)
  })
})

import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWebhookReceiver } from '../helpers/webhook-receiver.js'
import { bearer, startTestApp, unlimitedAccount, uploadFile, type TestApp } from '../helpers/test-app.js'

/**
 * Upload requests (../shared/spec/upload-requests.md, first half) on both stacks: the holder's
 * resource, guests uploading through tus with the request's token, the room reserved at creation,
 * what a guest may not do, the password's grant, the events, and the guest page's dead link.
 */

interface UploadRequest {
  request_id: number
  url: string
  label: string
  message: string | null
  expires_at: string
  max_files: number | null
  max_file_size: number | null
  max_total_size: number | null
  file_expires_in: number | null
  password_protected: boolean
  files_received: number
  bytes_received: number
  status: 'active' | 'expired' | 'closed' | 'full'
  created_at: string
}

const TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/
const sha256 = (content: Uint8Array) => createHash('sha256').update(content).digest('hex')

describe('upload requests', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(
      { FILESHARE_WEBHOOKS_ALLOW_PRIVATE: 'true', FILESHARE_WEBHOOKS_ALLOW_HTTP: 'true', FILESHARE_GUEST_REQUESTS_PER_MINUTE: '1000' },
      { webhookDispatch: { pollMs: 20 }, resumableTiming: { heartbeatMs: 50 } },
    )
  })
  afterAll(async () => {
    await t.close()
  })

  function api(apiKey: string, method: string, path: string, body?: unknown) {
    return fetch(`${t.api}${path}`, {
      method,
      headers: { ...bearer(apiKey), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  }

  async function createRequest(apiKey: string, fields: Record<string, unknown> = {}): Promise<UploadRequest & { token: string }> {
    const response = await api(apiKey, 'POST', '/upload-requests', { label: 'Invoices for March', expires_in: 3600, ...fields })
    expect(response.status, await response.clone().text()).toBe(201)
    const { upload_request } = (await response.json()) as { upload_request: UploadRequest }
    expect(response.headers.get('location')).toBe(`/api/v1/upload-requests/${upload_request.request_id}`)
    return { ...upload_request, token: upload_request.url.split('/').pop()! }
  }

  async function getRequest(apiKey: string, id: number): Promise<UploadRequest> {
    const response = await api(apiKey, 'GET', `/upload-requests/${id}`)
    expect(response.status).toBe(200)
    return ((await response.json()) as { upload_request: UploadRequest }).upload_request
  }

  function guestHeaders(token: string, extra: Record<string, string> = {}) {
    return { 'tus-resumable': '1.0.0', authorization: `UploadRequest ${token}`, ...extra }
  }

  /** A guest's tus creation; with `content`, creation-with-upload of the whole file. */
  function guestCreate(token: string, content: Uint8Array | undefined, headers: Record<string, string> = {}, length = content?.length) {
    return fetch(`${t.api}/uploads`, {
      method: 'POST',
      headers: guestHeaders(token, {
        ...(length !== undefined && { 'upload-length': String(length) }),
        'upload-metadata': `filename ${Buffer.from('guest file.pdf').toString('base64')}`,
        ...(content && { 'content-type': 'application/offset+octet-stream' }),
        ...headers,
      }),
      body: content,
    })
  }

  async function guestUpload(token: string, content: Uint8Array, headers: Record<string, string> = {}) {
    const response = await guestCreate(token, content, headers)
    expect(response.status, await response.clone().text()).toBe(201)
    return Number(response.headers.get('fileshare-file-id'))
  }

  async function errorOf(response: Response) {
    return ((await response.json()) as { error: { code: string; message: string } }).error
  }

  it('creates a request with every field, shows it the same everywhere, and its url is the guest page', async () => {
    const { apiKey } = await unlimitedAccount(t)
    const created = await createRequest(apiKey, {
      label: '  Contract scans  ',
      message: 'Hello,\nplease send the <b>signed</b> contract.',
      expires_in: 7 * 86_400,
      max_files: 3,
      max_file_size: 1_000_000,
      max_total_size: 2_000_000,
      password: 'correct horse battery',
      file_expires_in: 86_400,
    })
    expect(created).toEqual({
      request_id: expect.any(Number),
      url: `http://files.example.test/r/${created.token}`,
      label: 'Contract scans',
      message: 'Hello,\nplease send the <b>signed</b> contract.',
      expires_at: expect.stringMatching(TIME),
      max_files: 3,
      max_file_size: 1_000_000,
      max_total_size: 2_000_000,
      file_expires_in: 86_400,
      password_protected: true,
      files_received: 0,
      bytes_received: 0,
      status: 'active',
      created_at: expect.stringMatching(TIME),
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    })
    const { token, ...record } = created
    expect(token).toBeTruthy()
    expect(await getRequest(apiKey, created.request_id)).toEqual(record)
    const listed = (await (await api(apiKey, 'GET', '/upload-requests')).json()) as { upload_requests: UploadRequest[] }
    expect(listed.upload_requests).toEqual([record])
    // A second one lists first (newest first).
    const second = await createRequest(apiKey, { label: 'Second' })
    const both = (await (await api(apiKey, 'GET', '/upload-requests')).json()) as { upload_requests: UploadRequest[] }
    expect(both.upload_requests.map((one) => one.request_id)).toEqual([second.request_id, created.request_id])
  })

  it('refuses every field that breaks its rule with 400 invalid_parameter naming the field', async () => {
    const { apiKey } = await unlimitedAccount(t)
    const base = { label: 'A request', expires_in: 3600 }
    const future = (ms: number) => new Date(Date.now() + ms).toISOString().slice(0, 19).replace('T', ' ')
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ expires_in: 3600 }, 'label'],
      [{ ...base, label: '   ' }, 'label'],
      [{ ...base, label: 'x'.repeat(201) }, 'label'],
      [{ ...base, label: 'two\nlines' }, 'label'],
      [{ ...base, label: 42 }, 'label'],
      [{ ...base, message: 'm'.repeat(2001) }, 'message'],
      [{ ...base, message: 'bell\u0007' }, 'message'],
      [{ label: 'A request' }, 'expires_in'],
      [{ ...base, expires_at: future(3_600_000) }, 'expires_in'],
      [{ ...base, expires_in: 90 * 86_400 + 1 }, 'expires_in'],
      [{ ...base, expires_in: 0 }, 'expires_in'],
      [{ label: 'A request', expires_at: '2020-01-01 00:00:00' }, 'expires_at'],
      [{ label: 'A request', expires_at: future(91 * 86_400_000) }, 'expires_at'],
      [{ label: 'A request', expires_at: 'tomorrow' }, 'expires_at'],
      [{ label: 'A request', expires_at: null }, 'expires_at'],
      [{ ...base, max_files: 0 }, 'max_files'],
      [{ ...base, max_files: 10_001 }, 'max_files'],
      [{ ...base, max_files: 1.5 }, 'max_files'],
      [{ ...base, max_file_size: 0 }, 'max_file_size'],
      [{ ...base, max_file_size: 5 * 1024 ** 3 + 1 }, 'max_file_size'],
      [{ ...base, max_total_size: 0 }, 'max_total_size'],
      [{ ...base, password: 'short' }, 'password'],
      [{ ...base, file_expires_in: 0 }, 'file_expires_in'],
      [{ ...base, colour: 'blue' }, 'colour'],
    ]
    for (const [body, field] of cases) {
      const response = await api(apiKey, 'POST', '/upload-requests', body)
      expect(response.status, JSON.stringify(body)).toBe(400)
      const error = await errorOf(response)
      expect(error.code, JSON.stringify(body)).toBe('invalid_parameter')
      expect(error.message, JSON.stringify(body)).toContain(field)
    }
    expect(((await (await api(apiKey, 'GET', '/upload-requests')).json()) as { upload_requests: unknown[] }).upload_requests).toEqual([])
    // The longest allowed: exactly 90 days, a 2,000-character message, 10,000 files, the plan's max file size.
    await createRequest(apiKey, { expires_in: 90 * 86_400, message: 'm'.repeat(2000), max_files: 10_000, max_file_size: 5 * 1024 ** 3 })
  })

  it('needs the requests:manage scope; another account sees a 404', async () => {
    const { apiKey, accountId } = await unlimitedAccount(t)
    const created = await createRequest(apiKey)
    const readOnly = (await t.app.services.apiKeys.create(accountId, 'reader', { scopes: ['files:read', 'files:write'] })).apiKey
    for (const [method, path] of [
      ['GET', '/upload-requests'],
      ['POST', '/upload-requests'],
      ['GET', `/upload-requests/${created.request_id}`],
      ['POST', `/upload-requests/${created.request_id}/close`],
      ['GET', `/upload-requests/${created.request_id}/files`],
    ] as const) {
      const response = await api(readOnly, method, path, method === 'POST' ? {} : undefined)
      expect(response.status, `${method} ${path}`).toBe(403)
      expect(await response.json()).toMatchObject({ error: { code: 'insufficient_scope', required_scope: 'requests:manage' } })
    }
    const other = await unlimitedAccount(t)
    for (const [method, path] of [
      ['GET', `/upload-requests/${created.request_id}`],
      ['PATCH', `/upload-requests/${created.request_id}`],
      ['DELETE', `/upload-requests/${created.request_id}`],
      ['POST', `/upload-requests/${created.request_id}/close`],
      ['GET', `/upload-requests/${created.request_id}/files`],
    ] as const) {
      const response = await api(other.apiKey, method, path, method === 'PATCH' ? { label: 'mine now' } : undefined)
      expect(response.status, `${method} ${path}`).toBe(404)
    }
    expect((await getRequest(apiKey, created.request_id)).label).toBe('Invoices for March')
  })

  it('a guest upload lands in the holder account with its source, counts in the request, and raises its events', async () => {
    const { apiKey, accountId } = await unlimitedAccount(t)
    const hooks = await startWebhookReceiver()
    try {
      const webhook = await api(apiKey, 'POST', '/webhooks', {
        url: `${hooks.base}/hooks`,
        events: ['file.uploaded', 'upload_request.file_received', 'upload_request.full'],
      })
      expect(webhook.status).toBe(201)
      const request = await createRequest(apiKey, { max_files: 2, file_expires_in: 3600 })
      const own = await uploadFile(t, apiKey, 'mine', 'mine.txt')
      expect(own.body).toMatchObject({ source: { type: 'api' } })

      const first = randomBytes(3000)
      const fileId = await guestUpload(request.token, first, { 'fileshare-expires-in': '60' })
      const details = (await (await api(apiKey, 'GET', `/files/${fileId}`)).json()) as { file: Record<string, unknown> }
      expect(details.file).toMatchObject({
        filename: 'guest file.pdf',
        size: 3000,
        sha256: sha256(first),
        source: { type: 'upload_request', request_id: request.request_id },
      })
      // The request's file_expires_in, not the guest's own wish.
      const expires = Date.parse(`${String(details.file.expires_at).replace(' ', 'T')}Z`)
      expect(expires - Date.now()).toBeGreaterThan(3500_000)
      expect(await getRequest(apiKey, request.request_id)).toMatchObject({ files_received: 1, bytes_received: 3000, status: 'active' })

      await guestUpload(request.token, randomBytes(10))
      expect(await getRequest(apiKey, request.request_id)).toMatchObject({ files_received: 2, bytes_received: 3010, status: 'full' })
      const files = (await (await api(apiKey, 'GET', `/upload-requests/${request.request_id}/files?limit=1`)).json()) as {
        files: Array<{ file_id: number; size: number }>
        pagination: { limit: number; next_before_id: number | null }
      }
      expect(files.files).toEqual([expect.objectContaining({ size: 10 })])
      expect(files.pagination).toEqual({ limit: 1, next_before_id: files.files[0]!.file_id })
      const next = (await (
        await api(apiKey, 'GET', `/upload-requests/${request.request_id}/files?before_id=${files.pagination.next_before_id}`)
      ).json()) as { files: Array<{ file_id: number }>; pagination: { next_before_id: number | null } }
      expect(next.files.map((file) => file.file_id)).toEqual([fileId])
      expect(next.pagination.next_before_id).toBeNull()

      // The holder's own upload and the guests' two: three file.uploaded.
      await expect.poll(() => hooks.received.length).toBe(6)
      const bodies = hooks.received.map((message) => JSON.parse(message.body) as { type: string; data: Record<string, unknown> })
      const types = bodies.map((body) => body.type).sort()
      expect(types).toEqual([
        'file.uploaded',
        'file.uploaded',
        'file.uploaded',
        'upload_request.file_received',
        'upload_request.file_received',
        'upload_request.full',
      ])
      const received = bodies.filter((body) => body.type === 'upload_request.file_received')
      expect(received.map((body) => body.data.files_received).sort()).toEqual([1, 2])
      expect(received[0]!.data).toMatchObject({
        request_id: request.request_id,
        label: 'Invoices for March',
        file: { source: { type: 'upload_request' } },
      })
      expect(bodies.find((body) => body.type === 'upload_request.full')!.data).toEqual({
        request_id: request.request_id,
        label: 'Invoices for March',
        files_received: 2,
        bytes_received: 3010,
      })
      // The audit log: the request's own events and the guest's uploads, never the token.
      const audit = (await (await api(apiKey, 'GET', '/audit-events?limit=100')).json()) as {
        events: Array<{ action: string; actor: { type: string; id: number | null }; target: { type: string } | null }>
      }
      expect(audit.events.filter((event) => event.actor.type === 'guest')).toHaveLength(2)
      expect(audit.events.find((event) => event.actor.type === 'guest')).toMatchObject({
        action: 'file.uploaded',
        actor: { type: 'guest', id: request.request_id },
      })
      expect(audit.events.find((event) => event.action === 'upload_request.created')).toMatchObject({
        target: { type: 'upload_request', id: request.request_id },
      })
      expect(JSON.stringify(audit)).not.toContain(request.token)
      expect(accountId).toBeGreaterThan(0)
    } finally {
      await hooks.close()
    }
  })

  it('a guest may create, resume and terminate its own uploads only, and nothing else', async () => {
    const { apiKey } = await unlimitedAccount(t)
    const request = await createRequest(apiKey)
    const other = await createRequest(apiKey, { label: 'another' })
    const own = await uploadFile(t, apiKey, 'private', 'private.txt')

    // Deferred length: a guest must declare it (its room is reserved at creation).
    const deferred = await guestCreate(request.token, undefined, { 'upload-defer-length': '1' }, undefined)
    expect(deferred.status).toBe(400)
    // An upload in three steps: create, PATCH half, HEAD, PATCH the rest.
    const content = randomBytes(4000)
    const created = await guestCreate(request.token, undefined, {}, 4000)
    expect(created.status).toBe(201)
    const location = `${t.url}${created.headers.get('location')}`
    const half = await fetch(location, {
      method: 'PATCH',
      headers: guestHeaders(request.token, { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }),
      body: content.subarray(0, 2000),
    })
    expect(half.status).toBe(204)
    const head = await fetch(location, { method: 'HEAD', headers: guestHeaders(request.token) })
    expect(head.headers.get('upload-offset')).toBe('2000')
    // Another request's token, or an API key of another account, does not reach it.
    expect((await fetch(location, { method: 'HEAD', headers: guestHeaders(other.token) })).status).toBe(404)
    // The guest cannot read the upload's JSON view (the file it became).
    expect((await fetch(location, { headers: guestHeaders(request.token) })).status).toBe(401)
    const rest = await fetch(location, {
      method: 'PATCH',
      headers: guestHeaders(request.token, { 'upload-offset': '2000', 'content-type': 'application/offset+octet-stream' }),
      body: content.subarray(2000),
    })
    expect(rest.status).toBe(204)
    const fileId = rest.headers.get('fileshare-file-id')
    const file = (await (await api(apiKey, 'GET', `/files/${fileId}`)).json()) as { file: { sha256: string } }
    expect(file.file.sha256).toBe(sha256(content))

    // Terminating its own unfinished upload gives the room back.
    const abandoned = await guestCreate(request.token, undefined, {}, 100)
    const abandonedUrl = `${t.url}${abandoned.headers.get('location')}`
    expect((await fetch(abandonedUrl, { method: 'DELETE', headers: guestHeaders(other.token) })).status).toBe(404)
    expect((await fetch(abandonedUrl, { method: 'DELETE', headers: guestHeaders(request.token) })).status).toBe(204)

    // Every other route: the token is no key.
    for (const [method, path] of [
      ['GET', '/files'],
      ['GET', `/files/${own.body.file_id}`],
      ['DELETE', `/files/${own.body.file_id}`],
      ['GET', '/stats'],
      ['GET', '/key'],
      ['GET', '/upload-requests'],
      ['GET', `/upload-requests/${request.request_id}`],
      ['POST', '/files/upload'],
      ['GET', '/audit-events'],
    ] as const) {
      const response = await fetch(`${t.api}${path}`, { method, headers: { authorization: `UploadRequest ${request.token}` } })
      expect(response.status, `${method} ${path}`).toBe(401)
    }
    // The holder's file is still there.
    expect((await api(apiKey, 'GET', `/files/${own.body.file_id}`)).status).toBe(200)
  })

  it("holds guests to the request's max file size and total size, reserved at creation", async () => {
    const { apiKey } = await unlimitedAccount(t)
    const request = await createRequest(apiKey, { max_file_size: 1000, max_total_size: 1500 })
    const tooLarge = await guestCreate(request.token, undefined, {}, 1001)
    expect(tooLarge.status).toBe(413)
    expect(await errorOf(tooLarge)).toMatchObject({ code: 'file_too_large' })
    // 800 reserved by an upload in progress: 800 more does not fit, 700 does.
    const pending = await guestCreate(request.token, undefined, {}, 800)
    expect(pending.status).toBe(201)
    const noRoom = await guestCreate(request.token, undefined, {}, 800)
    expect(noRoom.status).toBe(403)
    expect(await errorOf(noRoom)).toMatchObject({ code: 'upload_request_full', message: expect.stringContaining('700') })
    await guestUpload(request.token, randomBytes(700))
    // The pending one ends: its 800 bytes are free again.
    await fetch(`${t.url}${pending.headers.get('location')}`, { method: 'DELETE', headers: guestHeaders(request.token) })
    await guestUpload(request.token, randomBytes(800))
    expect(await getRequest(apiKey, request.request_id)).toMatchObject({ files_received: 2, bytes_received: 1500, status: 'full' })
    // Full: the link is dead, like an unknown one.
    const afterFull = await guestCreate(request.token, randomBytes(1))
    expect(afterFull.status).toBe(401)
  })

  it("a guest's Idempotency-Key never meets the holder's, and the upload that filled its request can still be asked for", async () => {
    const { apiKey } = await unlimitedAccount(t)
    const request = await createRequest(apiKey, { max_files: 1 })
    const holders = await fetch(`${t.api}/uploads`, {
      method: 'POST',
      headers: { ...bearer(apiKey), 'tus-resumable': '1.0.0', 'upload-length': '10', 'idempotency-key': 'same-key' },
    })
    expect(holders.status).toBe(201)
    const guests = await guestCreate(request.token, undefined, { 'idempotency-key': 'same-key' }, 10)
    expect(guests.status).toBe(201)
    expect(guests.headers.get('idempotent-replayed')).toBeNull()
    expect(guests.headers.get('location')).not.toBe(holders.headers.get('location'))
    // The guest's chunk fills the request; its answer is lost, and the client asks with HEAD: the file is there.
    const location = `${t.url}${guests.headers.get('location')}`
    const filled = await fetch(location, {
      method: 'PATCH',
      headers: guestHeaders(request.token, { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }),
      body: randomBytes(10),
    })
    expect(filled.status).toBe(204)
    expect((await getRequest(apiKey, request.request_id)).status).toBe('full')
    const head = await fetch(location, { method: 'HEAD', headers: guestHeaders(request.token) })
    expect(head.status).toBe(200)
    expect(head.headers.get('upload-offset')).toBe('10')
    expect(head.headers.get('fileshare-file-id')).toBe(filled.headers.get('fileshare-file-id'))
    // A new upload is refused: the request is full.
    expect((await guestCreate(request.token, randomBytes(1))).status).toBe(401)
  })

  it("holds guests to the holder's storage quota, reserved at creation, as for the holder's own uploads", async () => {
    const { apiKey, accountId } = await unlimitedAccount(t)
    await t.app.services.accounts.setLimits(accountId, { max_storage: 5000 })
    const request = await createRequest(apiKey)
    const pending = await guestCreate(request.token, undefined, {}, 3000)
    expect(pending.status).toBe(201)
    // 3000 reserved by the upload in progress: 2500 more would pass the quota, 2000 fits.
    const over = await guestCreate(request.token, randomBytes(2500))
    expect(over.status).toBe(403)
    expect(await errorOf(over)).toMatchObject({ code: 'storage_quota_exceeded' })
    await guestUpload(request.token, randomBytes(2000))
    const stats = (await (await api(apiKey, 'GET', '/stats')).json()) as { stats: { total_size: number; storage_reserved: number } }
    expect(stats.stats).toMatchObject({ total_size: 2000, storage_reserved: 3000 })
  })

  it('a closed, expired or deleted request is a dead link; its uploads in progress end and the holder gets its slots back', async () => {
    const { apiKey } = await unlimitedAccount(t)
    const stats = async () => ((await (await api(apiKey, 'GET', '/stats')).json()) as { stats: { uploads_today: number } }).stats
    const request = await createRequest(apiKey)
    const pending = await guestCreate(request.token, undefined, {}, 500)
    expect(pending.status).toBe(201)
    expect((await stats()).uploads_today).toBe(1)
    const closed = await api(apiKey, 'POST', `/upload-requests/${request.request_id}/close`)
    expect(closed.status).toBe(200)
    expect(await closed.json()).toMatchObject({ upload_request: { status: 'closed' } })
    // Closing again changes nothing.
    expect(await (await api(apiKey, 'POST', `/upload-requests/${request.request_id}/close`)).json()).toMatchObject({
      upload_request: { status: 'closed' },
    })
    expect((await stats()).uploads_today).toBe(0)
    const unknown = await guestCreate('A'.repeat(43), randomBytes(5))
    const dead = await guestCreate(request.token, randomBytes(5))
    expect(dead.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(await dead.json()).toEqual(await unknown.json())
    expect(
      (await fetch(`${t.url}${pending.headers.get('location')}`, { method: 'HEAD', headers: guestHeaders(request.token) })).status,
    ).toBe(401)
    // The guest page: a dead request's and an unknown token's are the same 404 page.
    const deadPage = await fetch(`${t.url}/r/${request.token}`)
    const unknownPage = await fetch(`${t.url}/r/${'B'.repeat(43)}`)
    expect(deadPage.status).toBe(404)
    expect(unknownPage.status).toBe(404)
    expect(await deadPage.text()).toBe(await unknownPage.text())
    // A closed request stays closed, whatever its expiry.
    const patched = await api(apiKey, 'PATCH', `/upload-requests/${request.request_id}`, { expires_in: 7200 })
    expect(await patched.json()).toMatchObject({ upload_request: { status: 'closed' } })

    // Expiry: the clock moves past it; a later expiry opens it again.
    const expiring = await createRequest(apiKey, { expires_in: 60 })
    t.advanceClock(61_000)
    try {
      expect((await getRequest(apiKey, expiring.request_id)).status).toBe('expired')
      expect((await guestCreate(expiring.token, randomBytes(5))).status).toBe(401)
      expect((await fetch(`${t.url}/r/${expiring.token}`)).status).toBe(404)
      const reopened = await api(apiKey, 'PATCH', `/upload-requests/${expiring.request_id}`, { expires_in: 3600 })
      expect(await reopened.json()).toMatchObject({ upload_request: { status: 'active' } })
      expect((await guestCreate(expiring.token, randomBytes(5))).status).toBe(201)
    } finally {
      t.advanceClock(-61_000)
    }

    // Deleted: gone for the holder, its files stay; its link is dead.
    const deleting = await createRequest(apiKey)
    const fileId = await guestUpload(deleting.token, randomBytes(5))
    const deleted = await api(apiKey, 'DELETE', `/upload-requests/${deleting.request_id}`)
    expect(deleted.status).toBe(200)
    expect(await deleted.json()).toMatchObject({ upload_request: { request_id: deleting.request_id, status: 'closed', files_received: 1 } })
    expect((await api(apiKey, 'GET', `/upload-requests/${deleting.request_id}`)).status).toBe(404)
    expect((await api(apiKey, 'GET', `/files/${fileId}`)).status).toBe(200)
    expect((await guestCreate(deleting.token, randomBytes(5))).status).toBe(401)
  })

  it('an upload in flight when its request closes ends with a clear answer, and its reservation is released', async () => {
    const { apiKey } = await unlimitedAccount(t)
    const request = await createRequest(apiKey, { max_files: 1 })
    const created = await guestCreate(request.token, undefined, {}, 1_000_000)
    expect(created.status).toBe(201)
    let sendMore: () => void = () => {}
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(randomBytes(1000))
        sendMore = () => {
          try {
            controller.enqueue(randomBytes(1000))
          } catch {
            // The server ended the request.
          }
        }
      },
    })
    const patch = fetch(`${t.url}${created.headers.get('location')}`, {
      method: 'PATCH',
      headers: guestHeaders(request.token, { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }),
      body,
      duplex: 'half',
    } as RequestInit)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect((await api(apiKey, 'POST', `/upload-requests/${request.request_id}/close`)).status).toBe(200)
    const timer = setInterval(sendMore, 20)
    try {
      const answer = await patch
      expect(answer.status).toBe(401)
      expect(await errorOf(answer)).toMatchObject({ code: 'unauthorized', message: expect.stringContaining('closed') })
    } finally {
      clearInterval(timer)
    }
    // Its slot and room came back.
    await expect
      .poll(async () => ((await (await api(apiKey, 'GET', '/stats')).json()) as { stats: { uploads_today: number } }).stats.uploads_today)
      .toBe(0)
  })

  it('a password-protected request lets guests in with a grant only; a new password ends old grants', async () => {
    const { apiKey } = await unlimitedAccount(t)
    const request = await createRequest(apiKey, { password: 'open sesame please' })
    const grant = (password: string | undefined) =>
      fetch(`${t.url}/r/${request.token}/grant`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(password === undefined ? {} : { password }),
      })
    const noGrant = await guestCreate(request.token, randomBytes(5))
    expect(noGrant.status).toBe(401)
    expect(await errorOf(noGrant)).toMatchObject({ code: 'invalid_password' })
    expect((await grant(undefined)).status).toBe(401)
    const wrong = await grant('not the password')
    expect(wrong.status).toBe(401)
    expect(await errorOf(wrong)).toMatchObject({ code: 'invalid_password' })
    const right = await grant('open sesame please')
    expect(right.status).toBe(200)
    const granted = (await right.json()) as { grant: string; expires_at: string; request: Record<string, unknown> }
    expect(granted.request).toMatchObject({ label: 'Invoices for March', password_protected: true })
    expect(JSON.stringify(granted)).not.toContain(request.token)
    expect((await guestCreate(request.token, randomBytes(5), { 'fileshare-upload-grant': granted.grant })).status).toBe(201)
    expect((await guestCreate(request.token, randomBytes(5), { 'fileshare-upload-grant': `${granted.grant}x` })).status).toBe(401)
    // The grant reads the request again without the password; a bad one does not.
    const reread = await fetch(`${t.url}/r/${request.token}/grant`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'fileshare-upload-grant': granted.grant },
      body: '{}',
    })
    expect(reread.status).toBe(200)
    expect(await reread.json()).toMatchObject({ grant: granted.grant, request: { label: 'Invoices for March' } })
    const badReread = await fetch(`${t.url}/r/${request.token}/grant`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'fileshare-upload-grant': `${granted.grant}x` },
      body: '{}',
    })
    expect(badReread.status).toBe(401)
    // The page says nothing of the request before the password.
    const page = await (await fetch(`${t.url}/r/${request.token}`)).text()
    expect(page).not.toContain('Invoices for March')
    await api(apiKey, 'PATCH', `/upload-requests/${request.request_id}`, { password: 'a brand new password' })
    expect((await guestCreate(request.token, randomBytes(5), { 'fileshare-upload-grant': granted.grant })).status).toBe(401)
    // Removing the password opens it without a grant.
    await api(apiKey, 'PATCH', `/upload-requests/${request.request_id}`, { password: null })
    expect((await guestCreate(request.token, randomBytes(5))).status).toBe(201)
  })

  it('the guest page shows the message as plain text and the limits left; no session needed', async () => {
    const { apiKey } = await unlimitedAccount(t)
    const request = await createRequest(apiKey, { message: '<script>alert(1)</script>\nSecond line', max_files: 4 })
    await guestUpload(request.token, randomBytes(5))
    const response = await fetch(`${t.url}/r/${request.token}`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(response.headers.get('referrer-policy')).toBe('no-referrer')
    const html = await response.text()
    expect(html).not.toContain('<script>alert(1)</script>')
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    const data = JSON.parse(/<script type="application\/json" id="upload-request-data">(.*?)<\/script>/s.exec(html)![1]!) as {
      request: { files_left: number; message: string }
    }
    expect(data.request).toMatchObject({ files_left: 3, message: '<script>alert(1)</script>\nSecond line' })
    for (const asset of ['assets/guest.js', 'assets/guest.css', 'assets/vendor/tus.min.js']) {
      expect((await fetch(`${t.url}/r/${asset}`)).status, asset).toBe(200)
    }
  })
})

describe('upload requests: guests are rate-limited per address, never on the holder budget', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_GUEST_REQUESTS_PER_MINUTE: '3', FILESHARE_UPLOAD_REQUEST_MAX_DAYS: '2' })
  })
  afterAll(async () => {
    await t.close()
  })

  it('answers 429 past the guest budget of the address, while the holder goes on; the operator sets the longest expiry', async () => {
    const { accountId, apiKey } = await t.createAccount('pro')
    await t.app.services.accounts.setLimits(accountId, { requests_per_minute: 5 })
    const headers = { 'content-type': 'application/json', ...bearer(apiKey) }
    const tooLong = await fetch(`${t.api}/upload-requests`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ label: 'x', expires_in: 2 * 86_400 + 1 }),
    })
    expect(tooLong.status).toBe(400)
    expect(await tooLong.json()).toMatchObject({ error: { code: 'invalid_parameter', message: expect.stringContaining('2 days') } })
    const created = await fetch(`${t.api}/upload-requests`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ label: 'x', expires_in: 2 * 86_400 }),
    })
    expect(created.status).toBe(201)
    const { upload_request } = (await created.json()) as { upload_request: { url: string } }
    const token = upload_request.url.split('/').pop()!
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${t.api}/uploads`, {
        method: 'POST',
        headers: {
          'tus-resumable': '1.0.0',
          authorization: `UploadRequest ${token}`,
          'upload-length': '3',
          'content-type': 'application/offset+octet-stream',
        },
        body: 'abc',
      })
      statuses.push(response.status)
      if (response.status === 429) expect(response.headers.get('retry-after')).toMatch(/^\d+$/)
    }
    expect(statuses).toEqual([201, 201, 201, 429, 429])
    // The holder spent 2 of its 5 (the two creations above); the guests spent none of them.
    const stats = await fetch(`${t.api}/stats`, { headers: bearer(apiKey) })
    expect(stats.status).toBe(200)
    expect(stats.headers.get('ratelimit-remaining')).toBe('2')
  })
})

// client.uploadRequests against the launcher's server: create (every field comes back as sent),
// the fields it refuses (invalid_parameter), list, get, update, close, delete, a key without
// requests:manage (insufficient_scope), another account's request (404), guests uploading with
// plain fetch (a file with source upload_request, the counts, upload_request_full, status full,
// a dead token, the password grant), files() and iterateFiles(), the audit log and the webhook
// events of a request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BadRequestError,
  FILE_FIELDS,
  InsufficientScopeError,
  NotFoundError,
  UPLOAD_REQUEST_FIELDS,
  Webhooks,
  type UploadRequest,
  type UploadRequestCreateParams,
  type WebhookEvent,
} from '../../src/index.js'
import { client, newAccount, server } from '../helpers/env.js'
import { errorCode, grantFor, guestUpload, tokenOf } from '../helpers/guest-upload.js'
import { startWebhookReceiver, type Received } from '../helpers/webhook-receiver.js'

const fileshare = client('pro')
const made: number[] = []
const text = (s: string) => new TextEncoder().encode(s)
const DAY = 86_400

afterAll(async () => {
  for (const id of made) await fileshare.uploadRequests.delete(id).catch(() => undefined)
})

async function create(params: Partial<UploadRequestCreateParams> = {}): Promise<UploadRequest> {
  const request = await fileshare.uploadRequests.create({ label: 'sdk-js', expires_in: DAY, ...params })
  made.push(request.request_id)
  return request
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`)
    },
    (error: unknown) => error,
  )
}

/** A guest's upload that must be stored: its file id. */
async function sent(url: string, body: string, filename: string, grant?: string): Promise<number> {
  const response = await guestUpload(url, text(body), filename, grant)
  expect(response.status, await response.clone().text()).toBe(201)
  const id = Number(response.headers.get('fileshare-file-id'))
  expect(id).toBeGreaterThan(0)
  return id
}

describe('client.uploadRequests against the server', () => {
  it('create: 201 with Location; every field comes back as sent', async () => {
    const before = Date.now()
    const { data: request, response } = await fileshare.uploadRequests
      .create({
        label: 'Invoices for March',
        message: 'Please send the PDFs.\nThank you!\tA.',
        expires_in: 7 * DAY,
        max_files: 3,
        max_file_size: 1024,
        max_total_size: 4096,
        password: 'correct horse battery',
        file_expires_in: 3600,
      })
      .withResponse()
    made.push(request.request_id)
    expect(response.status).toBe(201)
    expect(response.headers.get('location')).toMatch(new RegExp(`/upload-requests/${request.request_id}$`))
    expect(Object.keys(request).sort()).toEqual([...UPLOAD_REQUEST_FIELDS].sort())
    expect(request).toMatchObject({
      label: 'Invoices for March',
      message: 'Please send the PDFs.\nThank you!\tA.',
      max_files: 3,
      max_file_size: 1024,
      max_total_size: 4096,
      file_expires_in: 3600,
      password_protected: true,
      files_received: 0,
      bytes_received: 0,
      status: 'active',
    })
    expect(request.url).toMatch(new RegExp(`^${server().server_url}/r/[A-Za-z0-9_-]{43}$`))
    expect(tokenOf(request.url)).toHaveLength(43)
    expect(request.expires_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
    expect(Math.abs(request.expiry.getTime() - (before + 7 * DAY * 1000))).toBeLessThan(120_000)
    expect(Math.abs(request.created.getTime() - before)).toBeLessThan(120_000)
    expect(request.files_left).toBe(3)
    expect(request.bytes_left).toBe(4096)
    expect(JSON.stringify(request)).not.toContain('correct horse')
  })

  it('create: expires_at as a Date; the optional fields left out are null', async () => {
    const at = new Date(Math.floor(Date.now() / 1000) * 1000 + 3 * DAY * 1000)
    const request = await create({ label: 'dated', expires_in: undefined, expires_at: at })
    expect(request.expiry.getTime()).toBe(at.getTime())
    expect(request).toMatchObject({
      message: null,
      max_files: null,
      max_file_size: null,
      max_total_size: null,
      file_expires_in: null,
      password_protected: false,
      files_left: null,
      bytes_left: null,
    })
  })

  it('create: the same idempotency key makes the request once', async () => {
    const key = `sdk-js-ur-${Date.now()}-${Math.random()}`
    const first = await fileshare.uploadRequests.create({ label: 'once', expires_in: DAY, idempotencyKey: key })
    made.push(first.request_id)
    const again = await fileshare.uploadRequests.create({ label: 'once', expires_in: DAY, idempotencyKey: key })
    expect(again.request_id).toBe(first.request_id)
    expect(again.url).toBe(first.url)
  })

  it.each([
    ['an empty label', { label: '' }, 'label'],
    ['a label of 201 characters', { label: 'x'.repeat(201) }, 'label'],
    ['a label with a control character', { label: 'a\u0007b' }, 'label'],
    ['a label of two lines', { label: 'a\nb' }, 'label'],
    ['a message of 2,001 characters', { message: 'm'.repeat(2001) }, 'message'],
    ['a message with a control character', { message: 'a\u0000b' }, 'message'],
    ['no expiry', { expires_in: undefined }, 'expire'],
    ['both expiries', { expires_at: new Date(Date.now() + DAY * 1000) }, 'expire'],
    ['expires_in 0', { expires_in: 0 }, 'expires_in'],
    ['expires_in beyond 90 days', { expires_in: 90 * DAY + 1 }, 'expires_in'],
    ['expires_at in the past', { expires_in: undefined, expires_at: new Date(Date.now() - 60_000) }, 'expires_at'],
    ['expires_at beyond 90 days', { expires_in: undefined, expires_at: new Date(Date.now() + 91 * DAY * 1000) }, 'expires_at'],
    ['max_files 0', { max_files: 0 }, 'max_files'],
    ['max_files 10,001', { max_files: 10_001 }, 'max_files'],
    ['max_file_size 0', { max_file_size: 0 }, 'max_file_size'],
    ["max_file_size above the plan's", { max_file_size: 5 * 1024 ** 3 + 1 }, 'max_file_size'],
    ['max_total_size 0', { max_total_size: 0 }, 'max_total_size'],
    ['a password of 7 characters', { password: 'seven77' }, 'password'],
    ['file_expires_in 0', { file_expires_in: 0 }, 'file_expires_in'],
    ['file_expires_in beyond 10 years', { file_expires_in: 315_360_001 }, 'file_expires_in'],
    ['an unknown field', { max_downloads: 3 } as Partial<UploadRequestCreateParams>, 'max_downloads'],
  ] as const)('create refuses %s: 400 invalid_parameter naming the field', async (_what, params, field) => {
    const error = await failure(fileshare.uploadRequests.create({ label: 'sdk-js', expires_in: DAY, ...params }))
    expect(error).toBeInstanceOf(BadRequestError)
    expect(error).toMatchObject({ status: 400, code: 'invalid_parameter' })
    expect((error as Error).message).toContain(field)
  })

  it('list (newest first) and get', async () => {
    const older = await create({ label: 'older' })
    const newer = await create({ label: 'newer' })
    const list = await fileshare.uploadRequests.list()
    const ids = list.map((r) => r.request_id)
    expect(ids.indexOf(newer.request_id)).toBeGreaterThanOrEqual(0)
    expect(ids.indexOf(newer.request_id)).toBeLessThan(ids.indexOf(older.request_id))
    for (const r of list) expect(Object.keys(r).sort()).toEqual([...UPLOAD_REQUEST_FIELDS].sort())
    expect(await fileshare.uploadRequests.get(newer.request_id)).toEqual(newer)
    await expect(fileshare.uploadRequests.get(2_000_000_000)).rejects.toBeInstanceOf(NotFoundError)
  })

  it('update sets the fields given; null removes; an invalid value is refused', async () => {
    const request = await create({ label: 'to change', message: 'hi', max_files: 2, password: 'a password here' })
    const updated = await fileshare.uploadRequests.update(request.request_id, {
      label: 'changed',
      message: null,
      max_files: null,
      password: null,
      max_total_size: 10_000,
      file_expires_in: 60,
      expires_in: 2 * DAY,
    })
    expect(updated).toMatchObject({
      request_id: request.request_id,
      url: request.url,
      label: 'changed',
      message: null,
      max_files: null,
      password_protected: false,
      max_total_size: 10_000,
      file_expires_in: 60,
      status: 'active',
    })
    expect(updated.expiry.getTime() - request.expiry.getTime()).toBeGreaterThan(DAY * 1000 - 120_000)
    expect(await fileshare.uploadRequests.get(request.request_id)).toEqual(updated)
    for (const changes of [{ label: null }, { expires_in: null }, { max_files: 0 }, { label: '' }]) {
      await expect(fileshare.uploadRequests.update(request.request_id, changes as never)).rejects.toMatchObject({
        name: 'BadRequestError',
        code: 'invalid_parameter',
      })
    }
  })

  it('close: status closed, closing again is no error, a later expiry leaves it closed, its token is dead', async () => {
    const request = await create({ label: 'to close' })
    const closed = await fileshare.uploadRequests.close(request.request_id)
    expect(closed).toMatchObject({ request_id: request.request_id, status: 'closed' })
    expect(await fileshare.uploadRequests.close(request.request_id)).toMatchObject({ status: 'closed' })
    expect(await fileshare.uploadRequests.update(request.request_id, { expires_in: 5 * DAY })).toMatchObject({ status: 'closed' })
    const refused = await guestUpload(request.url, text('late'), 'late.txt')
    expect(refused.status).toBe(401)
    expect(await errorCode(refused)).toBe('unauthorized')
  })

  it('delete answers the request as it was, closed; then it is gone', async () => {
    const request = await create({ label: 'to delete' })
    const deleted = await fileshare.uploadRequests.delete(request.request_id)
    expect(deleted).toMatchObject({ request_id: request.request_id, label: 'to delete', status: 'closed' })
    await expect(fileshare.uploadRequests.get(request.request_id)).rejects.toBeInstanceOf(NotFoundError)
    expect((await fileshare.uploadRequests.list()).map((r) => r.request_id)).not.toContain(request.request_id)
    const refused = await guestUpload(request.url, text('late'), 'late.txt')
    expect(refused.status).toBe(401)
  })

  it('a key without requests:manage: 403 insufficient_scope, nothing retried', async () => {
    const readOnly = client('read_only')
    const request = await create({ label: 'scoped' })
    const calls = [
      () => readOnly.uploadRequests.list(),
      () => readOnly.uploadRequests.create({ label: 'no', expires_in: DAY }),
      () => readOnly.uploadRequests.get(request.request_id),
      () => readOnly.uploadRequests.close(request.request_id),
      () => readOnly.uploadRequests.files(request.request_id),
    ]
    for (const run of calls) {
      const error = await failure(run())
      expect(error).toBeInstanceOf(InsufficientScopeError)
      expect(error).toMatchObject({ status: 403, code: 'insufficient_scope', requiredScope: 'requests:manage' })
    }
    expect(await fileshare.uploadRequests.get(request.request_id)).toMatchObject({ status: 'active' })
  })

  it("another account's request is not found", async () => {
    const request = await create({ label: 'mine' })
    const other = await newAccount('ur-other')
    await expect(other.client.uploadRequests.get(request.request_id)).rejects.toBeInstanceOf(NotFoundError)
    await expect(other.client.uploadRequests.close(request.request_id)).rejects.toBeInstanceOf(NotFoundError)
    await expect(other.client.uploadRequests.files(request.request_id)).rejects.toBeInstanceOf(NotFoundError)
    expect((await other.client.uploadRequests.list()).map((r) => r.request_id)).not.toContain(request.request_id)
  })
})

describe('guests upload through a request', () => {
  let receiverUrl: string
  let received: Received[]
  let closeReceiver: () => Promise<void>
  let webhook: { webhook_id: number; secret: string } | undefined

  beforeAll(async () => {
    const receiver = await startWebhookReceiver()
    receiverUrl = receiver.url
    received = receiver.received
    closeReceiver = receiver.close
    webhook = await fileshare.webhooks.create({
      url: `${receiverUrl}/requests`,
      events: ['upload_request.file_received', 'upload_request.full'],
      description: 'sdk-js upload requests',
    })
  })

  afterAll(async () => {
    if (webhook) await fileshare.webhooks.delete(webhook.webhook_id).catch(() => undefined)
    await closeReceiver?.()
  })

  /** The verified event of `type` about request `id`, once it came. */
  async function event(type: string, id: number, timeoutMs = 30_000): Promise<WebhookEvent> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      for (const message of received) {
        const parsed = Webhooks.verify(message.body, message.headers, webhook!.secret)
        if (parsed.type === type && (parsed.data as { request_id?: number }).request_id === id) return parsed
      }
      if (Date.now() > deadline) throw new Error(`no ${type} event of request ${id} within ${timeoutMs} ms`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  it('a guest file lands in the account with source upload_request; the counts, upload_request_full, full, a dead token', async () => {
    const request = await create({ label: 'guests', max_files: 2, max_total_size: 8, file_expires_in: 3600 })
    const first = await sent(request.url, 'hello', 'hello.txt')

    // The holder sees the file: in the request's files, and as one of the account's files.
    const page = await fileshare.uploadRequests.files(request.request_id)
    expect(page.files.map((f) => f.file_id)).toEqual([first])
    expect(page.pagination).toEqual({ limit: 20, next_before_id: null })
    const file = page.files[0]!
    expect(Object.keys(file).sort()).toEqual([...FILE_FIELDS].sort())
    expect(file).toMatchObject({ filename: 'hello.txt', size: 5, source: { type: 'upload_request', request_id: request.request_id } })
    expect(file.expiry).not.toBeNull()
    expect(Math.abs(file.expiry!.getTime() - file.uploaded_at.getTime() - 3600_000)).toBeLessThan(5000)
    expect(await fileshare.files.get(first)).toEqual(file)
    expect(await fileshare.uploadRequests.get(request.request_id)).toMatchObject({
      files_received: 1,
      bytes_received: 5,
      status: 'active',
      files_left: 1,
      bytes_left: 3,
    })

    // 5 more bytes would pass max_total_size: 403 upload_request_full, nothing counted.
    const tooMuch = await guestUpload(request.url, text('world'), 'world.txt')
    expect(tooMuch.status).toBe(403)
    expect(await errorCode(tooMuch)).toBe('upload_request_full')
    expect(await fileshare.uploadRequests.get(request.request_id)).toMatchObject({ files_received: 1, bytes_received: 5 })

    // The second file fills it: max_files and max_total_size both reached, status full.
    const second = await sent(request.url, 'abc', 'abc.txt')
    const full = await fileshare.uploadRequests.get(request.request_id)
    expect(full).toMatchObject({ files_received: 2, bytes_received: 8, status: 'full', files_left: 0, bytes_left: 0 })

    // A full request's token is dead.
    const late = await guestUpload(request.url, text('x'), 'x.txt')
    expect(late.status).toBe(401)
    expect(await errorCode(late)).toBe('unauthorized')

    // Newest first, page by page; iterateFiles yields each once.
    const one = await fileshare.uploadRequests.files(request.request_id, { limit: 1 })
    expect(one.files.map((f) => f.file_id)).toEqual([second])
    expect(one.pagination).toEqual({ limit: 1, next_before_id: second })
    const rest = await fileshare.uploadRequests.files(request.request_id, { limit: 1, beforeId: second })
    expect(rest.files.map((f) => f.file_id)).toEqual([first])
    const all: number[] = []
    for await (const f of fileshare.uploadRequests.iterateFiles(request.request_id, { limit: 1 })) all.push(f.file_id)
    expect(all).toEqual([second, first])

    // The webhook events: file_received with the file record, then full.
    const receivedEvent = await event('upload_request.file_received', request.request_id)
    if (receivedEvent.type !== 'upload_request.file_received') throw new Error('unreachable')
    expect(receivedEvent.data).toMatchObject({ request_id: request.request_id, label: 'guests' })
    expect([first, second]).toContain(receivedEvent.data.file.file_id)
    expect(receivedEvent.data.file.source).toEqual({ type: 'upload_request', request_id: request.request_id })
    const fullEvent = await event('upload_request.full', request.request_id)
    expect(fullEvent.data).toEqual({ request_id: request.request_id, label: 'guests', files_received: 2, bytes_received: 8 })

    // The audit log: the request made by the key, the guest's upload by the actor guest.
    const events = []
    for await (const e of fileshare.auditEvents.iterate({ since: new Date(Date.now() - 600_000) })) events.push(e)
    const made = events.find((e) => e.action === 'upload_request.created' && e.target?.id === request.request_id)
    expect(made, 'upload_request.created').toBeDefined()
    expect(made!.actor.type).toBe('key')
    const upload = events.find((e) => e.action === 'file.uploaded' && e.target?.id === first)
    expect(upload, 'file.uploaded of the guest file').toBeDefined()
    expect(upload!.actor).toMatchObject({ type: 'guest', id: request.request_id })

    // Files received stay in the account when the request is deleted.
    await fileshare.uploadRequests.delete(request.request_id)
    expect(await fileshare.files.get(first)).toMatchObject({ source: { type: 'upload_request', request_id: request.request_id } })
    await fileshare.files.delete(first)
    await fileshare.files.delete(second)
  })

  it("a file the holder uploads has source api: in the upload's answer (multipart and resumable) and in GET /files/{id}", async () => {
    for (const resumable of [false, true]) {
      const own = await fileshare.files.upload(text(`mine ${resumable}`), { filename: 'mine.txt', resumable })
      try {
        expect((await fileshare.files.get(own.file_id)).source).toEqual({ type: 'api' })
        expect(own.source, resumable ? 'the resumable upload' : 'the multipart upload').toEqual({ type: 'api' })
      } finally {
        await fileshare.files.delete(own.file_id)
      }
    }
  })

  it('a request with a password: a grant for the right password, 401 invalid_password for a wrong one', async () => {
    const request = await create({ label: 'protected', password: 'open sesame 42' })
    const wrong = await grantFor(request.url, 'not the password')
    expect(wrong.status).toBe(401)
    expect(await errorCode(wrong)).toBe('invalid_password')
    const withoutGrant = await guestUpload(request.url, text('no grant'), 'nogrant.txt')
    expect(withoutGrant.status).toBeGreaterThanOrEqual(400)
    expect(withoutGrant.status).toBeLessThan(500)
    const right = await grantFor(request.url, 'open sesame 42')
    expect(right.status).toBe(200)
    const { success, grant, expires_at } = (await right.json()) as { success: boolean; grant: string; expires_at: string }
    expect(success).toBe(true)
    expect(typeof grant).toBe('string')
    expect(typeof expires_at).toBe('string')
    const id = await sent(request.url, 'with grant', 'granted.txt', grant)
    expect(await fileshare.uploadRequests.get(request.request_id)).toMatchObject({ files_received: 1, bytes_received: 10 })
    await fileshare.files.delete(id)
  })

  it('guests must declare the length, and an unknown token is unauthorized', async () => {
    const request = await create({ label: 'length' })
    const deferred = await fetch(`${server().base_url}/uploads`, {
      method: 'POST',
      headers: {
        'tus-resumable': '1.0.0',
        authorization: `UploadRequest ${tokenOf(request.url)}`,
        'upload-defer-length': '1',
        'upload-metadata': `filename ${Buffer.from('d.txt').toString('base64')}`,
      },
    })
    expect(deferred.status).toBe(400)
    expect(await errorCode(deferred)).toBe('invalid_request')
    const unknown = await guestUpload(`${server().server_url}/r/${'A'.repeat(43)}`, text('x'), 'x.txt')
    expect(unknown.status).toBe(401)
    expect(await errorCode(unknown)).toBe('unauthorized')
    // The token opens nothing else.
    const list = await fetch(`${server().base_url}/files`, { headers: { authorization: `UploadRequest ${tokenOf(request.url)}` } })
    expect(list.status).toBe(401)
  })
})

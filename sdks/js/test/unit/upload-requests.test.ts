// client.uploadRequests against the fake fetch: paths, methods, JSON bodies, the records
// (UploadRequest with created, expiry, files_left, bytes_left), which calls are retried, the
// errors (upload_request_full a LimitExceededError), paging the files, and the new types.
import { describe, expect, it } from 'vitest'
import {
  ERROR_CODES,
  FILE_FIELDS,
  FileshareError,
  InsufficientScopeError,
  LimitExceededError,
  NotFoundError,
  BadRequestError,
  ConfigurationError,
  UPLOAD_REQUEST_FIELDS,
  UploadRequests,
  WEBHOOK_EVENT_TYPES,
  type AuditActorType,
  type FileRecord,
  type FileSource,
  type UploadRequest,
  type WebhookEvent,
} from '../../src/index.js'
import { FILE, apiError, connectionFailure, fakeClient, json, type Recorded } from '../helpers/fake-fetch.js'

const REQUEST = {
  request_id: 12,
  url: 'http://fake.test/r/' + 'T'.repeat(43),
  label: 'Invoices for March',
  message: 'Please send the PDFs.',
  expires_at: '2026-12-04 10:00:00',
  max_files: 5,
  max_file_size: 1_048_576,
  max_total_size: 10_485_760,
  file_expires_in: 86_400,
  password_protected: false,
  files_received: 2,
  bytes_received: 1000,
  status: 'active',
  created_at: '2026-11-27 10:00:00',
}

const answer = (request: Record<string, unknown> = REQUEST, status = 200) => json(status, { success: true, upload_request: request })
const call = (r: Recorded) => `${r.method} ${r.url.replace('http://fake.test/api/v1', '')}`
const bodyOf = (r: Recorded) => (r.body ? (JSON.parse(new TextDecoder().decode(r.body)) as unknown) : undefined)
const guestFile = (id: number) => ({ ...FILE, file_id: id, source: { type: 'upload_request', request_id: 12 } })

/** A scripted request's files: answers them newest first, by before_id. */
function fileServer(ids: number[]) {
  return (request: Recorded): Response => {
    const url = new URL(request.url)
    const limit = Number(url.searchParams.get('limit') ?? 20)
    const before = url.searchParams.get('before_id')
    const below = [...ids].sort((a, b) => b - a).filter((id) => before === null || id < Number(before))
    const page = below.slice(0, limit)
    return json(200, {
      success: true,
      files: page.map(guestFile),
      pagination: { limit, next_before_id: below.length > limit ? page.at(-1)! : null },
    })
  }
}

describe('client.uploadRequests', () => {
  it('is an UploadRequests', () => {
    expect(fakeClient([]).client.uploadRequests).toBeInstanceOf(UploadRequests)
  })

  it('create: POST /upload-requests with every field; the record has created, expiry, files_left and bytes_left', async () => {
    const { client, requests } = fakeClient([
      () => json(201, { success: true, upload_request: REQUEST }, { location: '/api/v1/upload-requests/12' }),
    ])
    const made: UploadRequest = await client.uploadRequests.create({
      label: 'Invoices for March',
      message: 'Please send the PDFs.',
      expires_in: 604_800,
      max_files: 5,
      max_file_size: 1_048_576,
      max_total_size: 10_485_760,
      password: 'correct horse',
      file_expires_in: 86_400,
      timeoutMs: 5000,
    })
    expect(requests.map(call)).toEqual(['POST /upload-requests'])
    expect(requests[0]!.headers.get('content-type')).toBe('application/json')
    expect(bodyOf(requests[0]!)).toEqual({
      label: 'Invoices for March',
      message: 'Please send the PDFs.',
      expires_in: 604_800,
      max_files: 5,
      max_file_size: 1_048_576,
      max_total_size: 10_485_760,
      password: 'correct horse',
      file_expires_in: 86_400,
    })
    expect(made).toEqual(REQUEST)
    expect(Object.keys(made)).toEqual([...UPLOAD_REQUEST_FIELDS])
    expect(made.created.toISOString()).toBe('2026-11-27T10:00:00.000Z')
    expect(made.expiry.toISOString()).toBe('2026-12-04T10:00:00.000Z')
    expect(made.files_left).toBe(3)
    expect(made.bytes_left).toBe(10_485_760 - 1000)
    // The extras are not enumerable: the record is the API's object.
    expect(JSON.parse(JSON.stringify(made))).toEqual(REQUEST)
  })

  it('create: expires_at may be a Date (sent in UTC); undefined fields are left out', async () => {
    const { client, requests } = fakeClient([() => answer(REQUEST, 201)])
    await client.uploadRequests.create({ label: 'x', expires_at: new Date('2026-12-01T08:30:00Z'), message: undefined })
    expect(bodyOf(requests[0]!)).toEqual({ label: 'x', expires_at: '2026-12-01 08:30:00' })
  })

  it('create carries one Idempotency-Key per call and is retried with it; idempotencyKey is the caller’s', async () => {
    const retried = fakeClient([() => connectionFailure(), () => apiError(503, 'service_unavailable'), () => answer(REQUEST, 201)])
    await retried.client.uploadRequests.create({ label: 'x', expires_in: 60 })
    expect(retried.requests.map(call)).toEqual(Array(3).fill('POST /upload-requests'))
    const keys = retried.requests.map((r) => r.headers.get('idempotency-key'))
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(new Set(keys).size).toBe(1)

    const own = fakeClient([() => answer(REQUEST, 201)])
    await own.client.uploadRequests.create({ label: 'x', expires_in: 60, idempotencyKey: 'invoices-march' })
    expect(own.requests[0]!.headers.get('idempotency-key')).toBe('invoices-march')
    expect(bodyOf(own.requests[0]!)).toEqual({ label: 'x', expires_in: 60 })
    await expect(own.client.uploadRequests.create({ label: 'x', expires_in: 60, idempotencyKey: '' })).rejects.toBeInstanceOf(
      ConfigurationError,
    )
  })

  it('a record without limits: files_left and bytes_left are null; a full one has 0 left, never less', async () => {
    const open = { ...REQUEST, max_files: null, max_total_size: null, max_file_size: null, message: null, file_expires_in: null }
    const over = { ...REQUEST, files_received: 7, bytes_received: 20_000_000, status: 'full' }
    const { client } = fakeClient([() => answer(open), () => answer(over)])
    expect(await client.uploadRequests.get(12)).toMatchObject({ files_left: null, bytes_left: null, message: null })
    expect(await client.uploadRequests.get(12)).toMatchObject({ files_left: 0, bytes_left: 0, status: 'full' })
  })

  it('list: GET /upload-requests; get: GET /upload-requests/{id}; fields this SDK does not know are kept', async () => {
    const closed = { ...REQUEST, request_id: 11, status: 'closed', later: 'kept' }
    const { client, requests } = fakeClient([() => json(200, { success: true, upload_requests: [REQUEST, closed] }), () => answer(closed)])
    const list = await client.uploadRequests.list()
    expect(list).toEqual([REQUEST, closed])
    expect(list[1]!.created).toBeInstanceOf(Date)
    expect(await client.uploadRequests.get('11')).toMatchObject({ status: 'closed', later: 'kept' })
    expect(requests.map(call)).toEqual(['GET /upload-requests', 'GET /upload-requests/11'])
  })

  it('answers without the list or the record are a FileshareError', async () => {
    const { client } = fakeClient([() => json(200, { success: true }), () => json(200, { success: true })])
    await expect(client.uploadRequests.list()).rejects.toThrow(/no upload request list/)
    await expect(client.uploadRequests.get(12)).rejects.toThrow(/no upload request object/)
  })

  it('update: PATCH /upload-requests/{id}; null is sent (it removes), undefined is not', async () => {
    const { client, requests } = fakeClient([() => answer({ ...REQUEST, max_files: null, message: null })])
    const updated = await client.uploadRequests.update(12, {
      max_files: null,
      message: null,
      label: 'Invoices, March',
      password: undefined,
      expires_at: new Date('2026-12-10T00:00:00Z'),
      signal: new AbortController().signal,
    })
    expect(requests.map(call)).toEqual(['PATCH /upload-requests/12'])
    expect(bodyOf(requests[0]!)).toEqual({ max_files: null, message: null, label: 'Invoices, March', expires_at: '2026-12-10 00:00:00' })
    expect(updated.files_left).toBeNull()
  })

  it('delete: DELETE /upload-requests/{id} answers the request as it was; close: POST …/close without a body', async () => {
    const closed = { ...REQUEST, status: 'closed' }
    const { client, requests } = fakeClient([() => answer(closed), () => answer(closed)])
    expect(await client.uploadRequests.delete(12)).toMatchObject({ request_id: 12, status: 'closed' })
    expect(await client.uploadRequests.close(12)).toMatchObject({ status: 'closed' })
    expect(requests.map(call)).toEqual(['DELETE /upload-requests/12', 'POST /upload-requests/12/close'])
    expect(requests[1]!.body).toBeUndefined()
  })

  it('get, update, delete and close (idempotent) are retried after a lost connection or a 5xx', async () => {
    const { client, requests } = fakeClient([
      () => connectionFailure(),
      () => answer(),
      () => apiError(502, 'internal_error'),
      () => answer(),
      () => connectionFailure(),
      () => answer(),
      () => apiError(500, 'internal_error'),
      () => answer(),
    ])
    await client.uploadRequests.get(12)
    await client.uploadRequests.update(12, { label: 'y' })
    await client.uploadRequests.delete(12)
    await client.uploadRequests.close(12)
    expect(requests.map(call)).toEqual([
      'GET /upload-requests/12',
      'GET /upload-requests/12',
      'PATCH /upload-requests/12',
      'PATCH /upload-requests/12',
      'DELETE /upload-requests/12',
      'DELETE /upload-requests/12',
      'POST /upload-requests/12/close',
      'POST /upload-requests/12/close',
    ])
  })

  it('checks ids before sending', async () => {
    const { client, requests } = fakeClient([() => answer()])
    await expect(client.uploadRequests.get(0)).rejects.toThrow(/an upload request id is a positive integer/)
    await expect(client.uploadRequests.update('x', {})).rejects.toBeInstanceOf(ConfigurationError)
    await expect(client.uploadRequests.close(1.5)).rejects.toBeInstanceOf(ConfigurationError)
    await expect(client.uploadRequests.files(-1)).rejects.toBeInstanceOf(ConfigurationError)
    expect(requests).toHaveLength(0)
  })

  it('the errors: invalid_parameter, not_found, insufficient_scope (requests:manage), upload_request_full (not retried)', async () => {
    const { client, requests } = fakeClient(
      [
        () => apiError(400, 'invalid_parameter'),
        () => apiError(404, 'not_found'),
        () =>
          json(
            403,
            { success: false, error: { code: 'insufficient_scope', message: 'm', required_scope: 'requests:manage' } },
            { 'www-authenticate': 'Bearer error="insufficient_scope", scope="requests:manage"' },
          ),
        () => apiError(403, 'upload_request_full'),
      ],
      { maxRetries: 3 },
    )
    await expect(client.uploadRequests.create({ label: '', expires_in: 60 })).rejects.toMatchObject({
      name: 'BadRequestError',
      status: 400,
      code: 'invalid_parameter',
    })
    await expect(client.uploadRequests.get(99)).rejects.toBeInstanceOf(NotFoundError)
    const scope = await client.uploadRequests.list().catch((e: unknown) => e)
    expect(scope).toBeInstanceOf(InsufficientScopeError)
    expect(scope).toMatchObject({ requiredScope: 'requests:manage' })
    const full = await client.files.upload(new TextEncoder().encode('hello'), { filename: 'a.txt' }).catch((e: unknown) => e)
    expect(full).toBeInstanceOf(LimitExceededError)
    expect(full).toMatchObject({ status: 403, code: 'upload_request_full' })
    expect(requests).toHaveLength(4)
    expect(ERROR_CODES).toContain('upload_request_full')
    expect(new BadRequestError('x')).toBeInstanceOf(FileshareError)
  })
})

describe('client.uploadRequests: files', () => {
  it('files() sends limit and before_id; file records keep their source', async () => {
    const { client, requests } = fakeClient([
      () => json(200, { success: true, files: [guestFile(9), guestFile(8)], pagination: { limit: 2, next_before_id: 8 } }),
    ])
    const page = await client.uploadRequests.files(12, { limit: 2, before_id: 10 })
    expect(requests.map(call)).toEqual(['GET /upload-requests/12/files?limit=2&before_id=10'])
    expect(page.pagination).toEqual({ limit: 2, next_before_id: 8 })
    const first: FileRecord = page.files[0]!
    expect(first.source).toEqual({ type: 'upload_request', request_id: 12 })
    expect(first.uploaded_at).toBeInstanceOf(Date)
    const source: FileSource = first.source
    if (source.type === 'upload_request') expect(source.request_id).toBe(12)
  })

  it('files() without options sends no query; beforeId is accepted; two different ones are refused', async () => {
    const { client, requests } = fakeClient([fileServer([1])])
    await client.uploadRequests.files(12)
    await client.uploadRequests.files(12, { beforeId: 9 })
    await expect(client.uploadRequests.files(12, { before_id: 3, beforeId: 4 })).rejects.toBeInstanceOf(ConfigurationError)
    expect(requests.map(call)).toEqual(['GET /upload-requests/12/files', 'GET /upload-requests/12/files?before_id=9'])
  })

  it('iterateFiles() pages by next_before_id until it is null, 100 a page by default', async () => {
    const { client, requests } = fakeClient([fileServer([1, 2, 3, 4, 5, 6, 7])])
    const seen: number[] = []
    for await (const file of client.uploadRequests.iterateFiles(12, { limit: 3 })) seen.push(file.file_id)
    expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1])
    expect(requests.map(call)).toEqual([
      'GET /upload-requests/12/files?limit=3',
      'GET /upload-requests/12/files?limit=3&before_id=5',
      'GET /upload-requests/12/files?limit=3&before_id=2',
    ])
    const all = fakeClient([fileServer([])])
    for await (const _ of all.client.uploadRequests.iterateFiles(12)) throw new Error('nothing to yield')
    expect(all.requests.map(call)).toEqual(['GET /upload-requests/12/files?limit=100'])
  })

  it('iterateFiles() never yields a file twice, and stops when next_before_id does not move', async () => {
    const page = (ids: number[], next: number | null) => () =>
      json(200, { success: true, files: ids.map(guestFile), pagination: { limit: 2, next_before_id: next } })
    const { client } = fakeClient([page([9, 8], 8), page([8, 7], 7), page([6, 5], 7)])
    const seen: number[] = []
    const error = await (async () => {
      for await (const file of client.uploadRequests.iterateFiles(12, { limit: 2 })) seen.push(file.file_id)
    })().catch((e: unknown) => e)
    expect(seen).toEqual([9, 8, 7, 6, 5])
    expect((error as Error).message).toMatch(/next_before_id 7 does not move past 7/)
  })

  it('an answer without a file list is a FileshareError', async () => {
    const { client } = fakeClient([() => json(200, { success: true, files: [] })])
    await expect(client.uploadRequests.files(12)).rejects.toThrow(/no file list/)
  })
})

describe('upload requests in the other lists and types', () => {
  it('the field lists: a file has source; an upload request its fourteen fields', () => {
    expect(FILE_FIELDS.slice(-2)).toEqual(['source', 'scan'])
    expect(UPLOAD_REQUEST_FIELDS).toEqual([
      'request_id',
      'url',
      'label',
      'message',
      'expires_at',
      'max_files',
      'max_file_size',
      'max_total_size',
      'file_expires_in',
      'password_protected',
      'files_received',
      'bytes_received',
      'status',
      'created_at',
    ])
  })

  it('the webhook event types and their data; the guest actor', () => {
    expect(WEBHOOK_EVENT_TYPES).toContain('upload_request.file_received')
    expect(WEBHOOK_EVENT_TYPES).toContain('upload_request.full')
    const event = {
      type: 'upload_request.file_received',
      timestamp: '2026-11-27T10:00:00Z',
      data: { request_id: 12, label: 'x', files_received: 1, bytes_received: 5, file: guestFile(7) },
    } as WebhookEvent
    let requestId: number | undefined
    if (event.type === 'upload_request.file_received')
      requestId = event.data.file.source.type === 'upload_request' ? event.data.request_id : 0
    expect(requestId).toBe(12)
    const guest: AuditActorType = 'guest'
    expect(guest).toBe('guest')
  })
})

// Resumable uploads against a stand-in server (the fake fetch): the switch at resumableThreshold,
// Upload-Checksum on every chunk, and the whole-file SHA-256 check at the end.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { IntegrityError } from '../../src/index.js'
import { FILE, apiError, connectionFailure, fakeClient, json, type Recorded } from '../helpers/fake-fetch.js'
import { randomBytes, sha256Hex } from '../helpers/env.js'

const UPLOAD = 'http://fake.test/api/v1/uploads/abc'
const sha256Base64 = (data: Uint8Array) => createHash('sha256').update(data).digest('base64')

/**
 * A tus 1.0.0 server in a function: OPTIONS advertises creation + checksum (sha256), POST creates,
 * PATCH appends (and names the file when the last byte is in), HEAD tells the offset, GET tells the
 * finished file, whose sha256 is `storedSha256(bytes received)` (the real hash unless a test wants
 * otherwise). `held`: the upload an earlier call with the same idempotency key made holds these
 * bytes, and POST answers with its replayed creation.
 */
function tusServer(storedSha256: (received: Uint8Array) => string = sha256Hex, held?: Uint8Array) {
  let received = held ?? new Uint8Array(0)
  let length = 0
  const fileId = (): Record<string, string> => (received.length === length ? { 'fileshare-file-id': '9' } : {})
  return (request: Recorded): Response => {
    const url = request.url
    if (request.method === 'OPTIONS' && url === 'http://fake.test/api/v1/uploads') {
      return new Response(null, {
        status: 204,
        headers: {
          'tus-resumable': '1.0.0',
          'tus-version': '1.0.0',
          'tus-extension': 'creation,creation-defer-length,termination,checksum',
          'tus-checksum-algorithm': 'sha1,sha256',
        },
      })
    }
    if (request.method === 'POST' && url === 'http://fake.test/api/v1/uploads') {
      length = Number(request.headers.get('upload-length'))
      const replayed: Record<string, string> = held ? { 'idempotent-replayed': 'true' } : {}
      return new Response(null, { status: 201, headers: { location: '/api/v1/uploads/abc', 'upload-offset': '0', ...replayed } })
    }
    if (request.method === 'HEAD' && url === UPLOAD) {
      return new Response(null, { status: 200, headers: { 'upload-offset': String(received.length), ...fileId() } })
    }
    if (request.method === 'PATCH' && url === UPLOAD) {
      const body = request.body ?? new Uint8Array(0)
      const next = new Uint8Array(received.length + body.length)
      next.set(received)
      next.set(body, received.length)
      received = next
      return new Response(null, { status: 204, headers: { 'upload-offset': String(received.length), ...fileId() } })
    }
    if (request.method === 'GET' && url === UPLOAD) {
      const file = { ...FILE, file_id: 9, filename: 'big.bin', size: received.length, sha256: storedSha256(received) }
      return json(200, { success: true, upload: { offset: received.length, length, file } })
    }
    if (request.method === 'POST' && url === 'http://fake.test/api/v1/files/upload') {
      return json(201, { success: true, ...FILE, size: 0, sha256: 'see the test' })
    }
    return json(404, { success: false, error: { code: 'not_found', message: `${request.method} ${url}` } })
  }
}

const calls = (requests: Recorded[]) => requests.map((r) => `${r.method} ${r.url.replace('http://fake.test/api/v1', '')}`)

describe('the switch to resumable uploads at resumableThreshold', () => {
  it('sends a source of exactly resumableThreshold bytes through tus, in chunks', async () => {
    const data = randomBytes(10, 3)
    const { client, requests } = fakeClient([tusServer()], { resumableThreshold: 10, chunkSize: 4 })
    const file = await client.files.upload(data, { filename: 'big.bin' })
    expect(file).toMatchObject({ file_id: 9, size: 10, sha256: sha256Hex(data) })
    expect(calls(requests)).toEqual([
      'OPTIONS /uploads',
      'POST /uploads',
      'PATCH /uploads/abc',
      'PATCH /uploads/abc',
      'PATCH /uploads/abc',
      'GET /uploads/abc',
    ])
    const create = requests[1]!
    expect(create.headers.get('tus-resumable')).toBe('1.0.0')
    expect(create.headers.get('upload-length')).toBe('10')
    expect(create.headers.get('upload-metadata')).toBe(`filename ${Buffer.from('big.bin').toString('base64')}`)
    const patches = requests.filter((r) => r.method === 'PATCH')
    expect(patches.map((r) => r.headers.get('upload-offset'))).toEqual(['0', '4', '8'])
    expect(patches.map((r) => r.headers.get('content-type'))).toEqual(Array(3).fill('application/offset+octet-stream'))
    expect(patches.map((r) => Array.from(r.body!))).toEqual(
      [data.subarray(0, 4), data.subarray(4, 8), data.subarray(8)].map((c) => Array.from(c)),
    )
  })

  it('sends a larger source (a path) through tus too', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const dir = mkdtempSync(`${tmpdir()}/fileshare-tus-`)
    try {
      const data = randomBytes(25, 4)
      writeFileSync(`${dir}/big.bin`, data)
      const { client, requests } = fakeClient([tusServer()], { resumableThreshold: 10, chunkSize: 16 })
      const file = await client.files.upload(`${dir}/big.bin`)
      expect(file.sha256).toBe(sha256Hex(data))
      expect(calls(requests)).toEqual(['OPTIONS /uploads', 'POST /uploads', 'PATCH /uploads/abc', 'PATCH /uploads/abc', 'GET /uploads/abc'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('sends a source one byte below resumableThreshold as one multipart request, without asking for tus', async () => {
    const data = randomBytes(9, 5)
    const { client, requests } = fakeClient(
      [
        (request) =>
          request.method === 'POST' ? json(201, { success: true, ...FILE, size: 9, sha256: sha256Hex(data) }) : tusServer()(request),
      ],
      { resumableThreshold: 10, chunkSize: 4 },
    )
    const file = await client.files.upload(data, { filename: 'small.bin' })
    expect(file.sha256).toBe(sha256Hex(data))
    expect(calls(requests)).toEqual(['POST /files/upload'])
    expect(requests[0]!.headers.get('content-type')).toMatch(/^multipart\/form-data; boundary=/)
    expect(Buffer.from(requests[0]!.body!).includes(Buffer.from(data))).toBe(true)
  })

  it('falls back to multipart at the threshold when the server offers no resumable uploads', async () => {
    const data = randomBytes(10, 6)
    const { client, requests } = fakeClient(
      [
        (request) =>
          request.method === 'OPTIONS'
            ? new Response(null, { status: 404 })
            : json(201, { success: true, ...FILE, size: 10, sha256: sha256Hex(data) }),
      ],
      { resumableThreshold: 10 },
    )
    await client.files.upload(data, { filename: 'big.bin' })
    expect(calls(requests)).toEqual(['OPTIONS /uploads', 'POST /files/upload'])
  })
})

describe('Upload-Checksum', () => {
  it('sends sha256 <base64 SHA-256 of that chunk> on every PATCH', async () => {
    const data = randomBytes(23, 7)
    const { client, requests } = fakeClient([tusServer()], { resumableThreshold: 1, chunkSize: 5 })
    await client.files.upload(data, { filename: 'big.bin' })
    const patches = requests.filter((r) => r.method === 'PATCH')
    expect(patches).toHaveLength(5)
    patches.forEach((patch, i) => {
      const chunk = data.subarray(i * 5, i * 5 + 5)
      expect(Array.from(patch.body!)).toEqual(Array.from(chunk))
      expect(patch.headers.get('upload-checksum')).toBe(`sha256 ${sha256Base64(chunk)}`)
    })
  })
})

describe('expires_in', () => {
  it('goes as Fileshare-Expires-In on the creation POST only', async () => {
    const { client, requests } = fakeClient([tusServer()], { resumableThreshold: 1, chunkSize: 5 })
    await client.files.upload(randomBytes(12, 10), { filename: 'big.bin', expires_in: 604_800 })
    expect(requests.map((r) => `${r.method} ${r.headers.get('fileshare-expires-in')}`)).toEqual([
      'OPTIONS null',
      'POST 604800',
      'PATCH null',
      'PATCH null',
      'PATCH null',
      'GET null',
    ])
  })
})

describe('the whole-file SHA-256 after a resumable upload', () => {
  it('throws IntegrityError when the finished file has another sha256 than the bytes sent', async () => {
    const data = randomBytes(12, 8)
    const wrong = 'f'.repeat(64)
    const { client, requests } = fakeClient([tusServer(() => wrong)], { resumableThreshold: 10, chunkSize: 8 })
    const error = await client.files.upload(data, { filename: 'big.bin' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(IntegrityError)
    expect(error).toMatchObject({ expected: wrong, actual: sha256Hex(data) })
    // It went the resumable way, to its end.
    expect(calls(requests)).toEqual(['OPTIONS /uploads', 'POST /uploads', 'PATCH /uploads/abc', 'PATCH /uploads/abc', 'GET /uploads/abc'])
  })

  it('throws IntegrityError with resumable: true as well, whatever the size', async () => {
    const data = randomBytes(3, 9)
    const { client } = fakeClient([tusServer(() => '0'.repeat(64))])
    await expect(client.files.upload(data, { filename: 'x.bin', resumable: true })).rejects.toBeInstanceOf(IntegrityError)
  })
})

describe('idempotency keys of resumable uploads', () => {
  it("the creation POST carries the call's key on every attempt; PATCH, HEAD and GET carry none", async () => {
    const server = tusServer()
    let cut = false
    const { client, requests } = fakeClient(
      [(request) => (request.method === 'POST' && !cut ? ((cut = true), connectionFailure()) : server(request))],
      { chunkSize: 4 },
    )
    const data = randomBytes(6, 11)
    await client.files.upload(data, { filename: 'big.bin', resumable: true })
    expect(calls(requests)).toEqual([
      'OPTIONS /uploads',
      'POST /uploads',
      'POST /uploads',
      'PATCH /uploads/abc',
      'PATCH /uploads/abc',
      'GET /uploads/abc',
    ])
    const keys = requests.map((r) => r.headers.get('idempotency-key'))
    expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys).toEqual([null, keys[1], keys[1], null, null, null])
  })

  it('a replayed creation continues where the upload stands: the bytes it holds are hashed, not sent', async () => {
    const data = randomBytes(10, 12)
    const { client, requests } = fakeClient([tusServer(sha256Hex, data.slice(0, 6))], { chunkSize: 3 })
    const progress: number[] = []
    const file = await client.files.upload(data, { resumable: true, idempotencyKey: 'mine', onProgress: (n) => progress.push(n) })
    expect(file.sha256).toBe(sha256Hex(data))
    expect(calls(requests)).toEqual([
      'OPTIONS /uploads',
      'POST /uploads',
      'HEAD /uploads/abc',
      'PATCH /uploads/abc',
      'PATCH /uploads/abc',
      'GET /uploads/abc',
    ])
    const patches = requests.filter((r) => r.method === 'PATCH')
    expect(patches.map((r) => r.headers.get('upload-offset'))).toEqual(['6', '9'])
    expect(Array.from(Buffer.concat(patches.map((r) => r.body!)))).toEqual(Array.from(data.subarray(6)))
    expect(progress[0]).toBe(6)
    expect(progress.at(-1)).toBe(10)
  })

  it('a replayed creation of a finished upload sends no byte', async () => {
    const data = randomBytes(10, 13)
    const { client, requests } = fakeClient([tusServer(sha256Hex, data)], { chunkSize: 3 })
    const file = await client.files.upload(data, { resumable: true, idempotencyKey: 'mine' })
    expect(file).toMatchObject({ file_id: 9, sha256: sha256Hex(data) })
    expect(calls(requests)).toEqual(['OPTIONS /uploads', 'POST /uploads', 'HEAD /uploads/abc', 'GET /uploads/abc'])
    // Other bytes under the same key: the check says where they came from.
    const other = fakeClient([tusServer(sha256Hex, randomBytes(10, 14))], { chunkSize: 3 })
    const error = await other.client.files.upload(data, { resumable: true, idempotencyKey: 'mine' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(IntegrityError)
    expect((error as Error).message).toMatch(/replayed for the idempotency key/)
    // A source shorter than what the upload holds cannot be the same upload.
    const short = fakeClient([tusServer(sha256Hex, data)], { chunkSize: 3 })
    await expect(short.client.files.upload(data.subarray(0, 4), { resumable: true, idempotencyKey: 'mine' })).rejects.toThrow(
      /the source ended after 4 bytes, short of the 10 bytes the upload of this idempotency key already holds/,
    )
  })

  it("a failed upload is deleted; with the caller's own key it is kept for the next call, unless refused for good", async () => {
    const failing = (answer: () => Response | Error) => {
      const server = tusServer()
      return fakeClient([(request) => (request.method === 'PATCH' ? answer() : server(request))], { maxRetries: 0 })
    }
    const cases = [
      [connectionFailure, undefined, true],
      [connectionFailure, 'mine', false],
      [() => apiError(503, 'service_unavailable'), 'mine', false],
      [() => apiError(403, 'storage_quota_exceeded'), 'mine', true],
    ] as const
    for (const [answer, idempotencyKey, deleted] of cases) {
      const { client, requests } = failing(answer)
      await expect(client.files.upload(randomBytes(8, 15), { resumable: true, idempotencyKey })).rejects.toBeInstanceOf(Error)
      expect(calls(requests).includes('DELETE /uploads/abc')).toBe(deleted)
    }
  })
})

describe('a chunk refused with a Retry-After over 60 s', () => {
  it('throws at once instead of waiting (423 upload_locked)', async () => {
    const server = tusServer()
    const { client, requests, sleeps } = fakeClient(
      [(request) => (request.method === 'PATCH' ? apiError(423, 'upload_locked', { 'retry-after': '120' }) : server(request))],
      { chunkSize: 4 },
    )
    const error = await client.files.upload(randomBytes(8, 16), { resumable: true }).catch((e: unknown) => e)
    expect(error).toMatchObject({ status: 423, code: 'upload_locked', retryAfter: 120 })
    expect(sleeps).toEqual([])
    expect(calls(requests).filter((c) => c.startsWith('PATCH') || c.startsWith('HEAD'))).toEqual(['PATCH /uploads/abc'])
  })
})

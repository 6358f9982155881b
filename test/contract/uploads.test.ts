import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import type { ResumableBlobStore } from '../../src/storage/resumable.js'
import { bearer, startTestApp, TEST_STACK, type TestApp } from '../helpers/test-app.js'

/**
 * Resumable uploads (tus 1.0.0) at /api/v1/uploads: the protocol as tus clients speak it, and our
 * rules on top (keys and plans, ownership, daily slots, the rate-limit guard, expiry, hand-over).
 */

const TUS = { 'tus-resumable': '1.0.0' }
const OCTETS = { 'content-type': 'application/offset+octet-stream' }
const EXPIRY_MS = 60_000
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64')
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')
const digest = (algorithm: string, data: Buffer) => createHash(algorithm).update(data).digest('base64')

type ErrorJson = { success: false; error: { code: string; message: string } }

/** The tus headers every answer but OPTIONS carries, refusals included, and the CORS headers. */
function expectTusHeaders(response: Response): void {
  expect(response.headers.get('tus-resumable')).toBe('1.0.0')
  expect(response.headers.get('access-control-allow-origin')).toBe('*')
  const exposed = (response.headers.get('access-control-expose-headers') ?? '').split(/\s*,\s*/)
  for (const name of ['Location', 'Upload-Offset', 'Upload-Length', 'Upload-Expires', 'Tus-Resumable', 'Fileshare-File-Id']) {
    expect(exposed).toContain(name)
  }
}

/** A refusal: its status, the JSON error body, and the tus headers still there. */
async function expectRefused(response: Response, status: number, code: string): Promise<ErrorJson> {
  const text = await response.text()
  expect({ status: response.status, text }).toMatchObject({ status })
  const body = JSON.parse(text) as ErrorJson
  expect(body).toEqual({ success: false, error: { code, message: expect.any(String) } })
  expectTusHeaders(response)
  return body
}

function rateLimit(response: Response) {
  const read = (name: string) => {
    const value = response.headers.get(name)
    expect(value, name).toMatch(/^[0-9]+$/)
    return Number(value)
  }
  return { limit: read('ratelimit-limit'), remaining: read('ratelimit-remaining') }
}

interface Client {
  t: TestApp
  apiKey: string
  accountId: number
}

interface CreateOptions {
  length?: number
  defer?: boolean
  filename?: string
  body?: Buffer
  headers?: Record<string, string>
}

function createUpload(c: Client, { length, defer, filename = 'hello.txt', body, headers = {} }: CreateOptions = {}) {
  return fetch(`${c.t.api}/uploads`, {
    method: 'POST',
    headers: {
      ...bearer(c.apiKey),
      ...TUS,
      ...(length === undefined ? {} : { 'upload-length': String(length) }),
      ...(defer ? { 'upload-defer-length': '1' } : {}),
      'upload-metadata': `filename ${b64(filename)},filetype ${b64('text/plain')}`,
      ...(body ? OCTETS : {}),
      ...headers,
    },
    ...(body ? { body } : {}),
  })
}

/** Creates an upload and returns its absolute URL. */
async function newUpload(c: Client, options: CreateOptions = {}): Promise<string> {
  const response = await createUpload(c, options)
  expect(response.status).toBe(201)
  return new URL(response.headers.get('location')!, c.t.url).href
}

function patch(c: Client, url: string, offset: number, body: Buffer, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'PATCH',
    headers: { ...bearer(c.apiKey), ...TUS, ...OCTETS, 'upload-offset': String(offset), ...headers },
    body,
  })
}

function head(c: Client, url: string, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'HEAD', headers: { ...bearer(c.apiKey), ...TUS, ...headers } })
}

async function offsetOf(c: Client, url: string): Promise<number> {
  const response = await head(c, url)
  expect(response.status).toBe(200)
  return Number(response.headers.get('upload-offset'))
}

async function uploadsToday(c: Client): Promise<number> {
  const response = await fetch(`${c.t.api}/stats`, { headers: bearer(c.apiKey) })
  expect(response.status).toBe(200)
  return ((await response.json()) as { stats: { uploads_today: number } }).stats.uploads_today
}

interface FileJson {
  file_id: number
  filename: string
  size: number
  sha256: string
  public_link: string
}

async function listedFile(c: Client, fileId: number): Promise<FileJson | undefined> {
  const response = await fetch(`${c.t.api}/files?limit=100`, { headers: bearer(c.apiKey) })
  expect(response.status).toBe(200)
  return ((await response.json()) as { files: FileJson[] }).files.find((file) => file.file_id === fileId)
}

async function download(c: Client, file: FileJson): Promise<Buffer> {
  const response = await fetch(new URL(new URL(file.public_link).pathname, c.t.url))
  expect(response.status).toBe(200)
  return Buffer.from(await response.arrayBuffer())
}

/** What the store holds for unfinished resumable uploads: upload files (folder), multipart uploads and tails (S3). */
async function resumableBytes(t: TestApp): Promise<string[]> {
  const store = t.app.blobStore as unknown as ResumableBlobStore
  const found: string[] = []
  for await (const leftover of store.listResumableLeftovers()) found.push(`leftover:${leftover.key}`)
  if (TEST_STACK === 'scale-out') found.push(...(await t.unfinishedWrites()).map((write) => `multipart:${write}`))
  return found.sort()
}

/** A PATCH whose body arrives slowly: `first` at once, the rest only when `finish` is called. */
function slowPatch(c: Client, url: string, offset: number, first: Buffer, total: number) {
  const request = http.request(url, {
    method: 'PATCH',
    headers: { ...bearer(c.apiKey), ...TUS, ...OCTETS, 'upload-offset': String(offset), 'content-length': String(total) },
  })
  request.on('error', () => {}) // the server may close the connection once it answered
  const answered = (once(request, 'response') as Promise<[http.IncomingMessage]>).then(async ([response]) => {
    const chunks: Buffer[] = []
    for await (const chunk of response) chunks.push(chunk as Buffer)
    return { status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }
  })
  request.flushHeaders()
  request.write(first)
  return { answered, finish: (rest: Buffer) => request.end(rest), abort: () => request.destroy() }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('resumable uploads (tus 1.0.0)', () => {
  let t: TestApp
  const client = async (plan = 'pro'): Promise<Client> => ({ t, ...(await t.createAccount(plan)) })

  beforeAll(async () => {
    t = await startTestApp(
      { FILESHARE_UPLOAD_EXPIRY_MS: String(EXPIRY_MS) },
      { resumableTiming: { heartbeatMs: 100, takeoverWaitMs: 2000, leaseMs: 1000 } },
    )
  })
  afterAll(async () => {
    await t?.close()
  })

  describe('protocol', () => {
    it('OPTIONS says what the server speaks, without a key, and answers a CORS preflight', async () => {
      for (const url of [`${t.api}/uploads`, `${t.api}/uploads/anything`]) {
        const response = await fetch(url, {
          method: 'OPTIONS',
          headers: { origin: 'https://app.example', 'access-control-request-method': 'PATCH' },
        })
        expect(response.status).toBe(204)
        expect(response.headers.get('tus-version')).toBe('1.0.0')
        expect(response.headers.get('tus-extension')!.split(',').sort()).toEqual(
          ['checksum', 'creation', 'creation-defer-length', 'creation-with-upload', 'expiration', 'termination'].sort(),
        )
        expect(response.headers.get('tus-max-size')).toBe(String(Math.max(...Object.values(t.config.plans).map((p) => p.max_file_size))))
        expect(response.headers.get('tus-checksum-algorithm')).toBe('sha1,sha256')
        expect(response.headers.get('access-control-allow-origin')).toBe('*')
        expect(response.headers.get('access-control-allow-methods')).toMatch(/PATCH/)
        const allowed = response.headers
          .get('access-control-allow-headers')!
          .toLowerCase()
          .split(/\s*,\s*/)
        for (const name of [
          'authorization',
          'content-type',
          'upload-offset',
          'upload-length',
          'upload-metadata',
          'upload-checksum',
          'tus-resumable',
        ]) {
          expect(allowed).toContain(name)
        }
        expect(response.headers.get('tus-resumable')).toBeNull()
      }
    })

    it('POST creates an upload: 201, Location, Upload-Offset 0, Upload-Expires; HEAD and GET tell where it stands', async () => {
      const c = await client()
      const before = Date.now()
      const response = await createUpload(c, { length: 11, filename: 'notes.txt' })
      expect(response.status).toBe(201)
      expectTusHeaders(response)
      expect(await response.text()).toBe('')
      const location = response.headers.get('location')!
      expect(location).toMatch(/^\/api\/v1\/uploads\/[A-Za-z0-9_-]+$/)
      expect(response.headers.get('upload-offset')).toBe('0')
      const expires = Date.parse(response.headers.get('upload-expires')!)
      expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + EXPIRY_MS - 1000)
      expect(expires).toBeLessThanOrEqual(Date.now() + EXPIRY_MS)
      const url = new URL(location, t.url).href

      const status = await head(c, url)
      expect(status.status).toBe(200)
      expectTusHeaders(status)
      expect(status.headers.get('upload-offset')).toBe('0')
      expect(status.headers.get('upload-length')).toBe('11')
      expect(status.headers.get('upload-metadata')).toBe(`filename ${b64('notes.txt')},filetype ${b64('text/plain')}`)
      expect(status.headers.get('cache-control')).toBe('no-store')
      expect(status.headers.get('upload-expires')).toBe(response.headers.get('upload-expires'))

      const json = await fetch(url, { headers: bearer(c.apiKey) })
      expect(json.status).toBe(200)
      expect(await json.json()).toEqual({
        success: true,
        upload: { offset: 0, length: 11, expires_at: new Date(expires).toISOString().slice(0, 19).replace('T', ' '), file: null },
      })
    })

    it('PATCH in chunks; the completing PATCH names the file, which is listed with its size and sha256 and served exactly', async () => {
      const c = await client()
      const content = randomBytes(3000)
      const url = await newUpload(c, { length: content.length, filename: 'chunks.bin' })
      let offset = 0
      for (const size of [1000, 1000]) {
        const response = await patch(c, url, offset, content.subarray(offset, offset + size))
        expect(response.status).toBe(204)
        expectTusHeaders(response)
        offset += size
        expect(response.headers.get('upload-offset')).toBe(String(offset))
        expect(response.headers.get('fileshare-file-id')).toBeNull()
        expect(response.headers.get('upload-expires')).not.toBeNull()
        expect(await offsetOf(c, url)).toBe(offset)
      }
      const midway = (await (await fetch(url, { headers: bearer(c.apiKey) })).json()) as { upload: Record<string, unknown> }
      expect(midway.upload).toMatchObject({ offset: 2000, length: 3000, file: null })

      const last = await patch(c, url, offset, content.subarray(offset))
      expect(last.status).toBe(204)
      expect(last.headers.get('upload-offset')).toBe('3000')
      const fileId = Number(last.headers.get('fileshare-file-id'))
      expect(fileId).toBeGreaterThan(0)

      const file = await listedFile(c, fileId)
      expect(file).toMatchObject({ filename: 'chunks.bin', size: 3000, sha256: sha256(content) })
      expect((await download(c, file!)).equals(content)).toBe(true)

      // GET shows the file; HEAD still answers (a client retrying its HEAD learns it is complete).
      const done = await fetch(url, { headers: bearer(c.apiKey) })
      expect(((await done.json()) as { upload: unknown }).upload).toEqual({
        offset: 3000,
        length: 3000,
        expires_at: expect.any(String),
        file: expect.objectContaining({ file_id: fileId, size: 3000, sha256: sha256(content), filename: 'chunks.bin' }),
      })
      const status = await head(c, url)
      expect(status.status).toBe(200)
      expect(status.headers.get('upload-offset')).toBe('3000')
      expect(status.headers.get('fileshare-file-id')).toBe(String(fileId))
      // A repeat of the completing PATCH whose answer got lost: the same file, nothing more.
      const repeat = await patch(c, url, 3000, Buffer.alloc(0))
      expect(repeat.status).toBe(204)
      expect(repeat.headers.get('fileshare-file-id')).toBe(String(fileId))
      // And the completing chunk itself sent again.
      const resent = await patch(c, url, 2000, content.subarray(2000))
      expect(resent.status).toBe(204)
      expect(resent.headers.get('upload-offset')).toBe('3000')
      expect(resent.headers.get('fileshare-file-id')).toBe(String(fileId))
      // Any other chunk is still refused: at another offset, or past the length.
      await expectRefused(await patch(c, url, 1000, content.subarray(1000, 2000)), 409, 'upload_offset_mismatch')
      await expectRefused(await patch(c, url, 3000, Buffer.from('x')), 413, 'upload_length_exceeded')
      expect(await uploadsToday(c)).toBe(1)
      expect(await listedFile(c, fileId)).toMatchObject({ size: 3000, sha256: sha256(content) })
    })

    it('creation-with-upload: the POST body is the first chunk, and may be the whole file', async () => {
      const c = await client()
      const first = await createUpload(c, { length: 10, body: Buffer.from('hello') })
      expect(first.status).toBe(201)
      expect(first.headers.get('upload-offset')).toBe('5')
      expect(first.headers.get('fileshare-file-id')).toBeNull()
      const url = new URL(first.headers.get('location')!, t.url).href
      const rest = await patch(c, url, 5, Buffer.from(' you!'))
      expect(rest.status).toBe(204)
      const file = await listedFile(c, Number(rest.headers.get('fileshare-file-id')))
      expect((await download(c, file!)).toString()).toBe('hello you!')

      const whole = await createUpload(c, { length: 4, body: Buffer.from('once'), filename: 'once.txt' })
      expect(whole.status).toBe(201)
      expect(whole.headers.get('upload-offset')).toBe('4')
      const onceFile = await listedFile(c, Number(whole.headers.get('fileshare-file-id')))
      expect(onceFile).toMatchObject({ filename: 'once.txt', size: 4, sha256: sha256(Buffer.from('once')) })
    })

    it('creation-defer-length: no length until a PATCH declares Upload-Length', async () => {
      const c = await client()
      const created = await createUpload(c, { defer: true })
      expect(created.status).toBe(201)
      expect(created.headers.get('upload-defer-length')).toBe('1')
      const url = new URL(created.headers.get('location')!, t.url).href
      const status = await head(c, url)
      expect(status.headers.get('upload-defer-length')).toBe('1')
      expect(status.headers.get('upload-length')).toBeNull()
      expect(((await (await fetch(url, { headers: bearer(c.apiKey) })).json()) as { upload: unknown }).upload).toMatchObject({
        length: null,
      })

      expect((await patch(c, url, 0, Buffer.from('abc'))).status).toBe(204)
      const last = await patch(c, url, 3, Buffer.from('def'), { 'upload-length': '6' })
      expect(last.status).toBe(204)
      expect(last.headers.get('upload-length')).toBe('6')
      const file = await listedFile(c, Number(last.headers.get('fileshare-file-id')))
      expect(file).toMatchObject({ size: 6, sha256: sha256(Buffer.from('abcdef')) })
    })

    it('a deferred length may be declared by an empty PATCH, and cannot change afterwards', async () => {
      const c = await client()
      const url = await newUpload(c, { defer: true })
      expect((await patch(c, url, 0, Buffer.from('ab'))).status).toBe(204)
      const declared = await patch(c, url, 2, Buffer.alloc(0), { 'upload-length': '4' })
      expect(declared.status).toBe(204)
      expect(declared.headers.get('upload-length')).toBe('4')
      await expectRefused(await patch(c, url, 2, Buffer.from('cd'), { 'upload-length': '5' }), 400, 'invalid_request')
      const last = await patch(c, url, 2, Buffer.from('cd'))
      expect(last.headers.get('fileshare-file-id')).not.toBeNull()
    })

    it('a zero-length upload is a file at once', async () => {
      const c = await client()
      const response = await createUpload(c, { length: 0, filename: 'empty.txt' })
      expect(response.status).toBe(201)
      expect(response.headers.get('upload-offset')).toBe('0')
      const fileId = Number(response.headers.get('fileshare-file-id'))
      expect(fileId).toBeGreaterThan(0)
      const file = await listedFile(c, fileId)
      expect(file).toMatchObject({ filename: 'empty.txt', size: 0, sha256: sha256(Buffer.alloc(0)) })
      expect((await download(c, file!)).length).toBe(0)
    })

    it('a zero-length creation with a body is refused before anything is created', async () => {
      const c = await client()
      const response = await createUpload(c, { length: 0, filename: 'not-empty.txt', body: Buffer.from('abc') })
      await expectRefused(response, 413, 'upload_length_exceeded')
      expect(response.headers.get('location')).toBeNull()
      expect(await uploadsToday(c)).toBe(0)
      const listed = await fetch(`${t.api}/files`, { headers: bearer(c.apiKey) })
      expect(((await listed.json()) as { files: unknown[] }).files).toEqual([])
    })

    it('a checksum that matches is accepted; one that does not is refused with 460 and nothing of the chunk is kept', async () => {
      const c = await client()
      const content = Buffer.from('0123456789abcdef')
      const url = await newUpload(c, { length: content.length })
      const first = content.subarray(0, 8)
      const ok = await patch(c, url, 0, first, { 'upload-checksum': `sha256 ${digest('sha256', first)}` })
      expect(ok.status).toBe(204)
      expect(ok.headers.get('upload-offset')).toBe('8')

      const rest = content.subarray(8)
      for (const algorithm of ['sha1', 'sha256']) {
        const wrong = await patch(c, url, 8, rest, {
          'upload-checksum': `${algorithm} ${digest(algorithm, Buffer.from('something else'))}`,
        })
        await expectRefused(wrong, 460, 'checksum_mismatch')
        expect(await offsetOf(c, url)).toBe(8)
      }
      const right = await patch(c, url, 8, rest, { 'upload-checksum': `sha1 ${digest('sha1', rest)}` })
      expect(right.status).toBe(204)
      const file = await listedFile(c, Number(right.headers.get('fileshare-file-id')))
      expect(file).toMatchObject({ size: 16, sha256: sha256(content) })
      expect((await download(c, file!)).equals(content)).toBe(true)
    })

    it('an algorithm not offered is a 400', async () => {
      const c = await client()
      const url = await newUpload(c, { length: 3 })
      const response = await patch(c, url, 0, Buffer.from('abc'), { 'upload-checksum': `md5 ${digest('md5', Buffer.from('abc'))}` })
      await expectRefused(response, 400, 'invalid_request')
      expect(await offsetOf(c, url)).toBe(0)
    })

    it('DELETE terminates an upload: 204, then 404; its bytes go and its daily slot comes back', async () => {
      const c = await client()
      const before = await resumableBytes(t)
      const url = await newUpload(c, { length: 100 })
      expect((await patch(c, url, 0, randomBytes(40))).status).toBe(204)
      const during = await resumableBytes(t)
      const mine = during.filter((entry) => !before.includes(entry))
      expect(mine.length).toBeGreaterThan(0)
      expect(await uploadsToday(c)).toBe(1)

      const deleted = await fetch(url, { method: 'DELETE', headers: { ...bearer(c.apiKey), ...TUS } })
      expect(deleted.status).toBe(204)
      expectTusHeaders(deleted)
      expect((await head(c, url)).status).toBe(404)
      await expectRefused(await fetch(url, { headers: bearer(c.apiKey) }), 404, 'not_found')
      await expectRefused(await patch(c, url, 40, Buffer.from('x')), 404, 'not_found')
      await expectRefused(await fetch(url, { method: 'DELETE', headers: { ...bearer(c.apiKey), ...TUS } }), 404, 'not_found')
      const after = await resumableBytes(t)
      expect(after.filter((entry) => mine.includes(entry))).toEqual([])
      expect(await uploadsToday(c)).toBe(0)
    })
    it('DELETE of a completed upload forgets the upload; its file and its daily slot stay', async () => {
      const c = await client()
      const url = await newUpload(c, { length: 3 })
      const fileId = Number((await patch(c, url, 0, Buffer.from('abc'))).headers.get('fileshare-file-id'))
      const deleted = await fetch(url, { method: 'DELETE', headers: { ...bearer(c.apiKey), ...TUS } })
      expect(deleted.status).toBe(204)
      expect((await head(c, url)).status).toBe(404)
      expect(await listedFile(c, fileId)).toMatchObject({ size: 3 })
      expect(await uploadsToday(c)).toBe(1)
    })

    it('a creation-with-upload whose first chunk is refused creates nothing and takes no slot', async () => {
      const c = await client()
      const before = await resumableBytes(t)
      const body = Buffer.from('hello')
      await expectRefused(
        await createUpload(c, { length: 10, body, headers: { 'upload-checksum': `sha1 ${digest('sha1', Buffer.from('other'))}` } }),
        460,
        'checksum_mismatch',
      )
      await expectRefused(await createUpload(c, { length: 3, body }), 413, 'upload_length_exceeded')
      await expectRefused(
        await createUpload(c, { length: 10, body, headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      )
      expect(await uploadsToday(c)).toBe(0)
      expect((await resumableBytes(t)).filter((entry) => !before.includes(entry))).toEqual([])
    })
  })

  describe('refusals', () => {
    it('401 without a key, on every method, with the tus headers', async () => {
      const c = await client()
      const url = await newUpload(c, { length: 5 })
      await expectRefused(
        await fetch(`${t.api}/uploads`, { method: 'POST', headers: { ...TUS, 'upload-length': '5' } }),
        401,
        'unauthorized',
      )
      await expectRefused(
        await fetch(url, { method: 'PATCH', headers: { ...TUS, ...OCTETS, 'upload-offset': '0' }, body: 'abcde' }),
        401,
        'unauthorized',
      )
      await expectRefused(await fetch(url, { headers: TUS }), 401, 'unauthorized')
      await expectRefused(await fetch(url, { method: 'DELETE', headers: TUS }), 401, 'unauthorized')
      const status = await fetch(url, { method: 'HEAD', headers: TUS })
      expect(status.status).toBe(401)
      expectTusHeaders(status)
      expect(await offsetOf(c, url)).toBe(0)
    })

    it('403 plan_not_supported for a plan without API access', async () => {
      const c = await client('free')
      await expectRefused(await createUpload(c, { length: 5 }), 403, 'plan_not_supported')
    })

    it("404 for an unknown id and for another account's upload", async () => {
      const owner = await client()
      const other = await client()
      const url = await newUpload(owner, { length: 5 })
      const unknown = `${t.api}/uploads/${'x'.repeat(22)}`
      for (const [who, target] of [
        [owner, unknown],
        [other, url],
      ] as const) {
        expect((await head(who, target)).status).toBe(404)
        await expectRefused(await patch(who, target, 0, Buffer.from('abcde')), 404, 'not_found')
        await expectRefused(await fetch(target, { headers: bearer(who.apiKey) }), 404, 'not_found')
        await expectRefused(await fetch(target, { method: 'DELETE', headers: { ...bearer(who.apiKey), ...TUS } }), 404, 'not_found')
      }
      // The owner's upload is untouched.
      expect(await offsetOf(owner, url)).toBe(0)
      expect((await patch(owner, url, 0, Buffer.from('abcde'))).status).toBe(204)
    })

    it('409 for a PATCH at another offset than the upload holds', async () => {
      const c = await client()
      const url = await newUpload(c, { length: 10 })
      expect((await patch(c, url, 0, Buffer.from('abc'))).status).toBe(204)
      await expectRefused(await patch(c, url, 0, Buffer.from('abc')), 409, 'upload_offset_mismatch')
      await expectRefused(await patch(c, url, 5, Buffer.from('abc')), 409, 'upload_offset_mismatch')
      expect(await offsetOf(c, url)).toBe(3)
    })

    it('412 without Tus-Resumable or with another version, with Tus-Version', async () => {
      const c = await client()
      const url = await newUpload(c, { length: 10 })
      const noVersion = await fetch(`${t.api}/uploads`, { method: 'POST', headers: { ...bearer(c.apiKey), 'upload-length': '5' } })
      expect(noVersion.headers.get('tus-version')).toBe('1.0.0')
      await expectRefused(noVersion, 412, 'tus_version_not_supported')
      const old = await patch(c, url, 0, Buffer.from('abc'), { 'tus-resumable': '0.2.2' })
      expect(old.headers.get('tus-version')).toBe('1.0.0')
      await expectRefused(old, 412, 'tus_version_not_supported')
      const status = await head(c, url, { 'tus-resumable': '2.0.0' })
      expect(status.status).toBe(412)
      expect(status.headers.get('tus-version')).toBe('1.0.0')
      await expectRefused(await fetch(url, { method: 'DELETE', headers: bearer(c.apiKey) }), 412, 'tus_version_not_supported')
      expect(await offsetOf(c, url)).toBe(0)
    })

    it('400 for a creation without a length, with both, or with broken metadata', async () => {
      const c = await client()
      const post = (headers: Record<string, string>) =>
        fetch(`${t.api}/uploads`, { method: 'POST', headers: { ...bearer(c.apiKey), ...TUS, ...headers } })
      await expectRefused(await post({}), 400, 'invalid_request')
      await expectRefused(await post({ 'upload-length': '5', 'upload-defer-length': '1' }), 400, 'invalid_request')
      await expectRefused(await post({ 'upload-length': '-1' }), 400, 'invalid_parameter')
      await expectRefused(await post({ 'upload-length': '5', 'upload-metadata': 'filename not*base64' }), 400, 'invalid_request')
      expect(await uploadsToday(c)).toBe(0)
    })

    it('413 file_too_large for an Upload-Length over max_file_size; the slot is not taken', async () => {
      const c = await client()
      await t.app.services.accounts.setLimits(c.accountId, { max_file_size: 1000 })
      await expectRefused(await createUpload(c, { length: 1001 }), 413, 'file_too_large')
      // Digits past 2^53 − 1 are a length too, above any limit; a value that is no number stays 400.
      for (const huge of ['9007199254740992', '99999999999999999999999999']) {
        await expectRefused(await createUpload(c, { headers: { 'upload-length': huge } }), 413, 'file_too_large')
      }
      await expectRefused(await createUpload(c, { headers: { 'upload-length': '1e30' } }), 400, 'invalid_parameter')
      expect(await uploadsToday(c)).toBe(0)
      expect((await createUpload(c, { length: 1000 })).status).toBe(201)
    })

    it('413 file_too_large when a deferred upload passes max_file_size: the upload and its bytes go, its slot comes back', async () => {
      const c = await client()
      await t.app.services.accounts.setLimits(c.accountId, { max_file_size: 1000 })
      const before = await resumableBytes(t)

      // The chunk says its size: refused before it is read.
      const url = await newUpload(c, { defer: true })
      expect((await patch(c, url, 0, randomBytes(600))).status).toBe(204)
      expect(await uploadsToday(c)).toBe(1)
      await expectRefused(await patch(c, url, 600, randomBytes(600)), 413, 'file_too_large')
      expect((await head(c, url)).status).toBe(404)
      expect(await uploadsToday(c)).toBe(0)

      // A declared length over the limit.
      const declared = await newUpload(c, { defer: true })
      await expectRefused(await patch(c, declared, 0, randomBytes(10), { 'upload-length': '1001' }), 413, 'file_too_large')
      expect((await head(c, declared)).status).toBe(404)
      expect(await uploadsToday(c)).toBe(0)
      const declaredHuge = await newUpload(c, { defer: true })
      await expectRefused(
        await patch(c, declaredHuge, 0, randomBytes(10), { 'upload-length': '18446744073709551616' }),
        413,
        'file_too_large',
      )
      expect((await head(c, declaredHuge)).status).toBe(404)
      expect(await uploadsToday(c)).toBe(0)

      // A body without a length, streamed until it passes the limit.
      const streamed = await newUpload(c, { defer: true })
      const chunks = [randomBytes(500), randomBytes(500), randomBytes(500)]
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = chunks.shift()
          if (next) controller.enqueue(next)
          else controller.close()
        },
      })
      const response = await fetch(streamed, {
        method: 'PATCH',
        headers: { ...bearer(c.apiKey), ...TUS, ...OCTETS, 'upload-offset': '0' },
        body,
        duplex: 'half',
      } as RequestInit)
      await expectRefused(response, 413, 'file_too_large')
      expect((await head(c, streamed)).status).toBe(404)
      expect(await uploadsToday(c)).toBe(0)

      expect((await resumableBytes(t)).filter((entry) => !before.includes(entry))).toEqual([])
    })

    it('a deferred length is held to max_file_size as it was when the upload was created', async () => {
      const c = await client()
      await t.app.services.accounts.setLimits(c.accountId, { max_file_size: 1000 })
      const url = await newUpload(c, { defer: true })
      await t.app.services.accounts.setLimits(c.accountId, { max_file_size: 5000 })
      await expectRefused(await patch(c, url, 0, randomBytes(10), { 'upload-length': '3000' }), 413, 'file_too_large')
      expect((await head(c, url)).status).toBe(404)
      expect(await uploadsToday(c)).toBe(0)
      // An upload created under the new limit may use it.
      const later = await newUpload(c, { defer: true })
      expect((await patch(c, later, 0, randomBytes(10), { 'upload-length': '3000' })).status).toBe(204)
    })

    it('413 upload_length_exceeded for bytes past Upload-Length; the upload stays as it was', async () => {
      const c = await client()
      const url = await newUpload(c, { length: 10 })
      expect((await patch(c, url, 0, Buffer.from('abcd'))).status).toBe(204)
      await expectRefused(await patch(c, url, 4, Buffer.from('efghijk')), 413, 'upload_length_exceeded')
      expect(await offsetOf(c, url)).toBe(4)
      const last = await patch(c, url, 4, Buffer.from('efghij'))
      expect(last.status).toBe(204)
      const file = await listedFile(c, Number(last.headers.get('fileshare-file-id')))
      expect((await download(c, file!)).toString()).toBe('abcdefghij')

      // A body without a length, refused when it passes: what was kept before is exact.
      const streamed = await newUpload(c, { length: 10 })
      const chunks = ['abcd', 'efgh', 'ijkl'].map((text) => Buffer.from(text))
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = chunks.shift()
          if (next) controller.enqueue(next)
          else controller.close()
        },
      })
      const response = await fetch(streamed, {
        method: 'PATCH',
        headers: { ...bearer(c.apiKey), ...TUS, ...OCTETS, 'upload-offset': '0' },
        body,
        duplex: 'half',
      } as RequestInit)
      await expectRefused(response, 413, 'upload_length_exceeded')
      const held = await offsetOf(c, streamed)
      expect(held).toBeLessThanOrEqual(8)
      const rest = await patch(c, streamed, held, Buffer.from('abcdefghij'.slice(held)))
      expect(rest.status).toBe(204)
      const streamedFile = await listedFile(c, Number(rest.headers.get('fileshare-file-id')))
      expect((await download(c, streamedFile!)).toString()).toBe('abcdefghij')
    })

    it('415 for a PATCH without Content-Type: application/offset+octet-stream', async () => {
      const c = await client()
      const url = await newUpload(c, { length: 3 })
      await expectRefused(
        await patch(c, url, 0, Buffer.from('abc'), { 'content-type': 'application/octet-stream' }),
        415,
        'unsupported_media_type',
      )
      await expectRefused(
        await fetch(url, { method: 'PATCH', headers: { ...bearer(c.apiKey), ...TUS, 'upload-offset': '0' }, body: Buffer.from('abc') }),
        415,
        'unsupported_media_type',
      )
      expect(await offsetOf(c, url)).toBe(0)
    })

    it('410 once the upload expired and the garbage collector ran: its bytes are gone and its slot is back', async () => {
      const c = await client()
      const before = await resumableBytes(t)
      const url = await newUpload(c, { length: 100 })
      expect((await patch(c, url, 0, randomBytes(30))).status).toBe(204)
      const mine = (await resumableBytes(t)).filter((entry) => !before.includes(entry))
      expect(mine.length).toBeGreaterThan(0)
      expect(await uploadsToday(c)).toBe(1)

      t.advanceClock(EXPIRY_MS + 1_000)
      const report = await t.app.services.garbageCollector.collect({ graceMs: 3_600_000 })
      expect(report.uploadsExpired).toBeGreaterThanOrEqual(1)

      const status = await head(c, url)
      expect(status.status).toBe(410)
      expectTusHeaders(status)
      await expectRefused(await patch(c, url, 30, randomBytes(70)), 410, 'upload_expired')
      await expectRefused(await fetch(url, { headers: bearer(c.apiKey) }), 410, 'upload_expired')
      expect((await resumableBytes(t)).filter((entry) => mine.includes(entry))).toEqual([])
      expect(await uploadsToday(c)).toBe(0)
    })

    it('410 from the moment Upload-Expires passes, before any sweep; each stored chunk pushes the expiry back', async () => {
      const c = await client()
      const url = await newUpload(c, { length: 100 })
      const created = Date.parse((await head(c, url)).headers.get('upload-expires')!)
      t.advanceClock(EXPIRY_MS / 2)
      const patched = await patch(c, url, 0, randomBytes(30))
      expect(patched.status).toBe(204)
      // Upload-Expires has a precision of one second.
      expect(Date.parse(patched.headers.get('upload-expires')!)).toBeGreaterThanOrEqual(created + EXPIRY_MS / 2 - 1_000)

      t.advanceClock(EXPIRY_MS / 2 + 1_000)
      expect((await head(c, url)).status).toBe(200) // still within the pushed-back expiry
      t.advanceClock(EXPIRY_MS / 2)
      const expired = await head(c, url)
      expect(expired.status).toBe(410)
      expectTusHeaders(expired)
      await expectRefused(await patch(c, url, 30, randomBytes(70)), 410, 'upload_expired')
      await expectRefused(await fetch(url, { headers: bearer(c.apiKey) }), 410, 'upload_expired')
    })
  })

  describe('daily upload slots', () => {
    it('a slot is taken at creation; at the limit POST is refused; DELETE gives it back', async () => {
      const c = await client()
      await t.app.services.accounts.setLimits(c.accountId, { daily_uploads: 2 })
      const first = await newUpload(c, { length: 5 })
      expect(await uploadsToday(c)).toBe(1)
      await newUpload(c, { defer: true })
      expect(await uploadsToday(c)).toBe(2)
      await expectRefused(await createUpload(c, { length: 5 }), 403, 'daily_upload_limit_exceeded')
      expect((await fetch(first, { method: 'DELETE', headers: { ...bearer(c.apiKey), ...TUS } })).status).toBe(204)
      expect(await uploadsToday(c)).toBe(1)
      const third = await newUpload(c, { length: 1 })
      // Completing does not take a second slot.
      expect((await patch(c, third, 0, Buffer.from('x'))).headers.get('fileshare-file-id')).not.toBeNull()
      expect(await uploadsToday(c)).toBe(2)
    })

    it('concurrent creations take exactly the slots left; the refused ones keep nothing in the store', async () => {
      const c = await client()
      await t.app.services.accounts.setLimits(c.accountId, { daily_uploads: 3 })
      const before = await resumableBytes(t)
      const responses = await Promise.all(Array.from({ length: 10 }, () => createUpload(c, { length: 5 })))
      expect(responses.map((response) => response.status).sort()).toEqual([201, 201, 201, 403, 403, 403, 403, 403, 403, 403])
      for (const response of responses.filter((response) => response.status === 403)) {
        await expectRefused(response, 403, 'daily_upload_limit_exceeded')
      }
      expect(await uploadsToday(c)).toBe(3)
      // The three open uploads hold what they hold in the store; the refused ones left nothing.
      expect((await resumableBytes(t)).length - before.length).toBeLessThanOrEqual(3)
    })
  })

  describe('rate limits', () => {
    it("creating counts; a normal chunked upload's HEAD and PATCH do not, but carry the RateLimit headers", async () => {
      const c = await client()
      await t.app.services.accounts.setLimits(c.accountId, { requests_per_minute: 10 })
      // 10 chunks of 256 KiB, each after a HEAD: 20 requests, more than the 16 an upload starts with;
      // each chunk earns one more.
      const chunk = 256 * 1024
      const content = randomBytes(10 * chunk)
      const created = await createUpload(c, { length: content.length })
      expect(rateLimit(created)).toEqual({ limit: 10, remaining: 9 })
      const url = new URL(created.headers.get('location')!, t.url).href
      for (let offset = 0; offset < content.length; offset += chunk) {
        const status = await head(c, url)
        expect(rateLimit(status)).toEqual({ limit: 10, remaining: 9 })
        const response = await patch(c, url, offset, content.subarray(offset, offset + chunk))
        expect(response.status).toBe(204)
        expect(rateLimit(response)).toEqual({ limit: 10, remaining: 9 })
      }
      const done = await head(c, url)
      expect(rateLimit(done)).toEqual({ limit: 10, remaining: 9 })
      const file = await listedFile(c, Number(done.headers.get('fileshare-file-id')))
      expect(file).toMatchObject({ size: content.length, sha256: sha256(content) })
    })

    it("requests on another account's upload or an unknown one are counted like any call", async () => {
      const owner = await client()
      const other = await client()
      await t.app.services.accounts.setLimits(other.accountId, { requests_per_minute: 10 })
      const url = await newUpload(owner, { length: 5 })
      const first = await head(other, url)
      expect(first.status).toBe(404)
      expect(rateLimit(first)).toEqual({ limit: 10, remaining: 9 })
      const second = await patch(other, url, 0, Buffer.from('abcde'))
      expect(rateLimit(second)).toEqual({ limit: 10, remaining: 8 })
      await expectRefused(second, 404, 'not_found')
      const unknown = await head(other, `${t.api}/uploads/${'y'.repeat(22)}`)
      expect(rateLimit(unknown)).toEqual({ limit: 10, remaining: 7 })
    })

    it('PATCHes that move no bytes are counted at once, up to 429', async () => {
      const c = await client()
      await t.app.services.accounts.setLimits(c.accountId, { requests_per_minute: 4 })
      const url = await newUpload(c, { length: 100 })
      const statuses: number[] = []
      let last: Response | undefined
      for (let i = 0; i < 4; i++) {
        last = await patch(c, url, 0, Buffer.alloc(0))
        statuses.push(last.status)
        if (last.status !== 204) break
        expect(rateLimit(last).remaining).toBe(2 - i)
      }
      expect(statuses).toEqual([204, 204, 204, 429])
      await expectRefused(last!, 429, 'rate_limited')
      expect(last!.headers.get('retry-after')).toMatch(/^[0-9]+$/)
    })

    it('refused PATCHes are counted even while free requests are left, and so is one that only repeats its length', async () => {
      const c = await client()
      await t.app.services.accounts.setLimits(c.accountId, { requests_per_minute: 10 })
      const url = await newUpload(c, { length: 100 })
      const refusals: Array<[Response, number, string]> = [
        [await patch(c, url, 7, Buffer.from('abc')), 409, 'upload_offset_mismatch'],
        [await patch(c, url, 0, Buffer.from('abc'), { 'tus-resumable': '0.2.2' }), 412, 'tus_version_not_supported'],
        [await patch(c, url, 0, Buffer.from('abc'), { 'content-type': 'text/plain' }), 415, 'unsupported_media_type'],
        [
          await patch(c, url, 0, Buffer.from('abc'), { 'upload-checksum': `sha256 ${digest('sha256', Buffer.from('abd'))}` }),
          460,
          'checksum_mismatch',
        ],
      ]
      for (const [index, [response, status, code]] of refusals.entries()) {
        expect(rateLimit(response)).toEqual({ limit: 10, remaining: 8 - index })
        await expectRefused(response, status, code)
      }
      const again = await patch(c, url, 0, Buffer.alloc(0), { 'upload-length': '100' })
      expect(again.status).toBe(204)
      expect(rateLimit(again)).toEqual({ limit: 10, remaining: 4 })
      // A chunk that stores bytes is still free.
      const stored = await patch(c, url, 0, Buffer.from('abc'))
      expect(stored.status).toBe(204)
      expect(rateLimit(stored)).toEqual({ limit: 10, remaining: 4 })
    })

    it('a request refused before its body or id is read still counts', async () => {
      const c = await client()
      await t.app.services.accounts.setLimits(c.accountId, { requests_per_minute: 3 })
      const unknown = `${t.api}/uploads/${'z'.repeat(22)}`
      const statuses: number[] = []
      for (let i = 0; i < 4; i++) {
        const response = await fetch(unknown, {
          method: 'DELETE',
          headers: { ...bearer(c.apiKey), ...TUS, 'content-type': 'text/xml' },
          body: '<a/>',
        })
        statuses.push(response.status)
        if (response.status === 415) expect(rateLimit(response).remaining).toBe(2 - i)
        else await expectRefused(response, 429, 'rate_limited')
      }
      expect(statuses).toEqual([415, 415, 415, 429])
    })

    it('an upload patched far more often than its length needs runs out of free requests, then is counted up to 429', async () => {
      const c = await client()
      await t.app.services.accounts.setLimits(c.accountId, { requests_per_minute: 5 })
      const url = await newUpload(c, { length: 1000 })
      let offset = 0
      let refused: Response | undefined
      const remaining: number[] = []
      for (let i = 0; i < 40 && !refused; i++) {
        const response = await patch(c, url, offset, Buffer.from('x'))
        if (response.status === 204) {
          offset++
          remaining.push(rateLimit(response).remaining)
        } else refused = response
      }
      // 16 free PATCHes at creation leave the count at 4; then each one counts until none is left.
      expect(remaining.slice(0, 16)).toEqual(Array(16).fill(4))
      expect(remaining.slice(16)).toEqual([3, 2, 1, 0])
      await expectRefused(refused!, 429, 'rate_limited')
      // HEAD is counted too now, and refused.
      const status = await head(c, url)
      expect(status.status).toBe(429)
      expectTusHeaders(status)
    })
  })

  describe('two PATCHes to one upload at once', () => {
    it('the second takes over: the first ends with 423 where it is, and the bytes never interleave', async () => {
      const c = await client()
      const content = randomBytes(4000)
      const url = await newUpload(c, { length: content.length, filename: 'race.bin' })

      const slow = slowPatch(c, url, 0, content.subarray(0, 1500), 3000)
      await sleep(400) // its bytes arrived, the lease is its own
      // A retry from a client that thinks the first connection died; it asks first.
      const offsetSeen = await offsetOf(c, url)
      const second = await patch(c, url, offsetSeen, content.subarray(offsetSeen))
      // The rest of the first body, garbage, arrives after the hand-over: none of it may land.
      slow.finish(Buffer.alloc(1500))
      const first = await slow.answered

      expect(first.status).toBe(423)
      expect(JSON.parse(first.body)).toEqual({ success: false, error: { code: 'upload_locked', message: expect.any(String) } })
      expect(first.headers['tus-resumable']).toBe('1.0.0')
      // The first request's bytes were committed when it handed over: the second's offset is stale then.
      const held = await offsetOf(c, url)
      if (second.status === 409) {
        await expectRefused(second, 409, 'upload_offset_mismatch')
        expect(held).toBe(1500)
        const rest = await patch(c, url, held, content.subarray(held))
        expect(rest.status).toBe(204)
      } else {
        expect(second.status).toBe(204)
      }
      const fileId = Number((await head(c, url)).headers.get('fileshare-file-id'))
      const file = await listedFile(c, fileId)
      expect(file).toMatchObject({ size: content.length, sha256: sha256(content) })
      expect((await download(c, file!)).equals(content)).toBe(true)
    })

    it('with a checksum, the first keeps nothing, answers 423, and the second writes from the same offset', async () => {
      const c = await client()
      const content = randomBytes(3000)
      const url = await newUpload(c, { length: content.length })
      const request = http.request(url, {
        method: 'PATCH',
        headers: {
          ...bearer(c.apiKey),
          ...TUS,
          ...OCTETS,
          'upload-offset': '0',
          'content-length': '3000',
          'upload-checksum': `sha256 ${digest('sha256', content)}`,
        },
      })
      request.on('error', () => {})
      const answered = (once(request, 'response') as Promise<[http.IncomingMessage]>).then(async ([response]) => {
        const chunks: Buffer[] = []
        for await (const chunk of response) chunks.push(chunk as Buffer)
        return { status: response.statusCode!, body: Buffer.concat(chunks).toString('utf8') }
      })
      request.write(content.subarray(0, 1000))
      await sleep(400)
      const second = await patch(c, url, 0, content)
      request.end(Buffer.alloc(2000))
      const first = await answered
      expect(first.status).toBe(423)
      expect(JSON.parse(first.body).error.code).toBe('upload_locked')
      expect(second.status).toBe(204)
      const file = await listedFile(c, Number(second.headers.get('fileshare-file-id')))
      expect((await download(c, file!)).equals(content)).toBe(true)
    })
  })
  describe('another instance on the same database and store', () => {
    it('takes the middle chunk; the SHA-256 the file records is still the whole file’s (read back at completion)', async () => {
      // A second app on the first one's configuration: another instance, or the first after a restart.
      // (An app of this test's own: the suite's app has a clock the expiry tests moved.)
      const first = await startTestApp()
      const other = await buildApp(first.config)
      try {
        await other.listen({ port: 0, host: '127.0.0.1' })
        const otherUrl = `http://127.0.0.1:${(other.server.address() as AddressInfo).port}`
        const c: Client = { t: first, ...(await first.createAccount('pro')) }
        const content = randomBytes(3 * 100_000)
        const url = await newUpload(c, { length: content.length, filename: 'handed.bin' })
        const onOther = new URL(new URL(url).pathname, otherUrl).href
        expect((await patch(c, url, 0, content.subarray(0, 100_000))).status).toBe(204)
        expect((await patch(c, onOther, 100_000, content.subarray(100_000, 200_000))).status).toBe(204)
        const last = await patch(c, url, 200_000, content.subarray(200_000))
        expect(last.status).toBe(204)
        const file = await listedFile(c, Number(last.headers.get('fileshare-file-id')))
        expect(file).toMatchObject({ size: content.length, sha256: sha256(content) })
        expect((await download(c, file!)).equals(content)).toBe(true)
      } finally {
        other.server.closeAllConnections()
        await other.close()
        await first.close()
      }
    })
  })
})

describe('resumable uploads with a slow hand-over', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp({}, { resumableTiming: { heartbeatMs: 2000, takeoverWaitMs: 300, leaseMs: 10_000 } })
  })
  afterAll(async () => {
    await t?.close()
  })

  it('423 upload_locked for the second PATCH when the first does not hand over within the wait', async () => {
    const { apiKey, accountId } = await t.createAccount('pro')
    const c: Client = { t, apiKey, accountId }
    const content = randomBytes(2000)
    const url = await newUpload(c, { length: content.length })
    const slow = slowPatch(c, url, 0, content.subarray(0, 500), 1000)
    await sleep(300)
    await expectRefused(await patch(c, url, 0, content), 423, 'upload_locked')
    slow.finish(content.subarray(500, 1000))
    const first = await slow.answered
    // The first may or may not have seen the request to hand over; either way the bytes are whole.
    expect([204, 423]).toContain(first.status)
    const held = await offsetOf(c, url)
    expect(held).toBeLessThanOrEqual(1000)
    const rest = await patch(c, url, held, content.subarray(held))
    expect(rest.status).toBe(204)
    const response = await fetch(`${t.api}/files`, { headers: bearer(apiKey) })
    const [file] = ((await response.json()) as { files: FileJson[] }).files
    expect(file).toMatchObject({ size: 2000, sha256: sha256(content) })
  })
})

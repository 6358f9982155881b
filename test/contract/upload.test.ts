import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import http from 'node:http'
import net from 'node:net'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { bearer, fileForm, startTestApp, type TestApp } from '../helpers/test-app.js'
import { sha256Hex } from '../../src/lib/sha256-hex.js'

const BOUNDARY = '----fileshare-test-boundary-7MA4YWxkTrZu0gW'
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`
const FRAMING_ALLOWANCE = 64 * 1024

interface Part {
  /** Everything after `Content-Disposition: `, e.g. `form-data; name="file"; filename="a.txt"`. */
  disposition: string
  contentType?: string
  content: string | Buffer
}

function partHead(part: Omit<Part, 'content'>): Buffer {
  const type = part.contentType === undefined ? '' : `Content-Type: ${part.contentType}\r\n`
  return Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${part.disposition}\r\n${type}\r\n`, 'latin1')
}
const CLOSING = Buffer.from(`--${BOUNDARY}--\r\n`)

/** A multipart body built by hand, so that the part headers are exactly what the test says. */
function multipartBody(parts: Part[]): Buffer {
  return Buffer.concat([...parts.flatMap((part) => [partHead(part), Buffer.from(part.content), Buffer.from('\r\n')]), CLOSING])
}

const filePart = (filenameParams: string, content: string | Buffer, contentType = 'application/octet-stream'): Part => ({
  disposition: `form-data; name="file"; ${filenameParams}`,
  contentType,
  content,
})

interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
  json(): Record<string, unknown> & { error?: { code: string } }
}

async function collect(response: http.IncomingMessage): Promise<RawResponse> {
  const chunks: Buffer[] = []
  for await (const chunk of response) chunks.push(chunk as Buffer)
  const body = Buffer.concat(chunks)
  return { status: response.statusCode!, headers: response.headers, body, json: () => JSON.parse(body.toString('utf8')) }
}

/** Sends a request with node:http, streaming `body`; without a content-length it goes chunked. */
async function sendRaw(url: string, headers: Record<string, string>, body: Readable | Buffer): Promise<RawResponse> {
  const request = http.request(url, { method: 'POST', headers })
  const responded = once(request, 'response') as Promise<[http.IncomingMessage]>
  if (Buffer.isBuffer(body)) request.end(body)
  else body.pipe(request)
  const [response] = await responded
  return collect(response)
}

describe('POST /api/v1/files/upload', () => {
  // One app for the file (a fresh one per test cost a PostgreSQL schema, a bucket and migrations
  // each on the scale-out stack). Every test uploads with an account of its own, and looks only at
  // the blobs and unfinished writes that appeared in the store since it began (tests run one at a time).
  let t: TestApp
  let accountId: number
  let apiKey: string
  let blobsBefore: Set<string>
  let unfinishedBefore: Set<string>

  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(async () => {
    await t.close()
  })
  beforeEach(async () => {
    ;({ accountId, apiKey } = await t.createAccount('pro'))
    blobsBefore = new Set(await t.storedBlobs())
    unfinishedBefore = new Set(await t.unfinishedWrites())
  })

  const uploadUrl = () => `${t.api}/files/upload`
  const postBody = (body: Buffer | FormData | string | undefined, contentType?: string) =>
    fetch(uploadUrl(), {
      method: 'POST',
      headers: { ...bearer(apiKey), ...(contentType ? { 'content-type': contentType } : {}) },
      body: Buffer.isBuffer(body) ? new Uint8Array(body) : body,
    })
  const postMultipart = (parts: Part[]) => postBody(multipartBody(parts), MULTIPART)
  const errorCode = async (response: Response) => ((await response.json()) as { error: { code: string } }).error.code

  const storedBlobs = async () => (await t.storedBlobs()).filter((key) => !blobsBefore.has(key))
  const tmpFiles = async () => (await t.unfinishedWrites()).filter((write) => !unfinishedBefore.has(write))
  const uploadsToday = async () => (await t.app.services.accounts.stats(accountId)).uploadsToday
  /** Resolves once the server has begun storing an upload's bytes (the store's put was called), on either stack. */
  const storing = async () => {
    const put = vi.spyOn(t.app.blobStore, 'put')
    try {
      expect(await settlesTo(async () => put.mock.calls.length > 0, true)).toBe(true)
    } finally {
      put.mockRestore()
    }
  }
  async function listedTotal(): Promise<number> {
    const response = await fetch(`${t.api}/files`, { headers: bearer(apiKey) })
    return ((await response.json()) as { pagination: { total: number } }).pagination.total
  }
  /** Everything an upload could leave behind: a listed row, stored bytes, a tmp file, a counted upload. */
  async function traces() {
    return { listed: await listedTotal(), blobs: await storedBlobs(), tmp: await tmpFiles(), uploadsToday: await uploadsToday() }
  }
  const nothingLeft = { listed: 0, blobs: [], tmp: [], uploadsToday: 0 }

  /** Waits (bounded) until `read` yields `expected`, for cleanup that finishes after the response. */
  async function settlesTo<T>(read: () => Promise<T>, expected: T, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs
    let value = await read()
    while (Date.now() < deadline) {
      try {
        expect(value).toEqual(expected)
        return value
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 25))
        value = await read()
      }
    }
    return value
  }

  describe('success', () => {
    it('answers 201 with the contract fields, the extra fields and a Location header', async () => {
      const content = 'hello, fileshare'
      const response = await postBody(fileForm(content, 'notes.txt'))
      expect(response.status).toBe(201)
      const body = (await response.json()) as Record<string, unknown>
      expect(body).toEqual({
        success: true,
        file_id: expect.any(Number),
        public_link: expect.stringMatching(/^http:\/\/files\.example\.test\/download\/[A-Za-z0-9_-]{22,}$/),
        size: Buffer.byteLength(content),
        filename: 'notes.txt',
        upload_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
        download_count: 0,
        content_type: 'text/plain',
        sha256: sha256Hex(content),
        expires_at: null,
        source: { type: 'api' },
        // No virus scanning here (FILESHARE_CLAMD unset).
        scan: null,
      })
      expect(Number.isSafeInteger(body.file_id) && (body.file_id as number) > 0).toBe(true)
      expect(response.headers.get('location')).toBe(`/api/v1/files/${body.file_id}`)
      expect(response.headers.get('content-type')).toMatch(/^application\/json/)

      // The Location leads to the same file.
      const detail = await fetch(`${t.url}${response.headers.get('location')}`, { headers: bearer(apiKey) })
      expect(detail.status).toBe(200)
      const { file } = (await detail.json()) as { file: Record<string, unknown> }
      const { success: _success, ...fields } = body
      expect(file).toEqual(fields)
      expect(await uploadsToday()).toBe(1)
    })

    it('stores the exact bytes of a binary file, whose sha256 is the real SHA-256', async () => {
      const content = randomBytes(300_000)
      const response = await postBody(fileForm(content, 'noise.bin'))
      expect(response.status).toBe(201)
      const body = (await response.json()) as { sha256: string; size: number; public_link: string; content_type: string }
      expect(body.size).toBe(content.length)
      expect(body.sha256).toBe(sha256Hex(content))
      expect(body.content_type).toBe('application/octet-stream')
      const download = await fetch(`${t.url}${new URL(body.public_link).pathname}`)
      expect(Buffer.from(await download.arrayBuffer()).equals(content)).toBe(true)
    })

    it('accepts a zero-byte file', async () => {
      const response = await postMultipart([filePart('filename="empty.txt"', '')])
      expect(response.status).toBe(201)
      expect(await response.json()).toMatchObject({ success: true, size: 0, filename: 'empty.txt', sha256: sha256Hex('') })
      expect(await listedTotal()).toBe(1)
    })

    it('ignores other non-file fields, before and after the file part', async () => {
      const response = await postMultipart([
        { disposition: 'form-data; name="description"', content: 'my holiday pictures' },
        filePart('filename="photo.jpg"', 'JPEGDATA', 'image/jpeg'),
        { disposition: 'form-data; name="tags"', content: 'a,b,c' },
      ])
      expect(response.status).toBe(201)
      expect(await response.json()).toMatchObject({ success: true, filename: 'photo.jpg', size: 8, content_type: 'image/jpeg' })
    })

    it('ignores file parts under another name next to the one named file', async () => {
      const response = await postMultipart([
        { disposition: 'form-data; name="attachment"; filename="other.txt"', contentType: 'text/plain', content: 'ignored' },
        filePart('filename="wanted.txt"', 'wanted'),
      ])
      expect(response.status).toBe(201)
      expect(await response.json()).toMatchObject({ filename: 'wanted.txt', size: 6 })
      expect(await storedBlobs()).toHaveLength(1)
    })
  })

  describe('file name', () => {
    const uploadedName = async (filenameParams: string) => {
      const response = await postMultipart([filePart(filenameParams, 'x')])
      expect(response.status).toBe(201)
      return ((await response.json()) as { filename: string }).filename
    }

    it('honours an RFC 5987 filename*', async () => {
      expect(await uploadedName(`filename*=UTF-8''%E2%82%AC%20rates.txt`)).toBe('€ rates.txt')
      expect(await uploadedName(`filename*=utf-8''%D0%BE%D1%82%D1%87%D1%91%D1%82.pdf`)).toBe('отчёт.pdf')
      expect(await uploadedName(`filename*=UTF-8'de'%C3%9Cbersicht.csv`)).toBe('Übersicht.csv')
    })

    it('takes a UTF-8 filename sent raw in the quoted string', async () => {
      expect(await uploadedName(`filename="${Buffer.from('résumé.txt', 'utf8').toString('latin1')}"`)).toBe('résumé.txt')
    })

    it('removes any path from the name', async () => {
      expect(await uploadedName('filename="../../etc/passwd"')).toBe('passwd')
      expect(await uploadedName('filename="/home/me/docs/plan.txt"')).toBe('plan.txt')
      expect(await uploadedName(`filename*=UTF-8''..%5C..%5Cwindows%5Cwin.ini`)).toBe('win.ini')
    })

    it('drops control characters and normalises to NFC', async () => {
      expect(await uploadedName(`filename*=UTF-8''a%00b%07c%7F.txt`)).toBe('abc.txt')
      expect(await uploadedName(`filename*=UTF-8''Cafe%CC%81.txt`)).toBe('Caf\u00e9.txt')
    })

    it('cuts a long name to 255 bytes of UTF-8 on a character boundary', async () => {
      const long = '€'.repeat(100) // 300 bytes
      expect(await uploadedName(`filename*=UTF-8''${encodeURIComponent(long)}`)).toBe('€'.repeat(85))
    })

    it('names the file "file" when the name is empty or only a path', async () => {
      expect(await uploadedName('filename=""')).toBe('file')
      expect(await uploadedName('filename="some/dir/"')).toBe('file')
    })
  })

  describe('missing or malformed file (400)', () => {
    async function expectMissingFile(response: Response) {
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ success: false, error: { code: 'missing_file', message: expect.any(String) } })
      expect(await traces()).toEqual(nothingLeft)
    }

    it('refuses a multipart body without any file part', async () => {
      await expectMissingFile(await postMultipart([{ disposition: 'form-data; name="description"', content: 'no file' }]))
    })

    it('refuses a multipart body with no parts at all', async () => {
      await expectMissingFile(await postBody(CLOSING, MULTIPART))
    })

    it('refuses a file part under another name only', async () => {
      await expectMissingFile(await postBody(fileForm('content', 'a.txt', 'upload')))
    })

    it('refuses a plain text field named file', async () => {
      const form = new FormData()
      form.append('file', 'just a string')
      await expectMissingFile(await postBody(form))
    })

    it('refuses a JSON body', async () => {
      await expectMissingFile(await postBody(JSON.stringify({ file: 'aGVsbG8=' }), 'application/json'))
    })

    it('refuses a text/plain body', async () => {
      await expectMissingFile(await postBody('hello', 'text/plain'))
    })

    it('refuses an application/octet-stream body', async () => {
      await expectMissingFile(await postBody(Buffer.from('raw bytes'), 'application/octet-stream'))
    })

    it('refuses a body without a content type', async () => {
      const response = await sendRaw(uploadUrl(), { ...bearer(apiKey), 'content-length': '5' }, Buffer.from('hello'))
      expect(response.headers['content-type']).toMatch(/^application\/json/)
      expect(response.status).toBe(400)
      expect(response.json()).toMatchObject({ success: false, error: { code: 'missing_file' } })
      expect(await traces()).toEqual(nothingLeft)
    })

    it('refuses a request without a body', async () => {
      await expectMissingFile(await postBody(undefined))
    })

    it('refuses two parts named file with 400 and stores neither', async () => {
      const response = await postMultipart([filePart('filename="one.txt"', 'one'), filePart('filename="two.txt"', 'two')])
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ success: false, error: { code: 'invalid_request', message: expect.any(String) } })
      expect(await settlesTo(traces, nothingLeft)).toEqual(nothingLeft)
    })

    it('refuses a multipart body that ends before its closing boundary, storing nothing', async () => {
      const truncated = Buffer.concat([partHead(filePart('filename="cut.txt"', '')), Buffer.from('partial content')])
      const response = await postBody(truncated, MULTIPART)
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({ success: false })
      expect(await settlesTo(traces, nothingLeft)).toEqual(nothingLeft)
    })

    // @fastify/multipart ends the parts quietly at such a body, as at a whole one; the route
    // watches for the close delimiter itself, so the answer never depends on the store's timing.
    it('refuses a body whose file part lacks the final "--", storing nothing, every time', async () => {
      const unclosed = Buffer.concat([partHead(filePart('filename="unclosed.txt"', '')), Buffer.from(`all of it\r\n--${BOUNDARY}`)])
      for (let attempt = 0; attempt < 5; attempt++) {
        const response = await postBody(unclosed, MULTIPART)
        expect(response.status).toBe(400)
        expect(await response.json()).toEqual({ success: false, error: { code: 'invalid_request', message: expect.any(String) } })
      }
      expect(await settlesTo(traces, nothingLeft)).toEqual(nothingLeft)
    })

    it('stores a body whose close delimiter is followed by an epilogue, or opens the body', async () => {
      const closed = Buffer.concat([partHead(filePart('filename="e.txt"', '')), Buffer.from(`whole\r\n--${BOUNDARY}--\r\nan epilogue\r\n`)])
      const stored = await postBody(closed, MULTIPART)
      expect(stored.status).toBe(201)
      expect(await stored.json()).toMatchObject({ size: 5, sha256: sha256Hex(Buffer.from('whole')) })
      // An empty form (the close delimiter first) is whole: it lacks the file, not its ending.
      const empty = await postBody(Buffer.from(`--${BOUNDARY}--\r\n`), MULTIPART)
      expect(await empty.json()).toMatchObject({ success: false, error: { code: 'missing_file' } })
    })
  })

  describe('max_file_size (403 file_too_large)', () => {
    const maxFileSize = 10_000

    beforeEach(async () => {
      await t.app.services.accounts.setLimits(accountId, { max_file_size: maxFileSize })
    })

    it('accepts a file of exactly max_file_size bytes', async () => {
      const content = randomBytes(maxFileSize)
      const response = await postBody(fileForm(content, 'exact.bin'))
      expect(response.status).toBe(201)
      expect(await response.json()).toMatchObject({ size: maxFileSize, sha256: sha256Hex(content) })
    })

    it('refuses a file one byte over, storing and counting nothing', async () => {
      const response = await postBody(fileForm(randomBytes(maxFileSize + 1), 'over.bin'))
      expect(response.status).toBe(403)
      expect(await response.json()).toEqual({ success: false, error: { code: 'file_too_large', message: expect.any(String) } })
      expect(await settlesTo(traces, nothingLeft)).toEqual(nothingLeft)
      // The refused upload took no daily slot: the next good one is the first of the day.
      expect((await postBody(fileForm('fits', 'ok.txt'))).status).toBe(201)
      expect(await uploadsToday()).toBe(1)
    })

    it('refuses a file one byte over when the body is sent chunked, without a Content-Length', async () => {
      const body = multipartBody([filePart('filename="chunked.bin"', randomBytes(maxFileSize + 1))])
      const chunks = Array.from({ length: Math.ceil(body.length / 1000) }, (_, i) => body.subarray(i * 1000, (i + 1) * 1000))
      const response = await sendRaw(uploadUrl(), { ...bearer(apiKey), 'content-type': MULTIPART }, Readable.from(chunks))
      expect(response.status).toBe(403)
      expect(response.json()).toMatchObject({ success: false, error: { code: 'file_too_large' } })
      expect(await settlesTo(traces, nothingLeft)).toEqual(nothingLeft)
    })

    it('refuses a declared Content-Length beyond the limit plus 64 KiB before reading the body', async () => {
      const head = partHead(filePart('filename="huge.bin"', ''))
      const request = http.request(uploadUrl(), {
        method: 'POST',
        headers: {
          ...bearer(apiKey),
          'content-type': MULTIPART,
          'content-length': String(maxFileSize + FRAMING_ALLOWANCE + 1),
        },
      })
      request.on('error', () => {}) // the server may close the socket while the body is still owed
      const responded = once(request, 'response') as Promise<[http.IncomingMessage]>
      // Only the part head and a few bytes: the answer must come without the rest of the body.
      request.write(Buffer.concat([head, Buffer.from('first bytes')]))
      const response = await collect((await responded)[0])
      expect(request.writableEnded).toBe(false)
      request.destroy()

      expect(response.status).toBe(403)
      expect(response.json()).toMatchObject({ success: false, error: { code: 'file_too_large' } })
      expect(response.headers.connection).toBe('close')
      expect(await settlesTo(traces, nothingLeft)).toEqual(nothingLeft)
    })

    it('refuses a huge declared Content-Length (10 GiB) at once', async () => {
      const request = http.request(uploadUrl(), {
        method: 'POST',
        headers: { ...bearer(apiKey), 'content-type': MULTIPART, 'content-length': String(10 * 1024 ** 3) },
      })
      request.on('error', () => {})
      const responded = once(request, 'response') as Promise<[http.IncomingMessage]>
      request.flushHeaders()
      const response = await collect((await responded)[0])
      request.destroy()
      expect(response.status).toBe(403)
      expect(response.json()).toMatchObject({ error: { code: 'file_too_large' } })
      expect(await settlesTo(traces, nothingLeft)).toEqual(nothingLeft)
    })
  })

  describe('daily_uploads (403 daily_upload_limit_exceeded)', () => {
    it('refuses the upload after the daily limit', async () => {
      await t.app.services.accounts.setLimits(accountId, { daily_uploads: 3 })
      for (let i = 1; i <= 3; i++) {
        expect((await postBody(fileForm(`file ${i}`, `f${i}.txt`))).status).toBe(201)
      }
      const refused = await postBody(fileForm('one too many', 'f4.txt'))
      expect(refused.status).toBe(403)
      expect(await refused.json()).toEqual({
        success: false,
        error: { code: 'daily_upload_limit_exceeded', message: expect.any(String) },
      })
      expect(await listedTotal()).toBe(3)
      expect(await storedBlobs()).toHaveLength(3)
      expect(await settlesTo(tmpFiles, [])).toEqual([])
      expect(await uploadsToday()).toBe(3)
    })

    it('does not count failed uploads', async () => {
      await t.app.services.accounts.setLimits(accountId, { daily_uploads: 2, max_file_size: 100 })
      // Refused for size, missing part, two parts, non-multipart: none of them takes a slot.
      expect((await postBody(fileForm(randomBytes(101), 'big.bin'))).status).toBe(403)
      expect((await postBody(fileForm('x', 'a.txt', 'other'))).status).toBe(400)
      expect((await postMultipart([filePart('filename="1"', '1'), filePart('filename="2"', '2')])).status).toBe(400)
      expect((await postBody('plain', 'text/plain')).status).toBe(400)
      expect(await settlesTo(uploadsToday, 0)).toBe(0)

      expect((await postBody(fileForm('first', 'first.txt'))).status).toBe(201)
      expect((await postBody(fileForm('second', 'second.txt'))).status).toBe(201)
      expect(await errorCode(await postBody(fileForm('third', 'third.txt')))).toBe('daily_upload_limit_exceeded')
      expect(await uploadsToday()).toBe(2)
    })

    it('lets exactly daily_uploads of a concurrent burst through', async () => {
      await t.app.services.accounts.setLimits(accountId, { daily_uploads: 4 })
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) => postBody(fileForm(randomBytes(20_000 + i), `burst-${i}.bin`))),
      )
      const statuses = responses.map((response) => response.status).sort()
      expect(statuses).toEqual([201, 201, 201, 201, 403, 403, 403, 403, 403, 403])
      for (const response of responses) {
        const body = (await response.json()) as { error?: { code: string } }
        if (response.status === 403) expect(body.error?.code).toBe('daily_upload_limit_exceeded')
      }
      expect(await listedTotal()).toBe(4)
      expect(await storedBlobs()).toHaveLength(4)
      expect(await settlesTo(tmpFiles, [])).toEqual([])
      expect(await uploadsToday()).toBe(4)
    })

    it('an upload in flight holds no slot: it cannot make another refused, and one that fails never counted', async () => {
      await t.app.services.accounts.setLimits(accountId, { daily_uploads: 2 })
      expect((await postBody(fileForm('first', 'first.txt'))).status).toBe(201)
      // A slow upload starts while one slot is left, and stops half-way.
      const head = partHead(filePart('filename="slow.bin"', ''))
      const slow = http.request(uploadUrl(), {
        method: 'POST',
        headers: { ...bearer(apiKey), 'content-type': MULTIPART, 'content-length': String(head.length + 1024 * 1024 + 100) },
      })
      slow.on('error', () => {})
      slow.write(Buffer.concat([head, randomBytes(256 * 1024)]))
      await storing()
      expect(await uploadsToday()).toBe(1)
      // Another upload meanwhile takes the last slot; the slow one, cut off, leaves nothing.
      expect((await postBody(fileForm('second', 'second.txt'))).status).toBe(201)
      slow.destroy()
      expect(await settlesTo(tmpFiles, [])).toEqual([])
      expect(await uploadsToday()).toBe(2)
      expect(await listedTotal()).toBe(2)
    })

    it('uploads racing for the last slot: the first recorded takes it, the other is refused after its body and keeps nothing', async () => {
      await t.app.services.accounts.setLimits(accountId, { daily_uploads: 1 })
      const content = randomBytes(512 * 1024)
      const body = multipartBody([filePart('filename="late.bin"', content)])
      // The late upload sends all but its last bytes (the file part's delimiter among them), then
      // waits while a quick one is recorded.
      let releaseEnding!: () => void
      const endingReleased = new Promise<void>((resolve) => (releaseEnding = resolve))
      async function* lateEnding() {
        yield body.subarray(0, body.length - 10)
        await endingReleased
        yield body.subarray(body.length - 10)
      }
      const headers = { ...bearer(apiKey), 'content-type': MULTIPART, 'content-length': String(body.length) }
      const late = sendRaw(uploadUrl(), headers, Readable.from(lateEnding()))
      await storing()
      expect((await postBody(fileForm('quick', 'quick.txt'))).status).toBe(201)
      releaseEnding()
      const refused = await late
      expect(refused.status).toBe(403)
      expect(refused.json()).toEqual({
        success: false,
        error: { code: 'daily_upload_limit_exceeded', message: expect.any(String) },
      })
      expect(await listedTotal()).toBe(1)
      expect(await storedBlobs()).toHaveLength(1)
      expect(await settlesTo(tmpFiles, [])).toEqual([])
      expect(await uploadsToday()).toBe(1)
    })
  })

  describe('interrupted upload', () => {
    it('leaves nothing behind when the client goes away midway', async () => {
      const head = partHead(filePart('filename="interrupted.bin"', ''))
      const request = http.request(uploadUrl(), {
        method: 'POST',
        headers: { ...bearer(apiKey), 'content-type': MULTIPART, 'content-length': String(head.length + 4 * 1024 * 1024 + 100) },
      })
      request.on('error', () => {})
      request.write(Buffer.concat([head, randomBytes(512 * 1024)]))
      // Wait until the server is writing the file, so the cut is mid-upload.
      await storing()
      request.destroy()

      expect(await settlesTo(traces, nothingLeft)).toEqual(nothingLeft)
      // The account is not stuck: the next upload works and is the only one counted.
      expect((await postBody(fileForm('after', 'after.txt'))).status).toBe(201)
      expect(await uploadsToday()).toBe(1)
    })
  })

  describe('bytes after the declared Content-Length', () => {
    it('get the upload its own answer, true to what was kept, then the connection closes', async () => {
      const body = multipartBody([{ disposition: 'form-data; name="file"; filename="short.txt"', content: 'whole content' }])
      // Content-Length 3 short: the body ends inside the closing delimiter (the file part is whole),
      // and the last 3 bytes reach the HTTP parser as the start of a broken next request.
      const head =
        `POST /api/v1/files/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\n` +
        `Content-Type: ${MULTIPART}\r\nContent-Length: ${body.length - 3}\r\n\r\n`
      const socket = net.connect(Number(new URL(t.url).port), '127.0.0.1')
      socket.on('error', () => {})
      socket.write(Buffer.concat([Buffer.from(head), body]))
      const chunks: Buffer[] = []
      for await (const chunk of socket) chunks.push(chunk as Buffer)
      const answer = Buffer.concat(chunks).toString('latin1')
      // One answer only, and it is the truth about the upload: 201 and the file is kept, or an
      // error (the body ended before its closing delimiter) and nothing is. Never a 400 for a kept file.
      expect(answer.match(/^HTTP\/1\.1 /gm)).toHaveLength(1)
      const status = Number(answer.slice(9, 12))
      expect([201, 400]).toContain(status)
      expect(await listedTotal()).toBe(status === 201 ? 1 : 0)
    })
  })

  describe('large upload', () => {
    it('streams a 50 MiB file through and back with the right sha256', async () => {
      const size = 50 * 1024 * 1024
      const chunkSize = 1024 * 1024
      const block = randomBytes(chunkSize)
      const sentHash = createHash('sha256')
      const head = partHead(filePart('filename="big.bin"', ''))
      const tail = Buffer.from(`\r\n`)
      // Generated chunk by chunk (each one made distinct), so the test never holds the whole file.
      async function* body() {
        yield head
        for (let offset = 0; offset < size; offset += chunkSize) {
          const chunk = Buffer.from(block)
          chunk.writeUInt32BE(offset / chunkSize, 0)
          sentHash.update(chunk)
          yield chunk
        }
        yield tail
        yield CLOSING
      }
      const response = await sendRaw(
        uploadUrl(),
        { ...bearer(apiKey), 'content-type': MULTIPART, 'content-length': String(head.length + size + tail.length + CLOSING.length) },
        Readable.from(body()),
      )
      expect(response.status).toBe(201)
      const uploaded = response.json() as { size: number; sha256: string; public_link: string }
      const expectedSha = sentHash.digest('hex')
      expect(uploaded.size).toBe(size)
      expect(uploaded.sha256).toBe(expectedSha)

      const download = await fetch(`${t.url}${new URL(uploaded.public_link).pathname}`)
      expect(download.status).toBe(200)
      expect(download.headers.get('content-length')).toBe(String(size))
      const receivedHash = createHash('sha256')
      let received = 0
      for await (const chunk of download.body!) {
        receivedHash.update(chunk)
        received += chunk.length
      }
      expect(received).toBe(size)
      expect(receivedHash.digest('hex')).toBe(expectedSha)
    }, 120_000)
  })
})

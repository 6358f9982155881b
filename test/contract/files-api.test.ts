import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, fileForm, startTestApp, unlimitedAccount, uploadFile, type TestApp } from '../helpers/test-app.js'

const PUBLIC_URL = 'http://files.example.test'
const UPLOAD_DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$/

interface FileObject {
  file_id: number
  filename: string
  size: number
  upload_date: string
  download_count: number
  public_link: string
}

interface ListBody {
  success: boolean
  files: FileObject[]
  pagination: { page: number; limit: number; total: number; pages: number; next_before_id: number | null }
}

async function expectError(response: Response, status: number, code: string): Promise<{ error: { code: string; message: string } }> {
  expect(response.status).toBe(status)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  const body = (await response.json()) as { error: { code: string; message: string } }
  expect(body).toEqual({ success: false, error: { code, message: expect.any(String) } })
  return body
}

describe('files API: list, detail, delete', () => {
  // One app for the file: every test works in accounts of its own (a fresh app per test cost a
  // PostgreSQL schema, a bucket and migrations each on the scale-out stack).
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(async () => {
    await t.close()
  })

  const account = () => unlimitedAccount(t)

  /** Stores a file with a chosen upload time, through the same service the upload route uses. */
  async function insertFileAt(accountId: number, createdAt: number, content = 'x', filename = 'file.txt') {
    const owner = { accountId, limits: { maxFileSize: 1_000_000, dailyUploads: 1_000_000 } }
    const staged = await t.app.services.files.stage(owner, Readable.from([Buffer.from(content)]), filename, createdAt)
    return t.app.services.files.commit(staged, { now: createdAt })
  }

  async function list(apiKey: string, query = ''): Promise<ListBody> {
    const response = await fetch(`${t.api}/files${query}`, { headers: bearer(apiKey) })
    expect(response.status, query).toBe(200)
    return (await response.json()) as ListBody
  }

  describe('list', () => {
    it('defaults to page 1 and limit 20', async () => {
      const { accountId, apiKey } = await account()
      const base = Date.UTC(2025, 0, 1)
      await Promise.all(Array.from({ length: 25 }, (_, i) => insertFileAt(accountId, base + i * 1_000)))

      const first = await list(apiKey)
      expect(first.success).toBe(true)
      expect(first.files).toHaveLength(20)
      expect(first.pagination).toMatchObject({ page: 1, limit: 20, total: 25, pages: 2 })
      const second = await list(apiKey, '?page=2')
      expect(second.files).toHaveLength(5)
      expect(second.pagination).toMatchObject({ page: 2, limit: 20, total: 25, pages: 2 })
    })

    it('accepts limit 1 and limit 100, and page 1', async () => {
      const { accountId, apiKey } = await account()
      await Promise.all(Array.from({ length: 101 }, (_, i) => insertFileAt(accountId, Date.UTC(2025, 0, 1) + i)))

      const one = await list(apiKey, '?page=1&limit=1')
      expect(one.files).toHaveLength(1)
      expect(one.pagination).toMatchObject({ page: 1, limit: 1, total: 101, pages: 101 })
      const hundred = await list(apiKey, '?limit=100')
      expect(hundred.files).toHaveLength(100)
      expect(hundred.pagination).toMatchObject({ page: 1, limit: 100, total: 101, pages: 2 })
      const last = await list(apiKey, '?page=2&limit=100')
      expect(last.files).toHaveLength(1)
    })

    it('answers 400 invalid_parameter to any page or limit that is not an integer in range', async () => {
      const { apiKey } = await account()
      await uploadFile(t, apiKey)
      const invalid = [
        '0',
        '-1',
        'abc',
        '1.5',
        '',
        '1e1',
        '0x10',
        '+5',
        '%205',
        '5.0',
        '01',
        '9007199254740992',
        '99999999999999999999',
        '9'.repeat(400),
        '1e400',
        'Infinity',
      ]
      const queries = [
        ...invalid.map((value) => `?page=${value}`),
        ...invalid.map((value) => `?limit=${value}`),
        '?limit=101',
        '?limit=1000',
        '?limit=1&limit=2',
        '?page=1&page=2',
        '?limit=10&limit=10',
      ]
      for (const query of queries) {
        const response = await fetch(`${t.api}/files${query}`, { headers: bearer(apiKey) })
        expect(response.status, query).toBe(400)
        await expectError(response, 400, 'invalid_parameter')
      }
    })

    it('says what is wrong in the documented style, with no framework internals, whatever the length of the number', async () => {
      const { apiKey } = await account()
      const nines = '9'.repeat(400)
      const cut = `${'9'.repeat(40)}…`
      for (const [query, message] of [
        ['?limit=500', 'limit must be an integer from 1 to 100, got "500".'],
        ['?limit=0', 'limit must be an integer from 1 to 100, got "0".'],
        [`?limit=${nines}`, `limit must be an integer from 1 to 100, got "${cut}".`],
        [`?page=${nines}`, `page must be an integer from 1 to 9007199254740991, got "${cut}".`],
        ['?page=9007199254740992', 'page must be an integer from 1 to 9007199254740991, got "9007199254740992".'],
        ['?page=1e3', 'page must be an integer from 1 to 9007199254740991, got "1e3".'],
        ['?page=1&page=2', 'page must be an integer from 1 to 9007199254740991, got "1,2".'],
      ]) {
        const body = await expectError(await fetch(`${t.api}/files${query}`, { headers: bearer(apiKey) }), 400, 'invalid_parameter')
        expect(body.error.message, query).toBe(message)
      }
      for (const method of ['GET', 'DELETE']) {
        for (const [id, message] of [
          [nines, `file_id must be an integer from 1 to 9007199254740991, got "${cut}".`],
          ['9007199254740992', 'file_id must be an integer from 1 to 9007199254740991, got "9007199254740992".'],
          ['abc', 'file_id must be an integer from 1 to 9007199254740991, got "abc".'],
        ]) {
          const body = await expectError(await fetch(`${t.api}/files/${id}`, { method, headers: bearer(apiKey) }), 400, 'invalid_parameter')
          expect(body.error.message, `${method} ${id}`).toBe(message)
        }
      }
    })

    it('ignores unknown query parameters', async () => {
      const { apiKey } = await account()
      await uploadFile(t, apiKey)
      const body = await list(apiKey, '?colour=blue&limit=5')
      expect(body.pagination).toMatchObject({ page: 1, limit: 5, total: 1, pages: 1 })
    })

    it('lists newest first, ties by file_id highest first, across pages', async () => {
      const { accountId, apiKey } = await account()
      const moment = Date.UTC(2025, 5, 1, 12)
      const a = await insertFileAt(accountId, moment, 'a')
      const b = await insertFileAt(accountId, moment + 1_000, 'b')
      const c = await insertFileAt(accountId, moment, 'c')
      const d = await insertFileAt(accountId, moment - 5_000, 'd')
      const e = await insertFileAt(accountId, moment + 1_000, 'e')
      const expected = [e.id, b.id, c.id, a.id, d.id]

      expect((await list(apiKey)).files.map((file) => file.file_id)).toEqual(expected)
      const paged = []
      for (const page of [1, 2, 3]) paged.push(...(await list(apiKey, `?page=${page}&limit=2`)).files.map((file) => file.file_id))
      expect(paged).toEqual(expected)
    })

    it('reports pages = ceil(total / limit), 0 when there are no files, and a page past the end is empty', async () => {
      const { accountId, apiKey } = await account()
      expect(await list(apiKey)).toEqual({
        success: true,
        files: [],
        pagination: { page: 1, limit: 20, total: 0, pages: 0, next_before_id: null },
      })
      expect(await list(apiKey, '?page=3&limit=7')).toEqual({
        success: true,
        files: [],
        pagination: { page: 3, limit: 7, total: 0, pages: 0, next_before_id: null },
      })

      for (let i = 0; i < 5; i++) await insertFileAt(accountId, Date.UTC(2025, 0, 1) + i)
      for (const [limit, pages] of [
        [1, 5],
        [2, 3],
        [4, 2],
        [5, 1],
        [6, 1],
        [100, 1],
      ]) {
        expect((await list(apiKey, `?limit=${limit}`)).pagination).toMatchObject({ page: 1, limit, total: 5, pages })
      }
      expect((await list(apiKey, '?page=3&limit=2')).files).toHaveLength(1)
      expect(await list(apiKey, '?page=4&limit=2')).toEqual({
        success: true,
        files: [],
        pagination: { page: 4, limit: 2, total: 5, pages: 3, next_before_id: null },
      })
      const farAway = await list(apiKey, `?page=${Number.MAX_SAFE_INTEGER}&limit=100`)
      expect(farAway).toEqual({
        success: true,
        files: [],
        pagination: { page: Number.MAX_SAFE_INTEGER, limit: 100, total: 5, pages: 1, next_before_id: null },
      })
    })

    it('never lists another account’s files', async () => {
      const alice = await account()
      const bob = await account()
      await uploadFile(t, alice.apiKey, 'alice')
      const { body } = await uploadFile(t, bob.apiKey, 'bob')
      const bobs = await list(bob.apiKey)
      expect(bobs.files.map((file) => file.file_id)).toEqual([body.file_id])
      expect(bobs.pagination.total).toBe(1)
    })
  })

  describe('file fields', () => {
    it('gives list elements the same fields as the detail object, with the contract’s formats', async () => {
      const { apiKey } = await account()
      const before = Date.now()
      const { response, body } = await uploadFile(t, apiKey, 'héllo', 'notes.txt')
      expect(response.status).toBe(201)
      const detailResponse = await fetch(`${t.api}/files/${body.file_id}`, { headers: bearer(apiKey) })
      expect(detailResponse.status).toBe(200)
      const detail = (await detailResponse.json()) as { success: boolean; file: FileObject }
      expect(detail.success).toBe(true)

      const { file } = detail
      expect(file).toMatchObject({
        file_id: body.file_id,
        filename: 'notes.txt',
        size: 6, // bytes: é takes two in UTF-8
        download_count: 0,
        public_link: body.public_link,
      })
      expect(Number.isSafeInteger(file.file_id) && file.file_id > 0).toBe(true)
      expect(file.upload_date).toMatch(UPLOAD_DATE)
      // UTC: the date parses back, as UTC, to the moment of the upload (to the second).
      const uploadedAt = Date.parse(`${file.upload_date.replace(' ', 'T')}Z`)
      expect(uploadedAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000)
      expect(uploadedAt).toBeLessThanOrEqual(Date.now())

      const { files } = await list(apiKey)
      expect(files).toEqual([file])
      for (const field of ['file_id', 'filename', 'size', 'upload_date', 'download_count', 'public_link']) {
        expect(files[0]).toHaveProperty(field)
      }
    })

    it('formats upload_date as YYYY-MM-DD HH:MM:SS in UTC', async () => {
      const { accountId, apiKey } = await account()
      const stored = await insertFileAt(accountId, Date.UTC(2024, 1, 29, 23, 5, 9, 999))
      const detail = await fetch(`${t.api}/files/${stored.id}`, { headers: bearer(apiKey) })
      expect(((await detail.json()) as { file: FileObject }).file.upload_date).toBe('2024-02-29 23:05:09')
      expect((await list(apiKey)).files[0]!.upload_date).toBe('2024-02-29 23:05:09')
    })

    it('builds public_link from the public URL and a unique token of at least 128 bits in base64url', async () => {
      const { apiKey } = await account()
      const tokens = new Set<string>()
      for (let i = 0; i < 12; i++) {
        const { body } = await uploadFile(t, apiKey, `content ${i}`)
        const link = body.public_link
        expect(link.startsWith(`${PUBLIC_URL}/download/`)).toBe(true)
        expect(link).not.toContain('/api/v1')
        const token = link.slice(`${PUBLIC_URL}/download/`.length)
        expect(token).toMatch(/^[A-Za-z0-9_-]+$/)
        const bytes = Buffer.from(token, 'base64url')
        expect(bytes.length * 8).toBeGreaterThanOrEqual(128)
        expect(bytes.toString('base64url')).toBe(token)
        tokens.add(token)
      }
      expect(tokens.size).toBe(12)
    })

    it('uses a configured public URL with a path as the link base', async () => {
      const other = await startTestApp({ FILESHARE_PUBLIC_URL: 'https://cdn.example.test/share/' })
      try {
        const { apiKey } = await other.createAccount('pro')
        const { body } = await uploadFile(other, apiKey)
        expect(body.public_link).toMatch(/^https:\/\/cdn\.example\.test\/share\/download\/[A-Za-z0-9_-]{22,}$/)
      } finally {
        await other.close()
      }
    })
  })

  describe('detail', () => {
    it('answers 404 not_found for a well-formed id that does not exist', async () => {
      const { apiKey } = await account()
      const { body } = await uploadFile(t, apiKey)
      for (const id of [body.file_id + 1, 999_999, Number.MAX_SAFE_INTEGER]) {
        await expectError(await fetch(`${t.api}/files/${id}`, { headers: bearer(apiKey) }), 404, 'not_found')
      }
    })

    it('answers 400 invalid_parameter for a malformed id, on detail and delete', async () => {
      const { apiKey } = await account()
      await uploadFile(t, apiKey)
      const malformed = ['abc', '0', '-3', '1.5', '1e0', '0x1', '+1', '%201', '01', '9007199254740992', '99999999999999999999']
      for (const id of malformed) {
        for (const method of ['GET', 'DELETE']) {
          const response = await fetch(`${t.api}/files/${id}`, { method, headers: bearer(apiKey) })
          expect(response.status, `${method} ${id}`).toBe(400)
          await expectError(response, 400, 'invalid_parameter')
        }
      }
      // The file is still there: none of the malformed ids was read as its id (1).
      expect((await list(apiKey)).pagination.total).toBe(1)
    })

    it('answers 404 for another account’s file, on detail and delete, and leaves it alone', async () => {
      const alice = await account()
      const bob = await account()
      const { body } = await uploadFile(t, alice.apiKey, 'alice only')
      await expectError(await fetch(`${t.api}/files/${body.file_id}`, { headers: bearer(bob.apiKey) }), 404, 'not_found')
      await expectError(await fetch(`${t.api}/files/${body.file_id}`, { method: 'DELETE', headers: bearer(bob.apiKey) }), 404, 'not_found')
      const download = await fetch(`${t.url}${new URL(body.public_link).pathname}`)
      expect(await download.text()).toBe('alice only')
      // Last, so that no download is still finishing on the server when the app closes.
      const stillThere = await fetch(`${t.api}/files/${body.file_id}`, { headers: bearer(alice.apiKey) })
      expect(stillThere.status).toBe(200)
      await stillThere.arrayBuffer()
    })
  })

  describe('delete', () => {
    it('confirms, kills the link at once, removes the stored bytes, and a second delete is 404', async () => {
      const { apiKey } = await account()
      const keep = await uploadFile(t, apiKey, 'keep me')
      const blobsBefore = await t.storedBlobs()
      const { body } = await uploadFile(t, apiKey, 'delete me')
      const blobsWithFile = await t.storedBlobs()
      expect(blobsWithFile).toHaveLength(blobsBefore.length + 1)
      const linkPath = new URL(body.public_link).pathname
      expect((await fetch(`${t.url}${linkPath}`)).status).toBe(200)

      const deleted = await fetch(`${t.api}/files/${body.file_id}`, { method: 'DELETE', headers: bearer(apiKey) })
      expect(deleted.status).toBe(200)
      expect(await deleted.json()).toEqual({ success: true, message: 'File deleted.' })

      await expectError(await fetch(`${t.url}${linkPath}`), 404, 'not_found')
      const head = await fetch(`${t.url}${linkPath}`, { method: 'HEAD' })
      expect(head.status).toBe(404)
      await expectError(await fetch(`${t.api}/files/${body.file_id}`, { headers: bearer(apiKey) }), 404, 'not_found')
      await expectError(await fetch(`${t.api}/files/${body.file_id}`, { method: 'DELETE', headers: bearer(apiKey) }), 404, 'not_found')
      expect(await t.storedBlobs()).toEqual(blobsBefore)
      // The other file is untouched.
      expect(await (await fetch(`${t.url}${new URL(keep.body.public_link).pathname}`)).text()).toBe('keep me')
      expect((await list(apiKey)).files.map((file) => file.file_id)).toEqual([keep.body.file_id])
    })

    it('never reuses a file id or a link after a delete', async () => {
      const alice = await account()
      const bob = await account()
      const first = await uploadFile(t, alice.apiKey, 'one')
      const second = await uploadFile(t, alice.apiKey, 'two')
      for (const { body } of [second, first]) {
        expect((await fetch(`${t.api}/files/${body.file_id}`, { method: 'DELETE', headers: bearer(alice.apiKey) })).status).toBe(200)
      }
      const seen = [first.body.file_id, second.body.file_id]
      for (const key of [alice.apiKey, bob.apiKey]) {
        const { body } = await uploadFile(t, key, 'next')
        expect(body.file_id).toBeGreaterThan(Math.max(...seen))
        expect(body.public_link).not.toBe(first.body.public_link)
        expect(body.public_link).not.toBe(second.body.public_link)
        seen.push(body.file_id)
      }
      // The deleted ids stay dead for everyone.
      await expectError(await fetch(`${t.api}/files/${second.body.file_id}`, { headers: bearer(bob.apiKey) }), 404, 'not_found')
    })
  })

  describe('check order', () => {
    /** An account that has spent its minute: its next request is refused. */
    async function rateLimitedAccount() {
      const created = await t.createAccount('pro')
      await t.app.services.accounts.setLimits(created.accountId, { requests_per_minute: 1 })
      expect((await fetch(`${t.api}/stats`, { headers: bearer(created.apiKey) })).status).toBe(200)
      return created
    }

    it('checks authentication, then plan, then rate limits, then validation, then lookup', async () => {
      const free = await t.createAccount('free')
      const limited = await rateLimitedAccount()
      const valid = await account()
      const revoked = await t.app.services.apiKeys.create(valid.accountId, 'revoked')
      await t.app.services.apiKeys.revoke(revoked.key.id)

      const requests: { name: string; send: (headers: Record<string, string>) => Promise<Response>; invalid: string }[] = [
        { name: 'detail, malformed id', send: (headers) => fetch(`${t.api}/files/abc`, { headers }), invalid: 'invalid_parameter' },
        {
          name: 'delete, malformed id',
          send: (headers) => fetch(`${t.api}/files/-3`, { method: 'DELETE', headers }),
          invalid: 'invalid_parameter',
        },
        { name: 'list, bad limit', send: (headers) => fetch(`${t.api}/files?limit=0`, { headers }), invalid: 'invalid_parameter' },
        {
          name: 'upload, no file part',
          send: (headers) => fetch(`${t.api}/files/upload`, { method: 'POST', headers, body: fileForm('x', 'x.txt', 'other') }),
          invalid: 'missing_file',
        },
      ]
      for (const request of requests) {
        await expectError(await request.send({}), 401, 'unauthorized')
        await expectError(await request.send(bearer(revoked.apiKey)), 401, 'unauthorized')
        await expectError(await request.send(bearer(free.apiKey)), 403, 'plan_not_supported')
        await expectError(await request.send(bearer(limited.apiKey)), 429, 'rate_limited')
        await expectError(await request.send(bearer(valid.apiKey)), 400, request.invalid)
      }

      // A well-formed id that does not exist: every earlier check still wins over the 404.
      const missing = (headers: Record<string, string>) => fetch(`${t.api}/files/424242`, { headers })
      await expectError(await missing({}), 401, 'unauthorized')
      await expectError(await missing(bearer(free.apiKey)), 403, 'plan_not_supported')
      await expectError(await missing(bearer(limited.apiKey)), 429, 'rate_limited')
      await expectError(await missing(bearer(valid.apiKey)), 404, 'not_found')
    })

    it('checks validation before account limits on upload', async () => {
      const { accountId, apiKey } = await account()
      await t.app.services.accounts.setLimits(accountId, { daily_uploads: 0, max_file_size: 1 })
      const notMultipart = await fetch(`${t.api}/files/upload`, {
        method: 'POST',
        headers: { ...bearer(apiKey), 'content-type': 'application/json' },
        body: JSON.stringify({ file: 'x' }),
      })
      await expectError(notMultipart, 400, 'missing_file')
      const noFilePart = await fetch(`${t.api}/files/upload`, {
        method: 'POST',
        headers: bearer(apiKey),
        body: fileForm('x', 'x.txt', 'other'),
      })
      await expectError(noFilePart, 400, 'missing_file')
      const withFile = await fetch(`${t.api}/files/upload`, { method: 'POST', headers: bearer(apiKey), body: fileForm('too much') })
      expect(withFile.status).toBe(403)
    })
  })
})

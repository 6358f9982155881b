import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { MAX_ARCHIVE_FILES } from '../../src/services/archives.js'
import { bearer, startTestApp, TEST_STACK, unlimitedAccount, uploadFile, type TestApp } from '../helpers/test-app.js'
import { readZip } from '../helpers/zip-reader.js'

describe('POST /files/archive: several files as one ZIP', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(async () => {
    await t.close()
  })
  afterEach(() => {
    vi.restoreAllMocks()
  })

  /** Stores a file through the service the upload route uses (names as given: the service sanitises them as an upload's). */
  async function store(accountId: number, content: Buffer | string, filename: string): Promise<number> {
    const owner = { accountId, limits: { maxFileSize: 100_000_000, dailyUploads: 1_000_000 } }
    const staged = await t.app.services.files.stage(owner, Readable.from([Buffer.from(content)]), filename)
    return (await t.app.services.files.commit(staged)).id
  }

  function archive(apiKey: string, body: unknown, init: RequestInit = {}) {
    return fetch(`${t.api}/files/archive`, {
      method: 'POST',
      headers: { ...bearer(apiKey), 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...init,
    })
  }

  async function expectError(response: Response, status: number, code: string): Promise<string> {
    expect(response.status).toBe(status)
    const body = (await response.json()) as { success: boolean; error: { code: string; message: string } }
    expect(body).toMatchObject({ success: false, error: { code } })
    return body.error.message
  }

  it('streams the files in the order asked, byte for byte, stored uncompressed, with their names and the exact length', async () => {
    const { accountId, apiKey } = await unlimitedAccount(t)
    const binary = randomBytes(300_000)
    const files = [
      { name: 'photo.jpg', content: binary },
      { name: 'empty.txt', content: Buffer.alloc(0) },
      { name: 'Résumé – ünïcödé 📄.txt', content: Buffer.from('naïve café\n') },
    ]
    const ids: number[] = []
    for (const file of files) ids.push(await store(accountId, file.content, file.name))
    // Asked in another order than stored: the archive follows the request.
    const order = [ids[2]!, ids[0]!, ids[1]!]

    const response = await archive(apiKey, { ids: order })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/zip')
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="files-\d{8}-\d{6}\.zip"$/)
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    expect(response.headers.get('cache-control')).toBe('no-store')
    const body = Buffer.from(await response.arrayBuffer())
    expect(Number(response.headers.get('content-length'))).toBe(body.length)

    const { entries, zip64 } = await readZip(body)
    expect(zip64).toBe(false)
    expect(entries.map((entry) => entry.name)).toEqual([files[2]!.name, files[0]!.name, files[1]!.name])
    expect(entries[0]!.data.equals(files[2]!.content)).toBe(true)
    expect(entries[1]!.data.equals(binary)).toBe(true)
    expect(entries[2]!.data.length).toBe(0)
    for (const entry of entries) {
      expect(entry.compressionMethod, entry.name).toBe(0)
      expect(entry.utf8, entry.name).toBe(true)
    }
    // The upload time, to the DOS format's two seconds (yazl adds the exact time in an extra field).
    const uploaded = (await t.app.services.files.get(accountId, ids[0]!)).created_at
    expect(Math.abs(entries[1]!.modified.getTime() - uploaded)).toBeLessThan(2_000)
  })

  it('gives duplicate names deterministic suffixes, compared without case, and makes hostile names plain names', async () => {
    const { accountId, apiKey } = await unlimitedAccount(t)
    const ids = [
      await store(accountId, 'one', 'a.txt'),
      await store(accountId, 'two', 'A.txt'),
      await store(accountId, 'three', 'a.txt'),
      await store(accountId, 'four', 'a (2).txt'),
      await store(accountId, 'five', '..'),
      await store(accountId, 'six', 'C:evil.bat'),
      await store(accountId, 'seven', '../../etc/passwd'),
      await store(accountId, 'eight', 'bell\u0007\u202Etxt.exe'),
    ]
    const names = ['a.txt', 'A (3).txt', 'a (4).txt', 'a (2).txt', '__', 'C_evil.bat', 'passwd', 'belltxt.exe']
    for (let round = 0; round < 2; round++) {
      const response = await archive(apiKey, { ids })
      expect(response.status).toBe(200)
      const { entries } = await readZip(Buffer.from(await response.arrayBuffer()))
      expect(entries.map((entry) => entry.name)).toEqual(names)
      expect(entries.map((entry) => entry.data.toString())).toEqual(['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'])
    }
  })

  it("refuses the whole call with 404 naming the first id that is missing or another account's, before any byte", async () => {
    const { accountId, apiKey } = await unlimitedAccount(t)
    const other = await unlimitedAccount(t)
    const mine = await store(accountId, 'mine', 'mine.txt')
    const theirs = await store(other.accountId, 'theirs', 'theirs.txt')
    const get = vi.spyOn(t.app.blobStore, 'get')

    const message = await expectError(await archive(apiKey, { ids: [mine, theirs, 999_999_999] }), 404, 'not_found')
    expect(message).toBe(`No file with id ${theirs} (and 1 more).`)
    expect(await expectError(await archive(apiKey, { ids: [999_999_998, mine] }), 404, 'not_found')).toBe('No file with id 999999998.')
    // A deleted file is gone too.
    await t.app.services.files.delete(accountId, mine)
    await expectError(await archive(apiKey, { ids: [mine] }), 404, 'not_found')
    expect(get).not.toHaveBeenCalled()
  })

  it('validates the body: 1 to the maximum of distinct positive integer ids, nothing else', async () => {
    const { accountId, apiKey } = await unlimitedAccount(t)
    const id = await store(accountId, 'x', 'x.txt')
    for (const body of [
      {},
      { ids: [] },
      { ids: [id, id] },
      { ids: [0] },
      { ids: ['1'] },
      { ids: [1.5] },
      { ids: Array.from({ length: MAX_ARCHIVE_FILES + 1 }, (_, i) => i + 1) },
      { ids: [id], extra: true },
    ]) {
      await expectError(await archive(apiKey, body), 400, 'invalid_parameter')
    }
    const notJson = await fetch(`${t.api}/files/archive`, {
      method: 'POST',
      headers: { ...bearer(apiKey), 'content-type': 'application/json' },
      body: '[',
    })
    await expectError(notJson, 400, 'invalid_request')
  })

  it('takes the maximum number of files in one call (a fifth of it on the scale-out stack)', async () => {
    const { accountId, apiKey } = await unlimitedAccount(t)
    // Each stored file is opened in turn: a thousand S3 objects on s3rver took two minutes with their
    // uploads, so the scale-out stack takes 200 (the 64 KiB central directory is tested in test/services/archives.test.ts).
    const count = TEST_STACK === 'embedded' ? MAX_ARCHIVE_FILES : 200
    const ids: number[] = new Array<number>(count)
    for (let start = 0; start < count; start += 20) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, k) => {
          ids[start + k] = await store(accountId, `${start + k}`, 'same.txt')
        }),
      )
    }
    const response = await archive(apiKey, { ids })
    expect(response.status).toBe(200)
    const { entries } = await readZip(Buffer.from(await response.arrayBuffer()))
    expect(entries).toHaveLength(count)
    expect(entries[0]!.name).toBe('same.txt')
    expect(entries[count - 1]!.name).toBe(`same (${count}).txt`)
    expect(entries.map((entry) => entry.data.toString())).toEqual(ids.map((_, i) => `${i}`))
  }, 120_000)

  it('needs both files:read and links:write: a key without either gets 403 insufficient_scope naming it, uncounted', async () => {
    const { accountId } = await unlimitedAccount(t)
    const id = await store(accountId, 'x', 'x.txt')
    const keyWith = async (scopes: string[]) => (await t.app.services.apiKeys.create(accountId, scopes.join(' '), { scopes })).apiKey

    const writeOnly = await archive(await keyWith(['files:write', 'files:delete', 'links:write']), { ids: [id] })
    expect(writeOnly.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="files:read"')
    await expectError(writeOnly, 403, 'insufficient_scope')

    // files:read alone reads metadata only (keys-and-audit.md): a read-only key does not get the files' bytes.
    const readOnly = await archive(await keyWith(['files:read']), { ids: [id] })
    expect(readOnly.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="links:write"')
    // A refusal for the scope counts against no rate limit, as the route's own scope check does.
    expect(readOnly.headers.get('ratelimit-remaining')).toBeNull()
    expect(readOnly.status).toBe(403)
    const body = (await readOnly.json()) as { error: { code: string; message: string; required_scope: string } }
    expect(body.error).toMatchObject({ code: 'insufficient_scope', required_scope: 'links:write' })
    expect(body.error.message).toContain('links:write')
    // Neither does a key that reads files and links but cannot make them.
    const readBoth = await archive(await keyWith(['files:read', 'links:read']), { ids: [id] })
    await expectError(readBoth, 403, 'insufficient_scope')

    const allowed = await archive(await keyWith(['files:read', 'links:write']), { ids: [id] })
    expect(allowed.status).toBe(200)
    expect(allowed.headers.get('ratelimit-remaining')).not.toBeNull()
    const { entries } = await readZip(Buffer.from(await allowed.arrayBuffer()))
    expect(entries.map((entry) => [entry.name, entry.data.toString()])).toEqual([['x.txt', 'x']])
  })

  it('a first file whose stored bytes are missing is a clean 500 internal_error, not a 200 cut after its headers', async () => {
    const { accountId, apiKey } = await unlimitedAccount(t)
    const gone = await store(accountId, randomBytes(1000), 'gone.bin')
    const other = await store(accountId, 'other', 'other.txt')
    await t.app.blobStore.delete((await t.app.services.files.get(accountId, gone)).storage_key)
    const response = await archive(apiKey, { ids: [gone, other] })
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    expect(response.headers.get('content-disposition')).toBeNull()
    await expectError(response, 500, 'internal_error')
    // The server goes on answering, and an archive without that file works.
    const again = await archive(apiKey, { ids: [other] })
    expect(again.status).toBe(200)
    await again.arrayBuffer()
  })

  it('counts no download and one request', async () => {
    const { accountId, apiKey } = await unlimitedAccount(t)
    const id = await store(accountId, 'x', 'x.txt')
    const response = await archive(apiKey, { ids: [id] })
    const remaining = Number(response.headers.get('ratelimit-remaining'))
    await response.arrayBuffer()
    const next = await fetch(`${t.api}/files/${id}`, { headers: bearer(apiKey) })
    expect(Number(next.headers.get('ratelimit-remaining'))).toBe(remaining - 1)
    expect(((await next.json()) as { file: { download_count: number } }).file.download_count).toBe(0)
  })

  it('a client that goes away mid-stream: the open stored file is closed and no later one is opened', async () => {
    const { accountId, apiKey } = await unlimitedAccount(t)
    const big = await store(accountId, randomBytes(4 * 1024 * 1024), 'big.bin')
    const after = await store(accountId, 'after', 'after.txt')
    const opened: Readable[] = []
    const realGet = t.app.blobStore.get.bind(t.app.blobStore)
    vi.spyOn(t.app.blobStore, 'get').mockImplementation(async (key, range) => {
      const body = await realGet(key, range)
      opened.push(body)
      return body
    })

    const controller = new AbortController()
    const response = await archive(apiKey, { ids: [big, after] }, { signal: controller.signal })
    expect(response.status).toBe(200)
    const reader = response.body!.getReader()
    await reader.read()
    controller.abort()
    await expect(reader.read()).rejects.toThrow()

    await vi.waitFor(() => {
      expect(opened).toHaveLength(1)
      expect(opened[0]!.destroyed).toBe(true)
    })
    // Time for a wrongly opened second file to show up.
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(opened).toHaveLength(1)
  })

  it('a stored file that breaks off mid-stream cuts the connection: the client never gets a complete-looking archive', async () => {
    const { accountId, apiKey } = await unlimitedAccount(t)
    const first = await store(accountId, randomBytes(256 * 1024), 'first.bin')
    const second = await store(accountId, randomBytes(256 * 1024), 'second.bin')
    const secondKey = (await t.app.services.files.get(accountId, second)).storage_key
    const realGet = t.app.blobStore.get.bind(t.app.blobStore)
    vi.spyOn(t.app.blobStore, 'get').mockImplementation(async (key, range) => {
      if (key !== secondKey) return realGet(key, range)
      // 64 KiB of the file's 256, then the store fails (a disk error, S3 dropping the connection).
      let sent = false
      return new Readable({
        read() {
          if (sent) return
          sent = true
          this.push(Buffer.alloc(64 * 1024))
          setImmediate(() => this.destroy(new Error('the store broke off')))
        },
      })
    })

    const response = await archive(apiKey, { ids: [first, second] })
    expect(response.status).toBe(200)
    const declared = Number(response.headers.get('content-length'))
    expect(declared).toBeGreaterThan(512 * 1024)
    await expect(response.arrayBuffer()).rejects.toThrow()
    // The server goes on answering.
    const again = await fetch(`${t.api}/files/${first}`, { headers: bearer(apiKey) })
    expect(again.status).toBe(200)
    await again.arrayBuffer()
  })

  it('holds what an upload over HTTP stored', async () => {
    const { apiKey } = await unlimitedAccount(t)
    const content = randomBytes(70_000)
    const { body: uploaded } = await uploadFile(t, apiKey, content, 'over-http.bin')
    const response = await archive(apiKey, { ids: [uploaded.file_id] })
    const { entries } = await readZip(Buffer.from(await response.arrayBuffer()))
    expect(entries.map((entry) => entry.name)).toEqual(['over-http.bin'])
    expect(entries[0]!.data.equals(content)).toBe(true)
  })
})

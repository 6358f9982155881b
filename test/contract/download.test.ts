import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'
import { sha256Hex } from '../../src/lib/sha256-hex.js'

interface Uploaded {
  fileId: number
  /** Path of the public link on this server: /download/<token> */
  downloadPath: string
}

async function upload(t: TestApp, apiKey: string, content: string, filename: string): Promise<Uploaded> {
  const { response, body } = await uploadFile(t, apiKey, content, filename)
  expect(response.status).toBe(201)
  return { fileId: body.file_id, downloadPath: new URL(body.public_link).pathname }
}

async function downloadCount(t: TestApp, apiKey: string, fileId: number): Promise<number> {
  const response = await fetch(`${t.api}/files/${fileId}`, { headers: bearer(apiKey) })
  return ((await response.json()) as { file: { download_count: number } }).file.download_count
}

async function expectJsonError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  expect(await response.json()).toEqual({ success: false, error: { code, message: expect.any(String) } })
}

describe('GET and HEAD /download/<token>', () => {
  const content = 'Hello, download world!' // 22 bytes
  let t: TestApp
  let apiKey: string
  let file: Uploaded

  beforeAll(async () => {
    t = await startTestApp()
    ;({ apiKey } = await t.createAccount('pro'))
    file = await upload(t, apiKey, content, 'greeting.txt')
  })
  afterAll(async () => {
    await t.close()
  })

  const get = (downloadPath: string, headers: Record<string, string> = {}) => fetch(`${t.url}${downloadPath}`, { headers })
  const head = (downloadPath: string, headers: Record<string, string> = {}) => fetch(`${t.url}${downloadPath}`, { method: 'HEAD', headers })

  describe('whole file', () => {
    it('GET needs no authentication and streams the bytes with the full set of headers', async () => {
      const response = await get(file.downloadPath)
      expect(response.status).toBe(200)
      expect(await response.text()).toBe(content)
      const headers = response.headers
      expect(headers.get('content-length')).toBe(String(content.length))
      expect(headers.get('content-type')).toMatch(/^text\/plain/)
      expect(headers.get('etag')).toBe(`"${sha256Hex(content)}"`)
      const lastModified = headers.get('last-modified')!
      expect(lastModified).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/)
      expect(Math.abs(Date.parse(lastModified) - Date.now())).toBeLessThan(5 * 60_000)
      expect(headers.get('accept-ranges')).toBe('bytes')
      expect(headers.get('content-disposition')).toBe('attachment; filename="greeting.txt"')
      expect(headers.get('x-content-type-options')).toBe('nosniff')
      expect(headers.get('content-security-policy')).toBe('sandbox')
    })

    it('GET with an API key works the same (the key is simply not needed)', async () => {
      const response = await get(file.downloadPath, bearer(apiKey))
      expect(response.status).toBe(200)
      expect(await response.text()).toBe(content)
    })

    it('HEAD answers the same headers without a body', async () => {
      const [full, response] = [await get(file.downloadPath), await head(file.downloadPath)]
      await full.arrayBuffer()
      expect(response.status).toBe(200)
      expect(await response.text()).toBe('')
      for (const name of [
        'content-length',
        'content-type',
        'etag',
        'last-modified',
        'accept-ranges',
        'content-disposition',
        'x-content-type-options',
        'content-security-policy',
      ]) {
        expect(response.headers.get(name), name).toBe(full.headers.get(name))
      }
    })

    it('offers a non-ASCII name as an ASCII fallback plus an RFC 5987 filename*', async () => {
      const named = await upload(t, apiKey, 'résumé', 'Résumé naïve €.txt')
      const disposition = (await get(named.downloadPath)).headers.get('content-disposition')!
      expect(disposition).toMatch(/^attachment; /)
      const fallback = /filename="([^"]*)"/.exec(disposition)?.[1]
      expect(fallback).toBeDefined()
      expect(fallback).toMatch(/^[\x20-\x7e]+$/)
      expect(fallback).toMatch(/^Resume naive .\.txt$/)
      expect(disposition).toContain(`filename*=UTF-8''${encodeURIComponent('Résumé naïve €.txt')}`)
    })

    it('keeps quotes and backslashes of a name from breaking the header', async () => {
      const named = await upload(t, apiKey, 'x', 'say "hi" \\ there.txt')
      const disposition = (await get(named.downloadPath)).headers.get('content-disposition')!
      expect(disposition).toMatch(/^attachment; filename="(?:[^"\\]|\\.)*"(; filename\*=UTF-8''[A-Za-z0-9%!#$&+.^_`|~*'()-]+)?$/)
    })

    it.each([
      ['page.html', /^text\/html/],
      ['image.svg', /^image\/svg\+xml/],
      ['script.js', /javascript/],
    ])('serves %s as an attachment, sandboxed and unsniffed, never inline', async (filename, type) => {
      const active = await upload(t, apiKey, '<script>alert(document.cookie)</script>', filename)
      for (const response of [await get(active.downloadPath), await head(active.downloadPath)]) {
        expect(response.headers.get('content-type')).toMatch(type)
        expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${filename}"`)
        expect(response.headers.get('content-security-policy')).toBe('sandbox')
        expect(response.headers.get('x-content-type-options')).toBe('nosniff')
        await response.arrayBuffer()
      }
    })

    it('serves a zero-byte file', async () => {
      const empty = await upload(t, apiKey, '', 'empty.txt')
      const response = await get(empty.downloadPath)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-length')).toBe('0')
      expect(response.headers.get('etag')).toBe(`"${sha256Hex('')}"`)
      expect(await response.text()).toBe('')
    })
  })

  describe('ranges', () => {
    it('answers 206 with Content-Range for a closed range', async () => {
      const response = await get(file.downloadPath, { range: 'bytes=0-4' })
      expect(response.status).toBe(206)
      expect(response.headers.get('content-range')).toBe(`bytes 0-4/${content.length}`)
      expect(response.headers.get('content-length')).toBe('5')
      expect(await response.text()).toBe('Hello')
      for (const name of ['etag', 'content-disposition', 'x-content-type-options', 'content-security-policy']) {
        expect(response.headers.get(name), name).not.toBeNull()
      }
    })

    it('serves a range in the middle, both ends inclusive', async () => {
      const response = await get(file.downloadPath, { range: 'bytes=7-14' })
      expect(response.status).toBe(206)
      expect(response.headers.get('content-range')).toBe(`bytes 7-14/${content.length}`)
      expect(await response.text()).toBe(content.slice(7, 15))
    })

    it('serves a suffix range (the last N bytes)', async () => {
      const response = await get(file.downloadPath, { range: 'bytes=-6' })
      expect(response.status).toBe(206)
      expect(response.headers.get('content-range')).toBe(`bytes 16-21/${content.length}`)
      expect(response.headers.get('content-length')).toBe('6')
      expect(await response.text()).toBe('world!')
    })

    it('serves an open-ended range (from N to the end)', async () => {
      const response = await get(file.downloadPath, { range: 'bytes=7-' })
      expect(response.status).toBe(206)
      expect(response.headers.get('content-range')).toBe(`bytes 7-21/${content.length}`)
      expect(await response.text()).toBe(content.slice(7))
    })

    it('clamps a range that runs past the end', async () => {
      const response = await get(file.downloadPath, { range: 'bytes=20-1000' })
      expect(response.status).toBe(206)
      expect(response.headers.get('content-range')).toBe(`bytes 20-21/${content.length}`)
      expect(await response.text()).toBe('d!')
    })

    it('answers HEAD with a range as 206 with the range headers and no body', async () => {
      const response = await head(file.downloadPath, { range: 'bytes=0-4' })
      expect(response.status).toBe(206)
      expect(response.headers.get('content-range')).toBe(`bytes 0-4/${content.length}`)
      expect(response.headers.get('content-length')).toBe('5')
      expect(await response.text()).toBe('')
    })

    it('clamps or refuses bounds of any length, never failing on them', async () => {
      const nines = '9'.repeat(400)
      const clamped = await get(file.downloadPath, { range: `bytes=0-${nines}` })
      expect(clamped.status).toBe(206)
      expect(clamped.headers.get('content-range')).toBe(`bytes 0-${content.length - 1}/${content.length}`)
      expect(await clamped.text()).toBe(content)
      const suffix = await get(file.downloadPath, { range: `bytes=-${nines}` })
      expect(suffix.status).toBe(206)
      expect(await suffix.text()).toBe(content)
      const beyond = await get(file.downloadPath, { range: `bytes=${nines}-` })
      expect(beyond.headers.get('content-range')).toBe(`bytes */${content.length}`)
      await expectJsonError(beyond, 416, 'range_not_satisfiable')
    })

    it.each(['bytes=100-200', `bytes=${content.length}-`])(
      'answers an unsatisfiable range (%s) with 416, a JSON error and Content-Range bytes */size',
      async (range) => {
        const response = await get(file.downloadPath, { range })
        expect(response.headers.get('content-range')).toBe(`bytes */${content.length}`)
        await expectJsonError(response, 416, 'range_not_satisfiable')
      },
    )

    it('serves the whole file for a malformed Range header', async () => {
      const response = await get(file.downloadPath, { range: 'pages=1-2' })
      expect(response.status).toBe(200)
      expect(await response.text()).toBe(content)
    })
  })

  // fetch() sends `Cache-Control: no-cache` with every conditional request; the validators still decide.
  describe('conditional requests', () => {
    it('answers If-None-Match with the ETag with 304 and no body', async () => {
      const etag = (await head(file.downloadPath)).headers.get('etag')!
      const response = await get(file.downloadPath, { 'if-none-match': etag })
      expect(response.status).toBe(304)
      expect(await response.text()).toBe('')
      expect(response.headers.get('etag')).toBe(etag)
    })

    it('answers If-None-Match listing the ETag among others with 304', async () => {
      const etag = (await head(file.downloadPath)).headers.get('etag')!
      const response = await get(file.downloadPath, { 'if-none-match': `"0000", ${etag}` })
      expect(response.status).toBe(304)
    })

    it('answers a different If-None-Match with 200 and the bytes', async () => {
      const response = await get(file.downloadPath, { 'if-none-match': `"${sha256Hex('something else')}"` })
      expect(response.status).toBe(200)
      expect(await response.text()).toBe(content)
    })

    it('answers If-Modified-Since at or after Last-Modified with 304, and an earlier date with 200', async () => {
      const lastModified = (await head(file.downloadPath)).headers.get('last-modified')!
      expect((await get(file.downloadPath, { 'if-modified-since': lastModified })).status).toBe(304)
      const later = new Date(Date.parse(lastModified) + 3_600_000).toUTCString()
      expect((await get(file.downloadPath, { 'if-modified-since': later })).status).toBe(304)
      const earlier = new Date(Date.parse(lastModified) - 3_600_000).toUTCString()
      const response = await get(file.downloadPath, { 'if-modified-since': earlier })
      expect(response.status).toBe(200)
      expect(await response.text()).toBe(content)
    })

    it('still answers 304 when the request also says Cache-Control: no-cache', async () => {
      const etag = (await head(file.downloadPath)).headers.get('etag')!
      const response = await get(file.downloadPath, { 'if-none-match': etag, 'cache-control': 'no-cache', pragma: 'no-cache' })
      expect(response.status).toBe(304)
    })

    it('answers HEAD with If-None-Match with 304', async () => {
      const etag = (await head(file.downloadPath)).headers.get('etag')!
      expect((await head(file.downloadPath, { 'if-none-match': etag })).status).toBe(304)
    })
  })

  describe('download_count', () => {
    it('counts each GET whose body starts at byte 0, and nothing else', async () => {
      const counted = await upload(t, apiKey, content, 'counted.txt')
      const etag = `"${sha256Hex(content)}"`
      const step = async (request: Promise<Response>, expectedStatus: number, expectedCount: number) => {
        const response = await request
        expect(response.status).toBe(expectedStatus)
        await response.arrayBuffer()
        expect(await downloadCount(t, apiKey, counted.fileId)).toBe(expectedCount)
      }
      expect(await downloadCount(t, apiKey, counted.fileId)).toBe(0)
      await step(get(counted.downloadPath), 200, 1)
      await step(get(counted.downloadPath, { range: 'bytes=0-4' }), 206, 2)
      await step(get(counted.downloadPath, { range: 'bytes=0-' }), 206, 3)
      // A suffix longer than the file starts at byte 0 too.
      await step(get(counted.downloadPath, { range: 'bytes=-1000' }), 206, 4)
      // Not counted: ranges that start later, HEAD, 304, 416.
      await step(get(counted.downloadPath, { range: 'bytes=5-9' }), 206, 4)
      await step(get(counted.downloadPath, { range: 'bytes=7-' }), 206, 4)
      await step(get(counted.downloadPath, { range: 'bytes=-3' }), 206, 4)
      await step(head(counted.downloadPath), 200, 4)
      await step(head(counted.downloadPath, { range: 'bytes=0-4' }), 206, 4)
      await step(get(counted.downloadPath, { 'if-none-match': etag }), 304, 4)
      await step(get(counted.downloadPath, { range: 'bytes=500-' }), 416, 4)
      await step(get(counted.downloadPath), 200, 5)
    })

    it('counts concurrent downloads exactly', async () => {
      const counted = await upload(t, apiKey, content, 'popular.txt')
      const responses = await Promise.all(Array.from({ length: 10 }, () => get(counted.downloadPath)))
      for (const response of responses) expect(await response.text()).toBe(content)
      expect(await downloadCount(t, apiKey, counted.fileId)).toBe(10)
    })
  })

  describe('unknown links', () => {
    it('answers an unknown token with a JSON 404', async () => {
      await expectJsonError(await get('/download/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), 404, 'not_found')
    })

    it('answers a malformed token with a JSON 404', async () => {
      await expectJsonError(await get('/download/not..a..token'), 404, 'not_found')
      // Longer than any token we issue, and longer than a router's default parameter limit.
      await expectJsonError(await get(`/download/${'x'.repeat(65)}`), 404, 'not_found')
      await expectJsonError(await get(`/download/${'x'.repeat(200)}`), 404, 'not_found')
      await expectJsonError(await get(`/download/${'x'.repeat(1000)}`), 404, 'not_found')
    })

    it('answers HEAD of an unknown token with 404', async () => {
      expect((await head('/download/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).status).toBe(404)
    })

    it('answers the link of a deleted file with a JSON 404', async () => {
      const doomed = await upload(t, apiKey, 'soon gone', 'doomed.txt')
      expect((await get(doomed.downloadPath)).status).toBe(200)
      const deleted = await fetch(`${t.api}/files/${doomed.fileId}`, { method: 'DELETE', headers: bearer(apiKey) })
      expect(deleted.status).toBe(200)
      await expectJsonError(await get(doomed.downloadPath), 404, 'not_found')
      expect((await head(doomed.downloadPath)).status).toBe(404)
    })
  })
})

describe('per-IP download limit', () => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  async function appWithFile(env: Record<string, string>) {
    t = await startTestApp({ FILESHARE_DOWNLOADS_PER_MINUTE: '3', ...env })
    const { apiKey } = await t.createAccount('pro')
    const { downloadPath } = await upload(t, apiKey, 'limited', 'limited.txt')
    const app = t
    return (headers: Record<string, string> = {}) => fetch(`${app.url}${downloadPath}`, { headers })
  }

  async function expectRateLimited(response: Response) {
    await expectJsonError(response, 429, 'rate_limited')
    const retryAfter = Number(response.headers.get('retry-after'))
    expect(Number.isInteger(retryAfter)).toBe(true)
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
  }

  it('answers the download past the limit with 429 rate_limited and Retry-After', async () => {
    const download = await appWithFile({})
    for (let i = 0; i < 3; i++) {
      const response = await download()
      expect(response.status).toBe(200)
      expect(await response.text()).toBe('limited')
    }
    await expectRateLimited(await download())
  })

  it('lets exactly the limit of a concurrent burst through', async () => {
    const download = await appWithFile({})
    const responses = await Promise.all(Array.from({ length: 8 }, () => download()))
    const statuses = responses.map((response) => response.status).sort()
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429])
    await Promise.all(responses.map((response) => response.arrayBuffer()))
  })

  it('with FILESHARE_TRUST_PROXY=true, limits each X-Forwarded-For client on its own', async () => {
    const download = await appWithFile({ FILESHARE_TRUST_PROXY: 'true' })
    const first = { 'x-forwarded-for': '203.0.113.7' }
    const second = { 'x-forwarded-for': '198.51.100.23' }
    for (let i = 0; i < 3; i++) expect((await download(first)).status).toBe(200)
    await expectRateLimited(await download(first))
    // Another client behind the same proxy still has its whole budget.
    for (let i = 0; i < 3; i++) expect((await download(second)).status).toBe(200)
    await expectRateLimited(await download(second))
  })

  it('by default ignores X-Forwarded-For: the connection address is the client', async () => {
    const download = await appWithFile({})
    for (let i = 0; i < 3; i++) expect((await download({ 'x-forwarded-for': `203.0.113.${i + 1}` })).status).toBe(200)
    // A forged header does not buy a fresh budget.
    await expectRateLimited(await download({ 'x-forwarded-for': '198.51.100.99' }))
    await expectRateLimited(await download())
  })
})

import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, fileForm, startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'

const DOWNLOAD_URL = 'http://dl.example.test'
const CONTENT = 'user content that must stay off the main origin'

interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

/** fetch() ignores a Host header, so requests "to" the download host go through node:http. */
function send(
  t: TestApp,
  method: string,
  path: string,
  options: { host?: string; headers?: Record<string, string>; body?: Buffer } = {},
): Promise<Answer> {
  const { port } = new URL(t.url)
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, method, path, headers: { ...options.headers, ...(options.host ? { host: options.host } : {}) } },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () =>
          resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString() }),
        )
        response.on('error', reject)
      },
    )
    request.on('error', reject)
    request.end(options.body)
  })
}

function expectNotFound(answer: Answer) {
  expect(answer.status).toBe(404)
  expect(answer.headers['content-type']).toMatch(/^application\/json/)
  expect(JSON.parse(answer.body)).toEqual({ success: false, error: { code: 'not_found', message: expect.any(String) } })
}

describe('FILESHARE_DOWNLOAD_URL: a separate origin for user content', () => {
  let t: TestApp
  let apiKey: string
  let fileId: number
  let publicLink: string
  let downloadPath: string

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_DOWNLOAD_URL: `${DOWNLOAD_URL}/` })
    ;({ apiKey } = await t.createAccount('pro'))
    const { response, body } = await uploadFile(t, apiKey, CONTENT, 'page.html')
    expect(response.status).toBe(201)
    fileId = body.file_id
    publicLink = body.public_link
    downloadPath = new URL(publicLink).pathname
  })
  afterAll(async () => {
    await t.close()
  })

  it('public_link of upload, list and details is built on the download URL, not the public URL', async () => {
    expect(publicLink).toMatch(/^http:\/\/dl\.example\.test\/download\/[A-Za-z0-9_-]+$/)
    const list = (await (await fetch(`${t.api}/files`, { headers: bearer(apiKey) })).json()) as { files: Array<{ public_link: string }> }
    expect(list.files.map((file) => file.public_link)).toEqual([publicLink])
    const details = (await (await fetch(`${t.api}/files/${fileId}`, { headers: bearer(apiKey) })).json()) as {
      file: { public_link: string }
    }
    expect(details.file.public_link).toBe(publicLink)
  })

  describe('on the download host', () => {
    it('GET and HEAD /download/<token> serve the file with the usual safety headers', async () => {
      const got = await send(t, 'GET', downloadPath, { host: 'dl.example.test' })
      expect(got.status).toBe(200)
      expect(got.body).toBe(CONTENT)
      expect(got.headers['content-disposition']).toMatch(/^attachment/)
      expect(got.headers['x-content-type-options']).toBe('nosniff')
      expect(got.headers['content-security-policy']).toBe('sandbox')
      const head = await send(t, 'HEAD', downloadPath, { host: 'dl.example.test' })
      expect(head.status).toBe(200)
      expect(head.headers['content-length']).toBe(String(CONTENT.length))
      expect(head.body).toBe('')
    })

    it('an unknown token is the usual JSON 404', async () => {
      expectNotFound(await send(t, 'GET', '/download/nope', { host: 'dl.example.test' }))
    })

    it('the host name matches in any letter case, with any port and with a trailing dot', async () => {
      for (const host of ['DL.Example.TEST', 'dl.example.test:8080', 'dl.example.test.']) {
        expect((await send(t, 'GET', downloadPath, { host })).status).toBe(200)
        expectNotFound(await send(t, 'GET', '/api/v1/stats', { host, headers: bearer(apiKey) }))
      }
    })

    it('/healthz and /readyz answer', async () => {
      expect((await send(t, 'GET', '/healthz', { host: 'dl.example.test' })).status).toBe(200)
      const ready = await send(t, 'GET', '/readyz', { host: 'dl.example.test' })
      expect(ready.status).toBe(200)
      expect(JSON.parse(ready.body)).toMatchObject({ success: true })
    })

    it('the API answers 404 even with a valid key, and a delete sent there deletes nothing', async () => {
      for (const path of ['/api/v1/stats', '/api/v1/files', `/api/v1/files/${fileId}`, '/api/v1/openapi.json']) {
        expectNotFound(await send(t, 'GET', path, { host: 'dl.example.test', headers: bearer(apiKey) }))
        expect((await send(t, 'HEAD', path, { host: 'dl.example.test', headers: bearer(apiKey) })).status).toBe(404)
      }
      expectNotFound(await send(t, 'DELETE', `/api/v1/files/${fileId}`, { host: 'dl.example.test', headers: bearer(apiKey) }))
      const details = await fetch(`${t.api}/files/${fileId}`, { headers: bearer(apiKey) })
      expect(details.status).toBe(200)
    })

    it('an upload sent there is refused with 404 and stores nothing', async () => {
      const blobsBefore = await t.storedBlobs()
      const encoded = new Response(fileForm('should not be stored', 'x.txt'))
      const answer = await send(t, 'POST', '/api/v1/files/upload', {
        host: 'dl.example.test',
        headers: { ...bearer(apiKey), 'content-type': encoded.headers.get('content-type')! },
        body: Buffer.from(await encoded.arrayBuffer()),
      })
      expectNotFound(answer)
      expect(await t.storedBlobs()).toEqual(blobsBefore)
      const stats = (await (await fetch(`${t.api}/stats`, { headers: bearer(apiKey) })).json()) as { stats: { total_files: number } }
      expect(stats.stats.total_files).toBe(1)
    })

    it("a link's counted POST and its grant URL are served there (links.md)", async () => {
      const granted = await send(t, 'POST', downloadPath, { host: 'dl.example.test' })
      expect(granted.status).toBe(303)
      const grantPath = new URL(String(granted.headers.location)).pathname
      expect((await send(t, 'GET', grantPath, { host: 'dl.example.test' })).status).toBe(200)
    })

    it('other methods on /download/<token> and unknown paths answer 404', async () => {
      expectNotFound(await send(t, 'DELETE', downloadPath, { host: 'dl.example.test' }))
      expectNotFound(await send(t, 'PUT', downloadPath, { host: 'dl.example.test' }))
      expectNotFound(await send(t, 'GET', '/', { host: 'dl.example.test' }))
      expectNotFound(await send(t, 'GET', '/dashboard', { host: 'dl.example.test' }))
    })
  })

  describe('on any other host', () => {
    it('the API works as usual', async () => {
      const answer = await send(t, 'GET', '/api/v1/stats', { host: 'files.example.test', headers: bearer(apiKey) })
      expect(answer.status).toBe(200)
      expect((await fetch(`${t.api}/stats`, { headers: bearer(apiKey) })).status).toBe(200)
    })

    it('/download/<token> keeps working, so links handed out before the download URL was set do not break', async () => {
      const answer = await send(t, 'GET', downloadPath, { host: 'files.example.test' })
      expect(answer.status).toBe(200)
      expect(answer.body).toBe(CONTENT)
      expect(answer.headers['content-security-policy']).toBe('sandbox')
    })
  })
})

describe('without FILESHARE_DOWNLOAD_URL', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(async () => {
    await t.close()
  })

  it('no host is restricted: the API answers on every host name', async () => {
    const { apiKey } = await t.createAccount('pro')
    const answer = await send(t, 'GET', '/api/v1/stats', { host: 'dl.example.test', headers: bearer(apiKey) })
    expect(answer.status).toBe(200)
  })
})

describe('FILESHARE_DOWNLOAD_URL behind a trusted proxy', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_DOWNLOAD_URL: DOWNLOAD_URL, FILESHARE_TRUST_PROXY: 'true' })
  })
  afterAll(async () => {
    await t.close()
  })

  it('the host comes from X-Forwarded-Host, as the proxy saw it', async () => {
    const { apiKey } = await t.createAccount('pro')
    const headers = { ...bearer(apiKey), 'x-forwarded-host': 'dl.example.test' }
    expectNotFound(await send(t, 'GET', '/api/v1/stats', { host: 'backend.internal', headers }))
    const elsewhere = { ...bearer(apiKey), 'x-forwarded-host': 'files.example.test' }
    expect((await send(t, 'GET', '/api/v1/stats', { host: 'dl.example.test', headers: elsewhere })).status).toBe(200)
  })
})

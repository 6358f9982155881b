// The built ESM in Chromium (playwright-core, Debian's /usr/bin/chromium-headless-shell), on a page
// of another origin than the server: the API sends CORS headers on all of /api/v1 (any origin,
// preflights without a key), so the SDK calls the launcher's server cross-origin directly. A File is
// uploaded with progress (multipart, then resumably), then listed, read, counted in stats and deleted.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { server } from './helpers/env.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium-headless-shell'
const root = fileURLToPath(new URL('..', import.meta.url))
const types: Record<string, string> = { '.js': 'text/javascript', '.html': 'text/html' }

const PAGE = `<!doctype html><html><head><meta charset="utf-8">
<script type="importmap">{ "imports": { "@noble/hashes/": "/noble/" } }</script>
</head><body>fileshare sdk test</body></html>`

let site: Server
let origin: string
let browser: Browser

function serveFile(res: import('node:http').ServerResponse, file: string) {
  if (!existsSync(file)) {
    res.writeHead(404).end()
    return
  }
  res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file))
}

beforeAll(async () => {
  // The page and the SDK come from this server; the API is the launcher's, on another origin.
  site = createServer((req, res) => {
    const url = req.url ?? '/'
    if (url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE)
    if (url.startsWith('/sdk/')) return serveFile(res, path.join(root, 'dist', path.normalize(url.slice(5))))
    if (url.startsWith('/noble/')) return serveFile(res, path.join(root, 'node_modules/@noble/hashes', path.normalize(url.slice(7))))
    res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(site.address() as { port: number }).port}`
  expect(new URL(server().base_url).origin).not.toBe(origin)
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => site?.close(resolve))
})

interface PageResult {
  file: { file_id: number; size: number; sha256: string; filename: string }
  progress: [number, number | null][]
}

describe.skipIf(!existsSync(CHROMIUM))('in Chromium', () => {
  it('uploads a File with progress (multipart and resumably), lists, reads, counts and deletes it, all cross-origin', async () => {
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(origin)
    // A string, not a function: Vitest would rewrite a dynamic import inside a function.
    const run = (args: { baseUrl: string; apiKey: string; resumable: boolean; size: number }) =>
      page.evaluate(`(async ({ baseUrl, apiKey, resumable, size }) => {
        const { Fileshare } = await import('/sdk/index.js')
        const bytes = new Uint8Array(size)
        for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) & 0xff
        const file = new File([bytes], 'from-browser.bin', { type: 'application/octet-stream' })
        const client = new Fileshare({ baseUrl, apiKey, chunkSize: 1024 * 1024 })
        const progress = []
        const record = await client.files.upload(file, { resumable, onProgress: (sent, total) => progress.push([sent, total ?? null]) })
        return { file: { ...record }, progress }
      })(${JSON.stringify(args)})`) as Promise<PageResult>
    const size = 3 * 1024 * 1024 + 5
    const expected = Buffer.alloc(size)
    for (let i = 0; i < size; i++) expected[i] = (i * 31 + 7) & 0xff
    const sha = createHash('sha256').update(expected).digest('hex')

    const multipart = await run({ baseUrl: server().base_url, apiKey: server().keys.pro, resumable: false, size })
    expect(multipart.file).toMatchObject({ filename: 'from-browser.bin', size, sha256: sha })
    expect(multipart.progress.at(-1)).toEqual([size, size])
    expect(multipart.progress.length).toBeGreaterThan(1)

    const resumable = await run({ baseUrl: server().base_url, apiKey: server().keys.pro, resumable: true, size })
    expect(resumable.file).toMatchObject({ size, sha256: sha })
    expect(resumable.progress.at(-1)).toEqual([size, size])
    expect(new Set(resumable.progress.map(([sent]) => sent)).size).toBeGreaterThan(3)

    // The other endpoints, cross-origin too (GET with a key, DELETE: preflighted requests).
    const others = (await page.evaluate(`(async ({ baseUrl, apiKey, id }) => {
      const { Fileshare, NotFoundError } = await import('/sdk/index.js')
      const client = new Fileshare({ baseUrl, apiKey })
      const listed = await client.files.list({ limit: 100 })
      const one = await client.files.get(id)
      const stats = await client.stats()
      await client.files.delete(id)
      const gone = await client.files.get(id).then(() => 'still there', (e) => e instanceof NotFoundError ? e.requestId : String(e))
      return { listed: listed.files.some((f) => f.file_id === id), one: one.file_id, plan: stats.plan, gone }
    })(${JSON.stringify({ baseUrl: server().base_url, apiKey: server().keys.pro, id: multipart.file.file_id })})`)) as {
      listed: boolean
      one: number
      plan: string
      gone: string
    }
    expect(others).toMatchObject({ listed: true, one: multipart.file.file_id, plan: 'pro' })
    // A NotFoundError whose request id could be read: the exposed headers work as well.
    expect(others.gone).toMatch(/^[0-9a-f-]{36}$/)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it('verifies a webhook message (the Standard Webhooks reference vector) with @noble/hashes, and refuses a tampered one', async () => {
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(origin)
    const result = (await page.evaluate(`(async () => {
      const { Webhooks, WebhookVerificationError } = await import('/sdk/index.js')
      const headers = new Headers({
        'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
        'webhook-timestamp': '1614265330',
        'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
      })
      const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
      const event = Webhooks.verify(new TextEncoder().encode('{"test": 2432232314}'), headers, secret, { now: 1614265330 })
      let refused = 'accepted'
      try {
        Webhooks.verify('{"test": 2432232315}', headers, secret, { now: 1614265330 })
      } catch (e) {
        refused = e instanceof WebhookVerificationError ? e.message : String(e)
      }
      return { event, refused, node: typeof process }
    })()`)) as { event: unknown; refused: string; node: string }
    expect(result.node).toBe('undefined')
    expect(result.event).toEqual({ test: 2432232314 })
    expect(result.refused).toMatch(/^no signature matches/)
    expect(errors).toEqual([])
    await page.close()
  })

  it("downloads a password-protected link through its grant, on a page of the server's origin (fetch follows the 303)", async () => {
    // /download/… has no CORS headers: a download() into a WritableStream needs a page on the
    // server's own origin. The page and the SDK are served there by the browser's request routing.
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    const base = `${server().server_url}/__sdk-test__/`
    await page.route(`${base}**`, async (route) => {
      const url = new URL(route.request().url()).pathname.slice('/__sdk-test__/'.length)
      if (url === '') return route.fulfill({ contentType: 'text/html', body: PAGE.replace('"/noble/', `"${base}noble/`) })
      const file = url.startsWith('sdk/')
        ? path.join(root, 'dist', url.slice(4))
        : path.join(root, 'node_modules/@noble/hashes', url.slice(6))
      if (!existsSync(file)) return route.fulfill({ status: 404 })
      return route.fulfill({ contentType: types[path.extname(file)] ?? 'application/octet-stream', body: readFileSync(file) })
    })
    await page.goto(base)
    const result = (await page.evaluate(`(async ({ baseUrl, apiKey, sdk }) => {
      const { Fileshare, AuthenticationError } = await import(sdk)
      const client = new Fileshare({ baseUrl, apiKey })
      const bytes = new Uint8Array(300000)
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + 3) & 0xff
      const file = await client.files.upload(new Blob([bytes]), { filename: 'shared.bin', expires_in: 3600 })
      const link = await client.links.create(file.file_id, { password: 'correct horse battery', max_downloads: 2 })
      const wrong = await client.download(link, new WritableStream(), { password: 'wrong horse battery' }).then(
        () => 'downloaded',
        (e) => (e instanceof AuthenticationError ? e.code : String(e)),
      )
      const chunks = []
      const grants = []
      const progress = []
      const downloaded = await client.download(link.url, new WritableStream({ write: (chunk) => void chunks.push(chunk) }), {
        password: 'correct horse battery',
        onGrant: (url) => grants.push(url),
        onProgress: (done) => progress.push(done),
      })
      const received = chunks.reduce((n, c) => n + c.length, 0)
      const after = await client.links.get(link.link_id)
      return { file: { sha256: file.sha256, expires: file.expires_at !== null }, wrong, downloaded, received, grants, linkUrl: link.url,
        count: after.download_count, last: progress.at(-1) }
    })(${JSON.stringify({ baseUrl: server().base_url, apiKey: server().keys.pro, sdk: `${base}sdk/index.js` })})`)) as {
      file: { sha256: string; expires: boolean }
      wrong: string
      downloaded: { size: number; sha256: string; resumedFrom: number }
      received: number
      grants: string[]
      linkUrl: string
      count: number
      last: number
    }
    expect(result.file.expires).toBe(true)
    expect(result.wrong).toBe('invalid_password')
    expect(result.downloaded).toEqual({ size: 300000, sha256: result.file.sha256, resumedFrom: 0 })
    expect(result.received).toBe(300000)
    expect(result.last).toBe(300000)
    // The grant is the answer's URL after the 303 was followed.
    expect(result.grants).toHaveLength(1)
    expect(result.grants[0]!.startsWith(`${result.linkUrl}/`)).toBe(true)
    expect(result.count).toBe(1)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)
})

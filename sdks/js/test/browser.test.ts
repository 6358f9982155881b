// The built ESM in Chromium (playwright-core, /usr/bin/chromium): a File uploaded with progress.
// The page is served beside a proxy to the launcher's server, so the API is same-origin (the API
// under /api/v1/files has no CORS headers); a second upload goes cross-origin to /api/v1/uploads,
// which allows any origin.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { server } from './helpers/env.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const root = fileURLToPath(new URL('..', import.meta.url))
const types: Record<string, string> = { '.js': 'text/javascript', '.html': 'text/html' }

const PAGE = `<!doctype html><html><head><meta charset="utf-8">
<script type="importmap">{ "imports": { "@noble/hashes/sha2.js": "/noble/sha2.js" } }</script>
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
  const target = new URL(server().server_url)
  site = createServer((req, res) => {
    const url = req.url ?? '/'
    if (url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE)
    if (url.startsWith('/sdk/')) return serveFile(res, path.join(root, 'dist', path.normalize(url.slice(5))))
    if (url.startsWith('/noble/')) return serveFile(res, path.join(root, 'node_modules/@noble/hashes', path.normalize(url.slice(7))))
    // Everything else goes to the Fileshare server (same origin for the page).
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: url, headers: { ...req.headers, host: target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(site.address() as { port: number }).port}`
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
  it('uploads a File with progress (multipart, same origin) and resumably (cross-origin)', async () => {
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

    const same = await run({ baseUrl: `${origin}/api/v1`, apiKey: server().keys.pro, resumable: false, size })
    expect(same.file).toMatchObject({ filename: 'from-browser.bin', size, sha256: sha })
    expect(same.progress.at(-1)).toEqual([size, size])
    expect(same.progress.length).toBeGreaterThan(1)

    const cross = await run({ baseUrl: server().base_url, apiKey: server().keys.pro, resumable: true, size })
    expect(cross.file).toMatchObject({ size, sha256: sha })
    expect(cross.progress.at(-1)).toEqual([size, size])
    expect(new Set(cross.progress.map(([sent]) => sent)).size).toBeGreaterThan(3)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)
})

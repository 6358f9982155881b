import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Browser, BrowserContext, Page, Request } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTempDir, startTestApp, type TestApp } from '../helpers/test-app.js'
import { chromiumAvailable, launchBrowser, screenshot, watchContext, type PageProblems } from '../helpers/browser.js'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'

const PUBLIC_HOST = 'files.example.test'
const PASSWORD = 'correct horse battery staple'
const MiB = 1024 * 1024
/** public/dashboard/assets/files.js: tus above 8 MiB, in chunks of 8 MiB. */
const CHUNK = 8 * MiB
const dashboard = (page = '') => `http://${PUBLIC_HOST}/dashboard/${page}`

const eventually = <T>(probe: () => Promise<T>, timeout = 15_000) => expect.poll(probe, { timeout, interval: 50 })

/** Writes `size` random bytes to `file` (random, so that a chunk sent twice or out of place shows in the hash) and returns their SHA-256. */
async function randomFile(file: string, size: number): Promise<string> {
  const hash = createHash('sha256')
  const out = fs.createWriteStream(file)
  for (let written = 0; written < size; written += MiB) {
    const block = randomBytes(Math.min(MiB, size - written))
    hash.update(block)
    if (!out.write(block)) await once(out, 'drain')
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())))
  return hash.digest('hex')
}

async function sha256OfResponse(response: Response): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of response.body!) hash.update(chunk as Uint8Array)
  return hash.digest('hex')
}

/** The page's tus requests, in the order the browser started them. */
interface TusRequest {
  method: string
  url: string
  offset: number | undefined
  request: Request
}

/**
 * The dashboard's resumable uploads in Debian's Chromium, against a real server reached through a
 * TCP proxy that the test cuts: tus-js-client (served by the service) sends large files in chunks,
 * resumes by itself after a dropped connection, and after a reload continues where it stopped.
 */
describe.skipIf(!chromiumAvailable)('dashboard resumable uploads in Chromium', () => {
  let t: TestApp
  let proxy: TcpProxy
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let problems: PageProblems
  let scratch: string
  let accountId: number
  let tusRequests: TusRequest[]
  let failedRequests: string[]

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}` })
    proxy = await startTcpProxy(Number(new URL(t.url).port))
    browser = await launchBrowser({ [PUBLIC_HOST]: `127.0.0.1:${proxy.port}` })
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    problems = watchContext(context, [PUBLIC_HOST])
    page = await context.newPage()
    tusRequests = []
    failedRequests = []
    page.on('request', (request) => {
      if (!new URL(request.url()).pathname.startsWith('/dashboard/api/uploads')) return
      const offset = request.headers()['upload-offset']
      tusRequests.push({ method: request.method(), url: request.url(), offset: offset === undefined ? undefined : Number(offset), request })
    })
    page.on('requestfailed', (request) => failedRequests.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText}`))
    scratch = await makeTempDir('fileshare-e2e-tus-')

    const created = await t.createAccount('pro', `resumable-${Date.now()}@example.test`)
    accountId = created.accountId
    const account = await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    await page.goto(dashboard('sign-in'))
    await page.getByLabel('Email address').fill(account.email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(dashboard('files'))
    await page.waitForSelector('body[data-ready="true"]')
  })
  afterAll(async () => {
    await browser?.close()
    await proxy?.close()
    await t?.close()
    if (scratch) await fsp.rm(scratch, { recursive: true, force: true })
  })

  /** Waits until the browser has sent `bytes` more through the proxy than `from`. */
  async function untilProxied(from: number, bytes: number) {
    const deadline = Date.now() + 60_000
    while (proxy.bytesFromClients - from < bytes) {
      if (Date.now() > deadline) throw new Error(`Only ${proxy.bytesFromClients - from} bytes went through the proxy.`)
      await sleep(5)
    }
  }

  /** The upload id in a tus URL (…/dashboard/api/uploads/<id>). */
  const uploadId = (url: string) => new URL(url).pathname.split('/').pop()!

  /** The stored file of a completed upload: its record's SHA-256, and the SHA-256 of what its public link serves. */
  async function storedFile(id: string) {
    const upload = await t.app.services.resumableUploads.status(accountId, id)
    expect(upload.file).not.toBeNull()
    const row = page.locator('#files-body tr', { hasText: upload.file!.filename })
    const link = (await row.getByRole('link').getAttribute('href'))!
    const download = await fetch(`${t.url}${new URL(link).pathname}`)
    expect(download.status).toBe(200)
    return { file: upload.file!, recordSha256: upload.file!.sha256, servedSha256: await sha256OfResponse(download) }
  }

  it('serves tus-js-client from its own origin, and the upload endpoint speaks tus with the session and CSRF token only', async () => {
    const script = await fetch(`${t.url}/dashboard/assets/vendor/tus.min.js`)
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toMatch(/^(application|text)\/javascript/)
    // Cached like the dashboard's own assets (revalidated with ETag and Last-Modified).
    const ownAsset = await fetch(`${t.url}/dashboard/assets/common.js`)
    expect(script.headers.get('cache-control')).toBe(ownAsset.headers.get('cache-control'))
    expect(script.headers.get('etag')).toBeTruthy()
    expect(script.headers.get('last-modified')).toBeTruthy()
    expect(script.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(await script.text()).toBe(fs.readFileSync(path.join('node_modules', 'tus-js-client', 'dist', 'tus.min.js'), 'utf8'))
    expect((await fetch(`${t.url}/dashboard/assets/vendor/tus.js`)).status).toBe(404)
    expect((await fetch(`${t.url}/dashboard/assets/vendor/../package.json`)).status).toBe(404)

    // Without the session cookie: 401, with Tus-Resumable and without any CORS header.
    const refused = await fetch(`${t.url}/dashboard/api/uploads`, {
      method: 'POST',
      headers: { 'tus-resumable': '1.0.0', 'upload-length': '10', origin: `http://${PUBLIC_HOST}` },
    })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('tus-resumable')).toBe('1.0.0')
    expect(refused.headers.get('access-control-allow-origin')).toBeNull()

    // From the page, with the session: the CSRF token is needed too.
    const answers = await page.evaluate(async () => {
      const create = (headers: Record<string, string>) =>
        fetch('api/uploads', { method: 'POST', headers: { 'tus-resumable': '1.0.0', 'upload-length': '3', ...headers } })
      const withoutToken = await create({})
      const session = (await (await fetch('api/session')).json()) as { csrf_token: string }
      const created = await create({ 'x-csrf-token': session.csrf_token })
      const location = created.headers.get('location')!
      const head = await fetch(location, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' } })
      const removed = await fetch(location, { method: 'DELETE', headers: { 'tus-resumable': '1.0.0', 'x-csrf-token': session.csrf_token } })
      return {
        withoutToken: [withoutToken.status, withoutToken.headers.get('tus-resumable')],
        created: [created.status, location, created.headers.get('tus-resumable'), created.headers.get('access-control-allow-origin')],
        head: [head.status, head.headers.get('upload-offset'), head.headers.get('upload-length')],
        removed: removed.status,
      }
    })
    expect(answers).toEqual({
      withoutToken: [403, '1.0.0'],
      created: [201, expect.stringMatching(/^\/dashboard\/api\/uploads\/[A-Za-z0-9_-]+$/), '1.0.0', null],
      head: [200, '0', '3'],
      removed: 204,
    })
  })

  it('a 200 MiB upload goes through tus; the connection is cut midway and the upload resumes by itself to the end', async () => {
    const size = 200 * MiB
    const file = path.join(scratch, 'big video.bin')
    const sha256 = await randomFile(file, size)
    tusRequests.length = 0
    failedRequests.length = 0
    const started = Date.now()

    // Cut every connection in the middle of a chunk (once 100 MiB + 3 MiB have gone through), and
    // keep the port closed for a moment, so that the retries meet a refused connection too.
    await page.evaluate(`
      window.statesSeen = []
      new MutationObserver(() => {
        for (const state of document.querySelectorAll('#uploads .upload-state')) {
          if (window.statesSeen.at(-1) !== state.textContent) window.statesSeen.push(state.textContent)
        }
      }).observe(document.getElementById('uploads'), { subtree: true, childList: true, characterData: true })
    `)
    const before = proxy.bytesFromClients
    await page.getByLabel('Choose files').setInputFiles(file)
    await untilProxied(before, 103 * MiB)
    const offsetAtCut = tusRequests.filter((request) => request.method === 'PATCH').at(-1)!.offset!
    await proxy.cut()
    await sleep(700)
    await proxy.restore()

    const item = page.locator('#uploads li', { hasText: 'big video.bin' })
    await eventually(() => item.locator('.upload-state').textContent(), 90_000).toBe('Uploaded.')
    const seconds = (Date.now() - started) / 1000
    await screenshot(page, 'resumable-01-uploaded-after-cut')
    // The page said what happened, and its bar ended full.
    const states = (await page.evaluate('window.statesSeen')) as string[]
    expect(states[0]).toBe('Uploading 200 MiB…')
    expect(states).toContain('Connection lost; trying again…')
    expect(states.slice(-2)).toEqual(['Uploading 200 MiB…', 'Uploaded.'])
    expect(await item.locator('progress').evaluate((bar: { value: number; max: number }) => [bar.value, bar.max])).toEqual([size, size])

    // One upload, created once; the chunk in flight failed; tus asked the server for the offset
    // (HEAD) and went on from there, not from 0.
    const posts = tusRequests.filter((request) => request.method === 'POST')
    expect(posts).toHaveLength(1)
    expect(offsetAtCut).toBeGreaterThan(0)
    expect(offsetAtCut % CHUNK).toBe(0)
    expect(
      failedRequests.some((failure) => failure.startsWith('PATCH ')),
      failedRequests.join('\n'),
    ).toBe(true)
    const firstFailed = tusRequests.findIndex((request) =>
      failedRequests.some((failure) => failure.startsWith(`${request.method} ${request.url}`)),
    )
    const afterCut = tusRequests.slice(firstFailed + 1)
    const resumedAt = afterCut.findIndex((request) => request.method === 'HEAD')
    expect(resumedAt).toBeGreaterThanOrEqual(0)
    const nextPatch = afterCut.slice(resumedAt).find((request) => request.method === 'PATCH')!
    expect(nextPatch.offset).toBeGreaterThanOrEqual(offsetAtCut)
    // The PATCHes after the cut cover the rest of the file: about as many as chunks were left.
    const patches = tusRequests.filter((request) => request.method === 'PATCH')
    expect(patches.length).toBeLessThanOrEqual(size / CHUNK + 4)

    // The page refreshed its list; the file is whole (same SHA-256 in its record and from its public link).
    const row = page.locator('#files-body tr', { hasText: 'big video.bin' })
    await eventually(() => row.locator('td').nth(1).textContent()).toBe('200 MiB')
    const stored = await storedFile(uploadId(patches.at(-1)!.url))
    expect(stored.file.size).toBe(size)
    expect(stored.recordSha256).toBe(sha256)
    expect(stored.servedSha256).toBe(sha256)
    console.info(`200 MiB through tus with a cut connection: ${seconds.toFixed(1)} s in the browser`)
  }, 150_000)

  it('after a reload mid-upload, choosing the same file again continues from the offset the server has', async () => {
    const size = 48 * MiB
    const file = path.join(scratch, 'reloaded.bin')
    const sha256 = await randomFile(file, size)
    tusRequests.length = 0
    failedRequests.length = 0

    // Reload the page in the middle of the fourth chunk. The upload is slowed down meanwhile (16 MiB/s),
    // so that the reload surely lands before its end.
    const cdp = await context.newCDPSession(page)
    await cdp.send('Network.enable')
    const throttle = (uploadThroughput: number) =>
      cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput })
    await throttle(16 * MiB)
    const before = proxy.bytesFromClients
    await page.getByLabel('Choose files').setInputFiles(file)
    await untilProxied(before, 3 * CHUNK + 3 * MiB)
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    await throttle(-1)
    await cdp.detach()
    const patch = tusRequests.find((request) => request.method === 'PATCH')!
    const id = uploadId(patch.url)
    const kept = (await t.app.services.resumableUploads.status(accountId, id)).offset
    expect(kept).toBeGreaterThanOrEqual(3 * CHUNK)
    expect(kept).toBeLessThan(size)

    const beforeReselect = tusRequests.length
    await page.getByLabel('Choose files').setInputFiles(file)
    const item = page.locator('#uploads li', { hasText: 'reloaded.bin' })
    await eventually(() => item.locator('.upload-state').textContent(), 60_000).toBe('Uploaded.')

    // No new upload: a HEAD on the same URL, then PATCHes from the kept offset.
    const again = tusRequests.slice(beforeReselect)
    expect(again.filter((request) => request.method === 'POST')).toEqual([])
    expect(again[0]).toMatchObject({ method: 'HEAD' })
    expect(uploadId(again[0]!.url)).toBe(id)
    const headOffset = Number((await again[0]!.request.response())!.headers()['upload-offset'])
    expect(headOffset).toBeGreaterThanOrEqual(kept)
    const firstPatch = again.find((request) => request.method === 'PATCH')!
    expect(firstPatch.offset).toBe(headOffset)
    expect(uploadId(firstPatch.url)).toBe(id)
    // Completed: the fingerprint is gone from localStorage, so the same file would start a new upload.
    expect(await page.evaluate(`Object.keys(localStorage).filter((key) => key.startsWith('tus::'))`)).toEqual([])

    await eventually(() => page.locator('#files-body tr', { hasText: 'reloaded.bin' }).count()).toBe(1)
    const stored = await storedFile(id)
    expect(stored.recordSha256).toBe(sha256)
    expect(stored.servedSha256).toBe(sha256)
  }, 90_000)

  it('files up to the threshold keep the one-request upload', async () => {
    const file = path.join(scratch, 'small.txt')
    await fsp.writeFile(file, 'small enough for one request')
    tusRequests.length = 0
    const upload = page.waitForRequest((request) => request.url().endsWith('/dashboard/api/files/upload'))
    await page.getByLabel('Choose files').setInputFiles(file)
    await upload
    await eventually(() => page.locator('#uploads li', { hasText: 'small.txt' }).locator('.upload-state').textContent()).toBe('Uploaded.')
    expect(tusRequests).toEqual([])
  })

  it('no page raised an error, broke its CSP, or asked any host but the service', () => {
    expect(problems).toEqual({ errors: [], foreignRequests: [] })
  })
})

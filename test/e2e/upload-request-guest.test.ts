import { createHash, randomBytes } from 'node:crypto'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Browser, BrowserContext, Page, Request } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, makeTempDir, startTestApp, unlimitedAccount, type TestApp } from '../helpers/test-app.js'
import { chromiumAvailable, launchBrowser, screenshot, watchContext, type PageProblems } from '../helpers/browser.js'
import { axeViolations, describeViolations } from '../helpers/axe.js'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'

const PUBLIC_HOST = 'files.example.test'
const MiB = 1024 * 1024
/** public/upload-request/guest.js: tus chunks of 5 MiB. */
const CHUNK = 5 * MiB
const DESKTOP = { width: 1280, height: 900 }
const PHONE = { width: 390, height: 844 }

const eventually = <T>(probe: () => Promise<T>, timeout = 15_000) => expect.poll(probe, { timeout, interval: 50 })
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

interface UploadRequestRecord {
  request_id: number
  url: string
  label: string
  message: string | null
  status: string
  files_received: number
  bytes_received: number
}
interface FileRecord {
  file_id: number
  filename: string
  size: number
  sha256: string
  source: { type: string; request_id?: number }
}
interface TusRequest {
  method: string
  url: string
  offset: number | undefined
  request: Request
}

/**
 * The guest page of an upload request (issue 34, /r/<token>) in Debian's Chromium, against a real
 * server reached through a TCP proxy that the test can cut: the holder's words as plain text, the
 * limits left, the password form, uploads through tus (resumed after a cut and after a reload),
 * a dead link, a full request, a phone's screen and axe-core.
 */
describe.skipIf(!chromiumAvailable)('upload request guest page in Chromium', () => {
  let t: TestApp
  let proxy: TcpProxy
  let browser: Browser
  let apiKey: string
  let accountId: number
  let scratch: string
  const contexts: BrowserContext[] = []
  const problems: PageProblems[] = []

  beforeAll(async () => {
    t = await startTestApp({
      FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}`,
      // Every test here is a guest on 127.0.0.1: the per-address guest limits would only get in the way.
      FILESHARE_GUEST_REQUESTS_PER_MINUTE: '100000',
      FILESHARE_GUEST_REQUESTS_PER_DAY: '1000000',
    })
    proxy = await startTcpProxy(Number(new URL(t.url).port))
    browser = await launchBrowser({ [PUBLIC_HOST]: `127.0.0.1:${proxy.port}` })
    ;({ apiKey, accountId } = await unlimitedAccount(t))
    scratch = await makeTempDir('fileshare-e2e-guest-')
  })
  afterAll(async () => {
    await browser?.close()
    await proxy?.close()
    await t?.close()
    if (scratch) await fsp.rm(scratch, { recursive: true, force: true })
  })

  async function newPage(kind: 'desktop' | 'phone' = 'desktop'): Promise<Page> {
    const context = await browser.newContext(
      kind === 'desktop' ? { viewport: DESKTOP } : { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
    )
    context.setDefaultTimeout(10_000)
    contexts.push(context)
    problems.push(watchContext(context, [PUBLIC_HOST]))
    return context.newPage()
  }

  async function createRequest(fields: Record<string, unknown>): Promise<UploadRequestRecord> {
    const response = await fetch(`${t.api}/upload-requests`, {
      method: 'POST',
      headers: { ...bearer(apiKey), 'content-type': 'application/json' },
      body: JSON.stringify({ expires_in: 86_400, ...fields }),
    })
    expect(response.status).toBe(201)
    return ((await response.json()) as { upload_request: UploadRequestRecord }).upload_request
  }

  async function requestFiles(requestId: number): Promise<FileRecord[]> {
    const response = await fetch(`${t.api}/upload-requests/${requestId}/files?limit=100`, { headers: bearer(apiKey) })
    expect(response.status).toBe(200)
    return ((await response.json()) as { files: FileRecord[] }).files
  }

  async function open(page: Page, url: string) {
    const response = await page.goto(url)
    expect(response!.status()).toBe(200)
    await page.waitForSelector('body[data-ready="true"]')
  }

  /** Writes `bytes` to a file named `name` in the scratch folder; answers its path. */
  async function fileOf(name: string, bytes: Uint8Array): Promise<string> {
    const file = path.join(scratch, name)
    await fsp.writeFile(file, bytes)
    return file
  }

  const row = (page: Page, name: string) => page.locator('#uploads li', { hasText: name })
  const stateOf = (page: Page, name: string) => row(page, name).locator('.upload-state').textContent()
  /** The limits list as term → value. */
  const limitsOf = (page: Page) =>
    page.evaluate(
      `Object.fromEntries([...document.querySelectorAll('#limits dt')].map((dt) => [dt.textContent, dt.nextElementSibling.textContent]))`,
    )

  /** Records the page's tus requests (and the failed ones) from now on. */
  function watchTus(page: Page) {
    const requests: TusRequest[] = []
    const failed: string[] = []
    page.on('request', (request) => {
      if (!new URL(request.url()).pathname.startsWith('/api/v1/uploads')) return
      const offset = request.headers()['upload-offset']
      requests.push({ method: request.method(), url: request.url(), offset: offset === undefined ? undefined : Number(offset), request })
    })
    page.on('requestfailed', (request) => failed.push(`${request.method()} ${request.url()}`))
    return { requests, failed }
  }

  /** Keeps every text a file's state took, in window.statesSeen. */
  const watchStates = (page: Page) =>
    page.evaluate(`
      window.statesSeen = []
      new MutationObserver(() => {
        for (const state of document.querySelectorAll('#uploads .upload-state')) {
          if (window.statesSeen.at(-1) !== state.textContent) window.statesSeen.push(state.textContent)
        }
      }).observe(document.getElementById('uploads'), { subtree: true, childList: true, characterData: true })
    `)

  async function untilProxied(from: number, bytes: number) {
    const deadline = Date.now() + 30_000
    while (proxy.bytesFromClients - from < bytes) {
      if (Date.now() > deadline) throw new Error(`Only ${proxy.bytesFromClients - from} bytes went through the proxy.`)
      await sleep(5)
    }
  }

  async function throttle(page: Page, uploadThroughput: number) {
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Network.enable')
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput })
    return async () => {
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })
      await cdp.detach()
    }
  }

  const uploadId = (url: string) => new URL(url).pathname.split('/').pop()!

  async function axe(page: Page) {
    const violations = await axeViolations(page)
    expect(violations, describeViolations(violations)).toEqual([])
  }

  it('shows the label and message as plain text, and the limits left; an HTML message injects nothing', async () => {
    const label = '<script>window.pwned = 1</script> Invoices & receipts'
    const message = 'Hello <b id="bold">there</b>,\n<img src=x id="injected" onerror="window.pwned = 2">\nThanks & "regards"'
    const request = await createRequest({ label, message, max_files: 3, max_file_size: 2 * MiB, max_total_size: 5 * MiB })
    const page = await newPage()
    await open(page, request.url)

    expect(await page.locator('#title').textContent()).toBe(label)
    expect(await page.title()).toBe(`${label} · Fileshare`)
    expect(await page.locator('#message').textContent()).toBe(message)
    expect(await page.locator('main #bold, main #injected, main img, main b').count()).toBe(0)
    expect(await page.evaluate('window.pwned')).toBeUndefined()
    // The line breaks show as such.
    expect(await page.evaluate(`getComputedStyle(document.getElementById('message')).whiteSpace`)).toBe('pre-wrap')
    expect(await limitsOf(page)).toEqual({
      'Files left': '3',
      'Largest file': '2.0 MiB',
      'Total size left': '5.0 MiB',
      'Open until': expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/),
    })
    // The page says that a reload is no loss.
    await expect
      .poll(() => page.locator('#resume-hint').textContent())
      .toContain('choose the same file again and it continues where it stopped')
    await expect.poll(() => page.locator('#password-form').isHidden()).toBe(true)
    await screenshot(page, 'guest-01-request')
    await axe(page)
    // A system in dark mode: the page follows it (guest.css), contrast still AA.
    await page.emulateMedia({ colorScheme: 'dark' })
    expect(await page.evaluate('getComputedStyle(document.documentElement).backgroundColor')).toBe('rgb(15, 19, 25)')
    await screenshot(page, 'guest-01-request-dark')
    await axe(page)
    await page.emulateMedia({ colorScheme: 'light' })

    // Without limits of its own: the plan's largest file, no count.
    const open2 = await createRequest({ label: 'No limits' })
    await open(page, open2.url)
    expect(await limitsOf(page)).toMatchObject({ 'Files left': 'No limit', 'Largest file': '5.0 GiB', 'Total size left': 'No limit' })
    expect(await page.locator('#message').isHidden()).toBe(true)
    await page.close()
  })

  it("a guest's files land in the holder's files, with source upload_request, and the limits count down", async () => {
    const request = await createRequest({ label: 'Photos', max_files: 5, max_total_size: MiB })
    const page = await newPage()
    await open(page, request.url)
    const tus = watchTus(page)
    const first = randomBytes(100_000)
    const second = new TextEncoder().encode('a second, small file\n')
    await page.getByLabel('Choose files').setInputFiles([await fileOf('first photo.jpg', first), await fileOf('notes.txt', second)])
    await eventually(() => stateOf(page, 'first photo.jpg')).toBe('Sent.')
    await eventually(() => stateOf(page, 'notes.txt')).toBe('Sent.')
    await eventually(() => page.locator('#status').textContent()).toBe('2 of 2 files sent.')
    expect(await row(page, 'notes.txt').getByRole('progressbar', { name: 'Sent notes.txt' }).count()).toBe(1)
    // Every tus request carried the link's token, and nothing else of a credential.
    for (const { request: sent } of tus.requests) {
      expect(sent.headers()['authorization']).toBe(`UploadRequest ${new URL(request.url).pathname.split('/').pop()}`)
      expect(sent.headers()['cookie']).toBeUndefined()
    }
    await eventually(() => limitsOf(page)).toMatchObject({
      'Files left': '3',
      'Total size left': `${((MiB - 100_021) / 1024).toFixed(0)} KiB`,
    })

    const files = await requestFiles(request.request_id)
    expect(files.map((file) => [file.filename, file.size, file.sha256, file.source])).toEqual([
      ['notes.txt', second.length, sha256(second), { type: 'upload_request', request_id: request.request_id }],
      ['first photo.jpg', first.length, sha256(first), { type: 'upload_request', request_id: request.request_id }],
    ])
    // The holder's own list has them too.
    const listed = (await (await fetch(`${t.api}/files?limit=100`, { headers: bearer(apiKey) })).json()) as { files: FileRecord[] }
    expect(
      listed.files.filter((file) => file.source.type === 'upload_request' && file.source.request_id === request.request_id),
    ).toHaveLength(2)
    await axe(page)
    await page.close()
  })

  it('a connection cut in the middle of a chunk resumes by itself, and the file arrives whole', async () => {
    const request = await createRequest({ label: 'Big file' })
    const page = await newPage()
    await open(page, request.url)
    const tus = watchTus(page)
    await watchStates(page)
    const size = 16 * MiB
    const bytes = randomBytes(size)
    const file = await fileOf('cut.bin', bytes)
    // Slowed down (8 MiB/s), so that the cut lands in the second chunk.
    const unthrottle = await throttle(page, 8 * MiB)
    const before = proxy.bytesFromClients
    await page.getByLabel('Choose files').setInputFiles(file)
    await untilProxied(before, CHUNK + 2 * MiB)
    const offsetAtCut = tus.requests.filter((request) => request.method === 'PATCH').at(-1)!.offset!
    await proxy.cut()
    await sleep(500)
    await proxy.restore()
    await unthrottle()

    await eventually(() => stateOf(page, 'cut.bin'), 30_000).toBe('Sent.')
    const states = (await page.evaluate('window.statesSeen')) as string[]
    expect(states[0]).toBe('Sending 16 MiB…')
    expect(states).toContain('Connection lost; trying again…')
    expect(states.at(-1)).toBe('Sent.')
    expect(
      await row(page, 'cut.bin')
        .locator('progress')
        .evaluate((bar: { value: number; max: number }) => [bar.value, bar.max]),
    ).toEqual([size, size])
    // One upload, created once, resumed (HEAD) from where the server stood, not from 0.
    expect(tus.requests.filter((request) => request.method === 'POST')).toHaveLength(1)
    expect(offsetAtCut).toBe(CHUNK)
    expect(tus.failed.some((failure) => failure.startsWith('PATCH '))).toBe(true)
    const head = tus.requests.findIndex((request) => request.method === 'HEAD')
    expect(head).toBeGreaterThan(0)
    const resumed = tus.requests.slice(head).find((request) => request.method === 'PATCH')!
    expect(resumed.offset).toBeGreaterThanOrEqual(offsetAtCut)

    const [stored] = await requestFiles(request.request_id)
    expect(stored).toMatchObject({ filename: 'cut.bin', size, sha256: sha256(bytes) })
    await page.close()
  })

  it('after a reload mid-upload, choosing the same file again continues where it stopped', async () => {
    const request = await createRequest({ label: 'Reloaded' })
    const page = await newPage()
    await open(page, request.url)
    const tus = watchTus(page)
    const size = 16 * MiB
    const bytes = randomBytes(size)
    const file = await fileOf('reloaded.bin', bytes)
    const unthrottle = await throttle(page, 8 * MiB)
    const before = proxy.bytesFromClients
    await page.getByLabel('Choose files').setInputFiles(file)
    await untilProxied(before, CHUNK + 3 * MiB)
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    await unthrottle()
    const id = uploadId(tus.requests.find((request) => request.method === 'PATCH')!.url)
    const kept = (await t.app.services.resumableUploads.status(accountId, id)).offset
    expect(kept).toBeGreaterThanOrEqual(CHUNK)
    expect(kept).toBeLessThan(size)

    await watchStates(page)
    const from = tus.requests.length
    await page.getByLabel('Choose files').setInputFiles(file)
    await eventually(() => stateOf(page, 'reloaded.bin'), 30_000).toBe('Sent.')
    const states = (await page.evaluate('window.statesSeen')) as string[]
    expect(states).toContain('Continuing where it stopped (16 MiB)…')
    const again = tus.requests.slice(from)
    expect(again.filter((request) => request.method === 'POST')).toEqual([])
    expect(again[0]).toMatchObject({ method: 'HEAD' })
    expect(uploadId(again[0]!.url)).toBe(id)
    const headOffset = Number((await again[0]!.request.response())!.headers()['upload-offset'])
    expect(headOffset).toBeGreaterThanOrEqual(kept)
    expect(again.find((request) => request.method === 'PATCH')!.offset).toBe(headOffset)
    // Done: the fingerprint is gone, so the same file would start a new upload.
    expect(await page.evaluate(`Object.keys(localStorage).filter((key) => key.startsWith('tus::'))`)).toEqual([])
    // The token itself is not kept in the browser's storage.
    const token = new URL(request.url).pathname.split('/').pop()!
    expect(await page.evaluate(`JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })`)).not.toContain(token)

    const [stored] = await requestFiles(request.request_id)
    expect(stored).toMatchObject({ filename: 'reloaded.bin', size, sha256: sha256(bytes) })
    await page.close()
  })

  it('a password-protected link asks for the password first (wrong, then right), and a reload does not ask again', async () => {
    const label = 'Contracts <i>signed</i>'
    const message = 'Send the <b>signed</b> copies.'
    const request = await createRequest({ label, message, password: 'open sesame 42', max_files: 4 })
    // Before the password the page says nothing of the request.
    const html = await (await fetch(`${t.url}/r/${new URL(request.url).pathname.split('/').pop()}`)).text()
    expect(html).not.toContain('Contracts')
    expect(html).not.toContain('signed')

    const page = await newPage()
    await open(page, request.url)
    expect(await page.locator('#title').textContent()).toBe('Send files')
    expect(await page.locator('#request').isHidden()).toBe(true)
    await eventually(() => page.evaluate('document.activeElement.id')).toBe('password')
    await axe(page)

    await page.getByLabel('Password').fill('not the password')
    await page.getByRole('button', { name: 'Continue' }).click()
    await eventually(() => page.locator('#password-error').textContent()).toBe('That password is not right. Check it and try again.')
    expect(await page.locator('#request').isHidden()).toBe(true)
    await screenshot(page, 'guest-02-wrong-password')
    await axe(page)

    await page.getByLabel('Password').fill('open sesame 42')
    await page.getByRole('button', { name: 'Continue' }).click()
    await eventually(() => page.locator('#request').isVisible()).toBe(true)
    expect(await page.locator('#password-form').isHidden()).toBe(true)
    expect(await page.locator('#title').textContent()).toBe(label)
    expect(await page.locator('#message').textContent()).toBe(message)
    expect(await page.locator('main i, main b').count()).toBe(0)
    expect(await limitsOf(page)).toMatchObject({ 'Files left': '4' })

    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.locator('#password-form').isHidden()).toBe(true)
    expect(await page.locator('#title').textContent()).toBe(label)
    const tus = watchTus(page)
    const bytes = new TextEncoder().encode('signed contract')
    await page.getByLabel('Choose files').setInputFiles(await fileOf('contract.pdf', bytes))
    await eventually(() => stateOf(page, 'contract.pdf')).toBe('Sent.')
    expect(tus.requests[0]!.request.headers()['fileshare-upload-grant']).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/)
    expect(await limitsOf(page)).toMatchObject({ 'Files left': '3' })
    await screenshot(page, 'guest-03-after-password')
    await axe(page)
    const [stored] = await requestFiles(request.request_id)
    expect(stored).toMatchObject({ filename: 'contract.pdf', sha256: sha256(bytes), source: { type: 'upload_request' } })

    // A grant that went bad (here: the server no longer takes it) asks for the password again.
    await page.evaluate(`(() => {
      const key = Object.keys(sessionStorage).find((k) => k.startsWith('fileshare-upload-grant:'))
      const stored = JSON.parse(sessionStorage.getItem(key))
      sessionStorage.setItem(key, JSON.stringify({ ...stored, grant: stored.grant.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')) }))
    })()`)
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    await page.getByLabel('Choose files').setInputFiles(await fileOf('second.pdf', bytes))
    await eventually(() => page.locator('#password-form').isVisible()).toBe(true)
    expect(await page.locator('#password-error').textContent()).toContain('Enter the password again')
    await page.close()
  })

  it("a closed request's link shows the same 404 page as an unknown token; an open page says the link no longer takes files", async () => {
    const request = await createRequest({ label: 'Soon closed' })
    const page = await newPage()
    await open(page, request.url)
    const closed = await fetch(`${t.api}/upload-requests/${request.request_id}/close`, { method: 'POST', headers: bearer(apiKey) })
    expect(closed.status).toBe(200)

    await page.getByLabel('Choose files').setInputFiles(await fileOf('late.txt', new TextEncoder().encode('too late')))
    await eventually(() => stateOf(page, 'late.txt')).toBe('Not sent: this link no longer accepts files.')
    expect(await page.locator('#closed').textContent()).toBe('This link no longer accepts files.')
    expect(await page.locator('#file-input').isDisabled()).toBe(true)
    await axe(page)

    const token = new URL(request.url).pathname.split('/').pop()!
    const dead = await fetch(`${t.url}/r/${token}`)
    const unknown = await fetch(`${t.url}/r/${randomBytes(32).toString('base64url')}`)
    expect([dead.status, unknown.status]).toEqual([404, 404])
    expect(await dead.text()).toBe(await unknown.text())
    const response = await page.goto(request.url)
    expect(response!.status()).toBe(404)
    expect(await page.locator('h1').textContent()).toBe('This upload link does not work')
    expect(await page.content()).not.toContain('Soon closed')
    await page.close()
  })

  it('checks sizes before sending, says when the request is full, and a stale page meets upload_request_full', async () => {
    const request = await createRequest({ label: 'Two small files', max_files: 2, max_total_size: 1000 })
    const [a, b] = [await newPage(), await newPage()]
    await open(a, request.url)
    await open(b, request.url)
    expect(await limitsOf(a)).toMatchObject({ 'Files left': '2', 'Largest file': '1000 B', 'Total size left': '1000 B' })

    // Too large for the request: refused on the page, nothing sent.
    const tusA = watchTus(a)
    await a.getByLabel('Choose files').setInputFiles(await fileOf('large.bin', randomBytes(1500)))
    await eventually(() => stateOf(a, 'large.bin')).toBe('Not sent: too large (1.5 KiB). This link takes files up to 1000 B.')
    expect(tusA.requests).toEqual([])

    await b.getByLabel('Choose files').setInputFiles(await fileOf('first.bin', randomBytes(600)))
    await eventually(() => stateOf(b, 'first.bin')).toBe('Sent.')
    await eventually(() => limitsOf(b)).toMatchObject({ 'Files left': '1', 'Largest file': '400 B', 'Total size left': '400 B' })

    // Page A still thinks 1000 bytes are left: the server refuses, and the page learns what is left.
    await a.getByLabel('Choose files').setInputFiles(await fileOf('stale.bin', randomBytes(600)))
    await eventually(() => stateOf(a, 'stale.bin')).toBe('Not sent: this link has no room left for this file.')
    await eventually(() => limitsOf(a)).toMatchObject({ 'Files left': '1', 'Total size left': '400 B' })
    await axe(a)

    await a.getByLabel('Choose files').setInputFiles(await fileOf('last.bin', randomBytes(400)))
    await eventually(() => stateOf(a, 'last.bin')).toBe('Sent.')
    await eventually(() => a.locator('#closed').textContent()).toBe(
      'This link has received all the files it takes. Nothing more can be sent.',
    )
    expect(await a.locator('#file-input').isDisabled()).toBe(true)
    expect(await limitsOf(a)).toMatchObject({ 'Files left': '0' })
    await screenshot(a, 'guest-04-full')
    await axe(a)
    // A full request's link is dead too.
    expect((await fetch(`${t.url}/r/${new URL(request.url).pathname.split('/').pop()}`)).status).toBe(404)
    expect((await requestFiles(request.request_id)).map((file) => file.filename)).toEqual(['last.bin', 'first.bin'])
    await a.close()
    await b.close()
  })

  it('fits a phone: no sideways scrolling, touch targets of 44 px, axe clean', async () => {
    const long = 'Quarterly-statements-and-receipts-for-the-accountant-'.repeat(3)
    const request = await createRequest({ label: long.slice(0, 150), message: `${long}\nThank you!`, max_files: 10 })
    const page = await newPage('phone')
    await open(page, request.url)
    await page
      .getByLabel('Choose files')
      .setInputFiles([
        await fileOf(`${long}.txt`, new TextEncoder().encode('phone')),
        await fileOf('second.txt', new TextEncoder().encode('small')),
      ])
    await eventually(() => page.locator('#uploads li.done').count()).toBe(2)
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(PHONE.width)
    const target = await page.locator('#choose-files').boundingBox()
    expect(target!.height).toBeGreaterThanOrEqual(44)
    expect(target!.width).toBeGreaterThanOrEqual(44)
    // The drag hint is for a mouse: a touch screen shows the button alone.
    expect(await page.locator('.drag-hint').isHidden()).toBe(true)
    await screenshot(page, 'guest-05-phone')
    await axe(page)
    await page.emulateMedia({ colorScheme: 'dark' })
    expect(await page.evaluate('getComputedStyle(document.documentElement).backgroundColor')).toBe('rgb(15, 19, 25)')
    await screenshot(page, 'guest-05-phone-dark')
    await axe(page)

    const protectedRequest = await createRequest({ label: 'Phone password', password: 'phone password 1' })
    await open(page, protectedRequest.url)
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(PHONE.width)
    for (const selector of ['#password', '#password-submit']) {
      expect((await page.locator(selector).boundingBox())!.height).toBeGreaterThanOrEqual(44)
    }
    // Still in the dark theme: the password form.
    await screenshot(page, 'guest-06-phone-password-dark')
    await axe(page)
    await page.close()
  })

  it('no page raised an error, broke its CSP, or asked any host but the service', () => {
    for (const found of problems) expect(found).toEqual({ errors: [], foreignRequests: [] })
  })
})

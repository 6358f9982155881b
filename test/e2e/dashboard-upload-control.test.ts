import { createHash, randomBytes } from 'node:crypto'
import fsp from 'node:fs/promises'
import path from 'node:path'
import type { Browser, BrowserContext, CDPSession, Page, Request } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTempDir, startTestApp, type TestApp } from '../helpers/test-app.js'
import { chromiumAvailable, launchBrowser, screenshot, watchContext, type PageProblems } from '../helpers/browser.js'
import { axeBothThemes as axeLightAndDark, DESKTOP, PHONE } from '../helpers/dashboard-browser.js'

const PUBLIC_HOST = 'files.example.test'
const PASSWORD = 'correct horse battery staple'
const MiB = 1024 * 1024
const dashboard = (page = '') => `http://${PUBLIC_HOST}/dashboard/${page}`

const eventually = <T>(probe: () => Promise<T>, timeout = 30_000) => expect.poll(probe, { timeout, interval: 50 })

/** Writes `size` random bytes to `file` and returns their SHA-256 (random: a chunk sent twice or out of place shows in the hash). */
async function randomFile(file: string, size: number): Promise<string> {
  const bytes = randomBytes(size)
  await fsp.writeFile(file, bytes)
  return createHash('sha256').update(bytes).digest('hex')
}

/**
 * Issue 37, uploads: pausing, resuming and cancelling an upload in progress on the Files page
 * (public/dashboard/assets/uploads.js), and the list of unfinished uploads after a reload, in
 * Chromium against a real server, at 1366x900 and on a phone (390x844, touch). Uploads are slowed
 * down (DevTools' network emulation) so that a click lands in the middle of one. axe-core on each
 * new state, light and dark. Screenshots: test-artifacts/screenshots/upload-control-*.png.
 */
describe.skipIf(!chromiumAvailable)('pausing, resuming and cancelling uploads in the dashboard', () => {
  let t: TestApp
  let browser: Browser
  let scratch: string
  let accountId: number
  let email: string
  const problems: PageProblems[] = []
  /** The tus requests of every page, in the order the browser started them. */
  const tusRequests: { method: string; url: string; request: Request }[] = []

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}` })
    browser = await launchBrowser({ [PUBLIC_HOST]: new URL(t.url).host })
    scratch = await makeTempDir('fileshare-e2e-upload-control-')
    email = `upload-control-${Date.now()}@example.test`
    accountId = (await t.createAccount('pro', email)).accountId
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
    if (scratch) await fsp.rm(scratch, { recursive: true, force: true })
  })

  async function signedIn(kind: 'desktop' | 'phone'): Promise<Page> {
    const context: BrowserContext = await browser.newContext(
      kind === 'desktop' ? { viewport: DESKTOP } : { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
    )
    context.setDefaultTimeout(15_000)
    problems.push(watchContext(context, [PUBLIC_HOST]))
    const page = await context.newPage()
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/dashboard/api/uploads')) {
        tusRequests.push({ method: request.method(), url: request.url(), request })
      }
    })
    await page.goto(dashboard('sign-in'))
    await page.getByLabel('Email address').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(dashboard('files'))
    await page.waitForSelector('body[data-ready="true"]')
    return page
  }

  /** The page's uploads slowed down to `bytesPerSecond` (-1: no limit again). */
  async function throttle(cdp: CDPSession, bytesPerSecond: number) {
    await cdp.send('Network.enable')
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: bytesPerSecond,
    })
  }

  const axeBothThemes = (page: Page, name: string) => axeLightAndDark(page, `upload-control-${name}`, screenshot)

  async function reload(page: Page) {
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
  }

  const row = (page: Page, name: string) => page.locator('#uploads li', { hasText: name })
  const stateOf = (page: Page, name: string) => row(page, name).locator('.upload-state').textContent()
  const focusedLabel = (page: Page) => page.evaluate(`document.activeElement?.getAttribute('aria-label') ?? null`)
  const tusKeys = (page: Page) => page.evaluate(`Object.keys(localStorage).filter((key) => key.startsWith('tus::'))`) as Promise<string[]>
  /** The upload URL of the latest upload the page created (its POST's Location). */
  async function latestUploadUrl(): Promise<string> {
    const post = tusRequests.filter((request) => request.method === 'POST').at(-1)!
    const location = (await post.request.response())!.headers()['location']!
    return new URL(location, post.url).href
  }
  const uploadIdOf = (url: string) => new URL(url).pathname.split('/').pop()!
  /** The server's offset of an upload, by the page's own tus HEAD (with its session): `[status, offset]`. */
  const headFromPage = (page: Page, url: string) =>
    page.evaluate(
      `fetch(${JSON.stringify(url)}, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' } }).then((answer) => [answer.status, answer.headers.get('upload-offset')])`,
    ) as Promise<[number, string | null]>

  /** Starts sending `file` slowly, and waits until the server holds at least `bytes` of it. */
  async function startSlowly(page: Page, cdp: CDPSession, file: string, bytes: number) {
    await throttle(cdp, 8 * MiB)
    await page.getByLabel('Choose files').setInputFiles(file)
    await eventually(async () => tusRequests.some((request) => request.method === 'PATCH')).toBe(true)
    const url = await latestUploadUrl()
    await eventually(async () => (await t.app.services.resumableUploads.status(accountId, uploadIdOf(url))).offset).toBeGreaterThanOrEqual(
      bytes,
    )
    return url
  }

  it('Pause keeps the server’s upload where it is; Resume goes on from the server’s offset to the exact bytes', async () => {
    const page = await signedIn('desktop')
    const cdp = await page.context().newCDPSession(page)
    const file = path.join(scratch, 'paused video.bin')
    const size = 40 * MiB
    const sha256 = await randomFile(file, size)
    const url = await startSlowly(page, cdp, file, 8 * MiB)

    const pause = page.getByRole('button', { name: 'Pause upload of paused video.bin' })
    await pause.click()
    await eventually(() => stateOf(page, 'paused video.bin')).toMatch(/^Paused at \d+%\.$/)
    // The same button now resumes, and focus stayed on it.
    const resume = page.getByRole('button', { name: 'Resume upload of paused video.bin' })
    await expect(resume.isVisible()).resolves.toBe(true)
    expect(await focusedLabel(page)).toBe('Resume upload of paused video.bin')
    // Paused: no request more (axe and screenshots take a while), and the server keeps what it has.
    const requestsAtPause = tusRequests.length
    await axeBothThemes(page, 'desktop-paused')
    expect(tusRequests).toHaveLength(requestsAtPause)
    const kept = (await t.app.services.resumableUploads.status(accountId, uploadIdOf(url))).offset
    expect(kept).toBeGreaterThan(0)
    expect(kept).toBeLessThan(size)

    await throttle(cdp, -1)
    const before = tusRequests.length
    await resume.click()
    expect(await focusedLabel(page)).toBe('Pause upload of paused video.bin')
    await eventually(() => stateOf(page, 'paused video.bin')).toBe('Uploaded.')
    // Resumed on the same URL: a HEAD for the server's offset, then PATCHes from there; no new upload.
    const after = tusRequests.slice(before)
    expect(after.filter((request) => request.method === 'POST')).toEqual([])
    expect(after[0]).toMatchObject({ method: 'HEAD', url })
    const headOffset = Number((await after[0]!.request.response())!.headers()['upload-offset'])
    expect(headOffset).toBeGreaterThanOrEqual(kept)
    expect(after.find((request) => request.method === 'PATCH')!.request.headers()['upload-offset']).toBe(String(headOffset))
    const stored = await t.app.services.resumableUploads.status(accountId, uploadIdOf(url))
    expect(stored.file!.size).toBe(size)
    expect(stored.file!.sha256).toBe(sha256)
    // Finished: the buttons went, focus with them to the list; the fingerprint is gone.
    expect(
      await row(page, 'paused video.bin')
        .getByRole('button', { name: /upload of/ })
        .count(),
    ).toBe(0)
    expect(await tusKeys(page)).toEqual([])
    await page.context().close()
  }, 120_000)

  it('Cancel terminates the upload on the server (its HEAD answers 404) and removes the row and its fingerprint', async () => {
    const page = await signedIn('desktop')
    const cdp = await page.context().newCDPSession(page)
    const file = path.join(scratch, 'cancelled.bin')
    await randomFile(file, 40 * MiB)
    const url = await startSlowly(page, cdp, file, 4 * MiB)
    expect(await tusKeys(page)).toHaveLength(1)

    await page.getByRole('button', { name: 'Cancel upload of cancelled.bin' }).click()
    await eventually(() => row(page, 'cancelled.bin').count()).toBe(0)
    expect(await page.locator('#uploads-said').textContent()).toBe(
      'Cancelled the upload of cancelled.bin; the server dropped what it had received.',
    )
    expect(tusRequests.some((request) => request.method === 'DELETE' && request.url === url)).toBe(true)
    await throttle(cdp, -1)
    expect(await headFromPage(page, url)).toEqual([404, null])
    expect(await tusKeys(page)).toEqual([])
    // The row was the list's only one: the list went, focus to the file chooser rather than the page's body.
    expect(await page.locator('#uploads-panel').isHidden()).toBe(true)
    expect(await page.evaluate(`document.activeElement?.id`)).toBe('file-input')
    expect(await page.locator('#files-body tr', { hasText: 'cancelled.bin' }).count()).toBe(0)
    await axeBothThemes(page, 'desktop-cancelled')
    await page.context().close()
  }, 90_000)

  it('a small upload (one request) offers Cancel only, which stops it', async () => {
    const page = await signedIn('desktop')
    const cdp = await page.context().newCDPSession(page)
    const file = path.join(scratch, 'small but slow.bin')
    await randomFile(file, 4 * MiB)
    await throttle(cdp, 256 * 1024)
    await page.getByLabel('Choose files').setInputFiles(file)
    const item = row(page, 'small but slow.bin')
    await eventually(() => item.getByRole('button').allTextContents()).toEqual(['Cancel'])
    await item.getByRole('button', { name: 'Cancel upload of small but slow.bin' }).click()
    await eventually(() => item.count()).toBe(0)
    expect(await page.locator('#uploads-said').textContent()).toContain('Cancelled the upload of small but slow.bin')
    await throttle(cdp, -1)
    await reload(page)
    expect(await page.locator('#files-body tr', { hasText: 'small but slow.bin' }).count()).toBe(0)
    await page.context().close()
  }, 60_000)

  it('after a reload the unfinished upload is listed at the server’s offset; another file is refused, the same one completes it', async () => {
    const page = await signedIn('desktop')
    const cdp = await page.context().newCDPSession(page)
    const file = path.join(scratch, 'reloaded.bin')
    const size = 40 * MiB
    const sha256 = await randomFile(file, size)
    const url = await startSlowly(page, cdp, file, 8 * MiB)
    const beforeReload = tusRequests.length
    await reload(page)
    await throttle(cdp, -1)

    // The page asked the server where the upload stands (HEAD), and shows that.
    await eventually(async () => tusRequests.slice(beforeReload).some((request) => request.method === 'HEAD' && request.url === url)).toBe(
      true,
    )
    const head = tusRequests.slice(beforeReload).find((request) => request.method === 'HEAD')!
    const offset = Number((await head.request.response())!.headers()['upload-offset'])
    expect(offset).toBeGreaterThanOrEqual(8 * MiB)
    const shown = `Paused at ${Math.floor((offset / size) * 100)}% — choose the file again to resume.`
    await eventually(() => stateOf(page, 'reloaded.bin')).toBe(shown)
    expect(
      await row(page, 'reloaded.bin')
        .locator('progress')
        .evaluate((bar: { value: number; max: number }) => [bar.value, bar.max]),
    ).toEqual([offset, size])
    await axeBothThemes(page, 'desktop-restored')

    // Another file under the same name: refused, said in the row; nothing sent.
    const other = path.join(scratch, 'other', 'reloaded.bin')
    await fsp.mkdir(path.dirname(other), { recursive: true })
    await randomFile(other, 9 * MiB)
    const resume = page.getByRole('button', { name: 'Resume upload of reloaded.bin' })
    const sent = tusRequests.length
    let chooser = page.waitForEvent('filechooser')
    await resume.click()
    await (await chooser).setFiles(other)
    await eventually(() => stateOf(page, 'reloaded.bin')).toBe(
      'reloaded.bin is a different file (its size differs): choose reloaded.bin (40 MiB) to resume.',
    )
    expect(tusRequests.slice(sent).filter((request) => request.method !== 'HEAD')).toEqual([])
    await axeBothThemes(page, 'desktop-different-file')

    chooser = page.waitForEvent('filechooser')
    await resume.click()
    await (await chooser).setFiles(file)
    await eventually(() => stateOf(page, 'reloaded.bin')).toBe('Uploaded.')
    const again = tusRequests.slice(sent)
    expect(again.filter((request) => request.method === 'POST')).toEqual([])
    expect(again.filter((request) => request.method === 'PATCH').every((request) => request.url === url)).toBe(true)
    const stored = await t.app.services.resumableUploads.status(accountId, uploadIdOf(url))
    expect(stored.file!.sha256).toBe(sha256)
    expect(await tusKeys(page)).toEqual([])
    // Reloaded once more: nothing unfinished is listed.
    await reload(page)
    expect(await page.locator('#uploads li').count()).toBe(0)
    await page.context().close()
  }, 120_000)

  it('after a reload, Cancel on the listed upload terminates it on the server and forgets it', async () => {
    const page = await signedIn('desktop')
    const cdp = await page.context().newCDPSession(page)
    const file = path.join(scratch, 'cancelled after reload.bin')
    await randomFile(file, 24 * MiB)
    const url = await startSlowly(page, cdp, file, 2 * MiB)
    await reload(page)
    await throttle(cdp, -1)
    await eventually(() => stateOf(page, 'cancelled after reload.bin')).toMatch(/^Paused at \d+% — choose the file again to resume\.$/)
    const cancel = page.getByRole('button', { name: 'Cancel upload of cancelled after reload.bin' })
    // The button is described by the row's status: a screen reader hears what it would cancel.
    expect(await cancel.getAttribute('aria-describedby')).toBe(
      await row(page, 'cancelled after reload.bin').locator('.upload-state').getAttribute('id'),
    )
    await cancel.click()
    await eventually(() => row(page, 'cancelled after reload.bin').count()).toBe(0)
    expect(await page.locator('#uploads-said').textContent()).toBe(
      'Cancelled the upload of cancelled after reload.bin; the server dropped what it had received.',
    )
    expect(await headFromPage(page, url)).toEqual([404, null])
    expect(await tusKeys(page)).toEqual([])
    await reload(page)
    expect(await page.locator('#uploads li').count()).toBe(0)
    await page.context().close()
  }, 60_000)

  it('on a phone: paused by touch; after a reload an upload the server no longer has is shown expired, and forgotten', async () => {
    const page = await signedIn('phone')
    const cdp = await page.context().newCDPSession(page)
    const file = path.join(scratch, 'expired on phone.bin')
    await randomFile(file, 24 * MiB)
    const url = await startSlowly(page, cdp, file, 2 * MiB)
    await page.getByRole('button', { name: 'Pause upload of expired on phone.bin' }).tap()
    await eventually(() => stateOf(page, 'expired on phone.bin')).toMatch(/^Paused at \d+%\.$/)
    await throttle(cdp, -1)
    await axeBothThemes(page, 'phone-paused')

    // The server drops it (as when an unfinished upload expires), then the page is reloaded.
    await t.app.services.resumableUploads.terminate(accountId, uploadIdOf(url))
    await reload(page)
    await eventually(() => stateOf(page, 'expired on phone.bin')).toBe(
      'Expired: the server no longer keeps this unfinished upload. Choose the file again to start over.',
    )
    await axeBothThemes(page, 'phone-expired')
    await page.getByRole('button', { name: 'Forget upload of expired on phone.bin' }).tap()
    await eventually(() => row(page, 'expired on phone.bin').count()).toBe(0)
    expect(await page.locator('#uploads-said').textContent()).toBe('Forgot the expired upload of expired on phone.bin.')
    expect(await tusKeys(page)).toEqual([])
    await reload(page)
    expect(await page.locator('#uploads li').count()).toBe(0)
    await page.context().close()
  }, 90_000)

  it('an unfinished upload of another account on the same browser is not listed, nor forgotten', async () => {
    const page = await signedIn('desktop')
    // Two entries as tus-js-client and the page store them: this account's (an upload the server no
    // longer has) and another holder's of this browser.
    const entry = (name: string, account: number, id: string) => ({
      key: `tus::tus-br-${name}--${30 * MiB}-1700000000000-${dashboard('api/uploads')}::${id}`,
      value: JSON.stringify({
        size: 30 * MiB,
        metadata: { filename: name },
        creationTime: new Date().toString(),
        uploadUrl: dashboard(`api/uploads/${id}`),
        file: { name, type: '', size: 30 * MiB, lastModified: 1700000000000 },
        lifetime: '',
        account,
      }),
    })
    const own = entry('own but gone.bin', accountId, 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')
    const others = entry('secret of another holder.bin', accountId + 1000, 'BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB')
    await page.evaluate(`(${JSON.stringify([own, others])}).forEach(({ key, value }) => localStorage.setItem(key, value))`)
    await reload(page)
    await eventually(() => stateOf(page, 'own but gone.bin')).toMatch(/^Expired/)
    expect(await page.locator('#uploads li').allTextContents()).not.toContainEqual(expect.stringContaining('secret of another holder'))
    expect(await page.locator('#uploads li').count()).toBe(1)
    await page.getByRole('button', { name: 'Forget upload of own but gone.bin' }).click()
    await eventually(() => tusKeys(page)).toEqual([others.key])
    await page.context().close()
  }, 60_000)

  it('an upload finished elsewhere is dropped from the list after a reload', async () => {
    const page = await signedIn('desktop')
    const cdp = await page.context().newCDPSession(page)
    const file = path.join(scratch, 'finished elsewhere.bin')
    await randomFile(file, 24 * MiB)
    const url = await startSlowly(page, cdp, file, 2 * MiB)
    await page.getByRole('button', { name: 'Pause upload of finished elsewhere.bin' }).click()
    await throttle(cdp, -1)
    // Another tab (here: a plain request with the page's session) sends the rest.
    const answers = await page.evaluate(`(async () => {
      const session = await (await fetch('api/session')).json()
      // The paused page's last chunk may still be arriving: a 409 says the offset moved, so ask again.
      for (let attempt = 0; ; attempt += 1) {
        const head = await fetch(${JSON.stringify(url)}, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' } })
        const offset = Number(head.headers.get('upload-offset'))
        const length = Number(head.headers.get('upload-length'))
        const patch = await fetch(${JSON.stringify(url)}, {
          method: 'PATCH',
          headers: { 'tus-resumable': '1.0.0', 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream', 'x-csrf-token': session.csrf_token },
          body: new Uint8Array(length - offset),
        })
        if (patch.status !== 409 || attempt === 20) return [head.status, offset, length, patch.status, await patch.text()]
      }
    })()`)
    expect((answers as unknown[]).slice(2, 4), JSON.stringify(answers)).toEqual([24 * MiB, 204])
    expect((await t.app.services.resumableUploads.status(accountId, uploadIdOf(url))).file).not.toBeNull()
    await reload(page)
    await eventually(() => tusKeys(page)).toEqual([])
    expect(await page.locator('#uploads li').count()).toBe(0)
    await page.context().close()
  }, 60_000)

  it('no page raised an error, broke its CSP, or asked any host but the service', () => {
    for (const seen of problems) expect(seen).toEqual({ errors: [], foreignRequests: [] })
  })
})

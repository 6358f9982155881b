import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { chromiumAvailable, launchBrowser, SCREENSHOT_DIR, watchContext, type PageProblems } from '../helpers/browser.js'
import { axeViolations, describeViolations } from '../helpers/axe.js'

const PUBLIC_HOST = 'files.example.test'
const PASSWORD = 'correct horse battery staple'
const DESKTOP = { width: 1366, height: 900 }
const PHONE = { width: 390, height: 844 }
const dashboard = (page = '') => `http://${PUBLIC_HOST}/dashboard/${page}`
const KiB = 1024
/** The account's bytes: one stored file and one resumable upload in progress (reserved, not used). */
const USED = 300 * KiB
const RESERVED = 200 * KiB
/** `-1`: unlimited, whatever the plan says (AccountsService.setLimits). */
const UNLIMITED = -1
const DANGER = 'rgb(179, 38, 30)'
const PRIMARY = 'rgb(31, 79, 191)'

/** The page's globals, for functions that run in it (this project's TypeScript has no DOM types). */
interface InPage {
  getComputedStyle(element: unknown): { backgroundColor: string; backgroundImage: string; color: string }
}
const COLOR = (element: unknown) => (globalThis as unknown as InPage).getComputedStyle(element).color
const BACKGROUND = (element: unknown) => {
  const style = (globalThis as unknown as InPage).getComputedStyle(element)
  return { color: style.backgroundColor, image: style.backgroundImage }
}

/**
 * Issue 29, "storage quotas", on the dashboard's usage page, in Chromium on a desktop (1366x900)
 * and a phone (390x844, touch): used, reserved and the quota with a bar of two segments (solid and
 * striped), "Unlimited" without a quota, the warning near and over the quota, axe-core on each
 * state; and an upload the server refuses over a small quota (403 storage_quota_exceeded), through
 * the one-request upload and through tus, with the files page's message. One server for the file.
 * Screenshots: test-artifacts/screenshots/usage-*.png.
 */
describe.skipIf(!chromiumAvailable)('usage page: storage and its quota', () => {
  let t: TestApp
  let browser: Browser
  let accountId: number
  let apiKey: string
  const problems: PageProblems[] = []
  const pages: { name: 'desktop' | 'phone'; page: Page }[] = []

  async function newPage(kind: 'desktop' | 'phone', email: string): Promise<Page> {
    const context = await browser.newContext(
      kind === 'desktop' ? { viewport: DESKTOP } : { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
    )
    context.setDefaultTimeout(10_000)
    problems.push(watchContext(context, [PUBLIC_HOST]))
    const page = await context.newPage()
    await page.goto(dashboard('sign-in'))
    await page.getByLabel('Email address').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(dashboard('files'))
    return page
  }

  async function open(page: Page, name: string) {
    await page.goto(dashboard(name))
    await page.waitForSelector('body[data-ready="true"]')
  }

  /** What the screen shows (a phone's full-page capture would lose the touch emulation, as in dashboard-pages). */
  async function shot(page: Page, name: string) {
    await fs.mkdir(SCREENSHOT_DIR, { recursive: true })
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `usage-${name}.png`) })
  }

  async function axeClean(page: Page) {
    const violations = await axeViolations(page)
    expect(violations, describeViolations(violations)).toEqual([])
  }

  const text = (page: Page, selector: string) => page.locator(selector).textContent()

  /** The usage page on both screens with the account's quota set to `quota` (bytes or UNLIMITED). */
  async function eachScreen(quota: number, check: (page: Page, name: string) => Promise<void>) {
    await t.app.services.accounts.setLimits(accountId, { max_storage: quota })
    for (const { name, page } of pages) {
      await open(page, 'usage')
      await check(page, name)
      // Nothing sticks out sideways, on the phone least of all.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(page.viewportSize()!.width)
      await axeClean(page)
    }
  }

  /** Both segments of the storage bar, as shares of its inside (within its border), and how they are painted. */
  async function segments(page: Page) {
    const bar = page.locator('#storage-bar')
    const [inside, used, reserved] = await Promise.all([
      bar.evaluate((element) => (element as { clientWidth: number }).clientWidth),
      bar.locator('.used').boundingBox(),
      bar.locator('.reserved').boundingBox(),
    ])
    return {
      used: used!.width / inside,
      reserved: reserved!.width / inside,
      usedPaint: await bar.locator('.used').evaluate(BACKGROUND),
      reservedPaint: await bar.locator('.reserved').evaluate(BACKGROUND),
    }
  }

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}` })
    browser = await launchBrowser({ [PUBLIC_HOST]: new URL(t.url).host })
    const email = `usage-${Date.now()}@example.test`
    ;({ accountId, apiKey } = await t.createAccount('pro', email))
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    // One stored file (used bytes) and a resumable upload that has only begun (its length reserved).
    const form = new FormData()
    form.append('file', new Blob([Buffer.alloc(USED, 1)]), 'stored.bin')
    const stored = await fetch(`${t.api}/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form })
    expect(stored.status).toBe(201)
    const started = await fetch(`${t.api}/uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'tus-resumable': '1.0.0', 'upload-length': String(RESERVED) },
    })
    expect(started.status).toBe(201)
    const desktop = await newPage('desktop', email)
    const phone = await newPage('phone', email)
    pages.push({ name: 'desktop', page: desktop }, { name: 'phone', page: phone })
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  it('the API and the page agree: used and reserved bytes, and the quota in /stats', async () => {
    const stats = (await (await fetch(`${t.api}/stats`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as {
      stats: { total_size: number; storage_reserved: number }
      limits: { max_storage: number | null }
    }
    expect(stats.stats).toMatchObject({ total_size: USED, storage_reserved: RESERVED })
    // pro's default: 100 GiB.
    expect(stats.limits.max_storage).toBe(100 * 1024 ** 3)
    await eachScreen(100 * 1024 ** 3, async (page) => {
      expect(await text(page, '#storage-summary')).toBe('300 KiB used and 200 KiB reserved of 100 GiB (under 1%).')
      // A sliver, not nothing: the bar shows that something is stored.
      const { used, reserved } = await segments(page)
      expect(used).toBeGreaterThan(0)
      expect(reserved).toBeGreaterThan(0)
      expect(used + reserved).toBeLessThan(0.05)
    })
  })

  it('unlimited: no bar, the figures and "Unlimited"', async () => {
    await eachScreen(UNLIMITED, async (page, name) => {
      expect(await page.getByRole('meter', { name: 'Storage' }).count()).toBe(0)
      expect(await text(page, '#storage-summary')).toBe('300 KiB used and 200 KiB reserved; no storage quota (unlimited).')
      expect(await text(page, '#total-size')).toBe('300 KiB')
      expect(await text(page, '#storage-reserved')).toBe('200 KiB')
      expect(await text(page, '#max-storage')).toBe('Unlimited')
      expect(await page.locator('#storage-free').isVisible()).toBe(false)
      expect(await page.locator('#storage-warning').isVisible()).toBe(false)
      await shot(page, `${name}-unlimited`)
    })
  })

  it('a quota: a meter with used (solid) and reserved (striped) bytes, and what is free', async () => {
    const quota = 1024 * KiB
    await eachScreen(quota, async (page, name) => {
      const meter = page.getByRole('meter', { name: 'Storage' })
      expect(await meter.getAttribute('aria-valuemin')).toBe('0')
      expect(await meter.getAttribute('aria-valuemax')).toBe(String(quota))
      expect(await meter.getAttribute('aria-valuenow')).toBe(String(USED + RESERVED))
      expect(await meter.getAttribute('aria-valuetext')).toBe('300 KiB used and 200 KiB reserved of 1.0 MiB (48%)')
      expect(await text(page, '#storage-summary')).toBe('300 KiB used and 200 KiB reserved of 1.0 MiB (48%).')
      expect(await text(page, '#total-size')).toBe('300 KiB')
      expect(await text(page, '#storage-reserved')).toBe('200 KiB')
      expect(await text(page, '#storage-free')).toBe('524 KiB')
      expect(await text(page, '#max-storage')).toBe('1.0 MiB')
      expect(await page.locator('#storage-warning').isVisible()).toBe(false)
      const bar = await segments(page)
      expect(bar.used).toBeCloseTo(USED / quota, 1)
      expect(bar.reserved).toBeCloseTo(RESERVED / quota, 1)
      // Not by colour alone: used is solid, reserved striped; the legend's keys are painted the same.
      expect(bar.usedPaint).toEqual({ color: PRIMARY, image: 'none' })
      expect(bar.reservedPaint.image).toMatch(/^repeating-linear-gradient/)
      expect(await page.locator('.key.reserved').evaluate(BACKGROUND)).toEqual(bar.reservedPaint)
      expect(await page.locator('#storage-bar').isVisible()).toBe(true)
      await shot(page, `${name}-quota`)
    })
  })

  it('near the quota: the bar turns red and a warning says how much is left', async () => {
    await eachScreen(540 * KiB, async (page, name) => {
      expect(await text(page, '#storage-summary')).toBe('300 KiB used and 200 KiB reserved of 540 KiB (92%).')
      expect(await text(page, '#storage-free')).toBe('40 KiB')
      const warning = page.locator('#storage-warning')
      expect(await warning.isVisible()).toBe(true)
      expect(await warning.textContent()).toBe(
        'Almost full. Only 40 KiB left: a larger upload is refused. Delete files you no longer need, or ask the operator for a larger quota.',
      )
      expect((await segments(page)).usedPaint.color).toBe(DANGER)
      await shot(page, `${name}-near`)
    })
  })

  it('over the quota (lowered below the files): the bar is full and the warning says by how much', async () => {
    await eachScreen(250 * KiB, async (page, name) => {
      const meter = page.getByRole('meter', { name: 'Storage' })
      // aria-valuenow stays within its range; the text tells the whole truth.
      expect(await meter.getAttribute('aria-valuenow')).toBe(String(250 * KiB))
      expect(await text(page, '#storage-summary')).toBe('300 KiB used and 200 KiB reserved of 250 KiB (200%).')
      expect(await text(page, '#storage-free')).toBe('0 B')
      expect(await text(page, '#storage-warning')).toBe(
        'Over the quota. Your files take 50 KiB more than the quota allows. Uploads are refused until you delete at least that much, or the operator raises the quota.',
      )
      const bar = await segments(page)
      expect(bar.used).toBeCloseTo(1, 2)
      expect(bar.reserved).toBe(0)
      await shot(page, `${name}-over`)
    })
  })

  it('an upload refused over a small quota: the files page says so in words, in one request and through tus', async () => {
    // 40 KiB free (540 KiB, less 300 used and 200 reserved).
    await t.app.services.accounts.setLimits(accountId, { max_storage: 540 * KiB })
    const expected =
      'Failed: not enough storage: 40 KiB of 540 KiB free (200 KiB held by uploads in progress). Delete files, or ask the operator for a larger quota.'
    // Files on disk: Chromium reads them from their path, with no copy through the protocol.
    const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'fileshare-usage-'))
    const files = [
      { name: 'one-request.bin', size: 100 * KiB, endpoint: '/dashboard/api/files/upload' },
      // Over 8 MiB: tus, refused at its creation from Upload-Length, before any byte.
      { name: 'resumable.bin', size: 9 * 1024 * KiB, endpoint: '/dashboard/api/uploads' },
    ].map((file) => ({ ...file, path: path.join(folder, file.name) }))
    for (const file of files) await fs.writeFile(file.path, Buffer.alloc(file.size, 7))
    for (const { name, page } of pages) {
      await open(page, 'files')
      expect(await text(page, '#upload-limits')).toMatch(/ 40 KiB of storage free\.$/)
      for (const file of files) {
        const answer = page.waitForResponse(
          (response) => response.request().method() === 'POST' && new URL(response.url()).pathname === file.endpoint,
        )
        await page.locator('#file-input').setInputFiles(file.path)
        const refused = await answer
        expect(refused.status()).toBe(403)
        expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('storage_quota_exceeded')
        const row = page.locator('#uploads li.failed', { hasText: file.name })
        await expect.poll(() => row.locator('.upload-state').textContent()).toBe(expected)
      }
      const row = page.locator('#uploads li.failed').first()
      await row.scrollIntoViewIfNeeded()
      expect(await row.locator('.upload-state').evaluate(COLOR)).toBe(DANGER)
      await shot(page, `${name}-upload-refused`)
      await axeClean(page)
    }
    await fs.rm(folder, { recursive: true })
    // Nothing stored, nothing reserved by the refusals.
    const stats = (await (await fetch(`${t.api}/stats`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as {
      stats: { total_files: number; total_size: number; storage_reserved: number }
    }
    expect(stats.stats).toMatchObject({ total_files: 1, total_size: USED, storage_reserved: RESERVED })
  })

  it('no page raised an error, broke its CSP, or asked any host but the service', () => {
    for (const found of problems) expect(found).toEqual({ errors: [], foreignRequests: [] })
  })
})

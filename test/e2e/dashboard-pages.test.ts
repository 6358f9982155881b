import fs from 'node:fs/promises'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { chromiumAvailable, launchBrowser, watchContext, type PageProblems } from '../helpers/browser.js'
import { axeViolations, describeViolations, type AxeViolation } from '../helpers/axe.js'
import { ROOT } from '../helpers/server-process.js'
import { dashboardScreenshot, DESKTOP, openDashboardPage, PHONE, signInOnPage } from '../helpers/dashboard-browser.js'

const PUBLIC_HOST = 'files.example.test'
const DOWNLOAD_HOST = 'dl.example.test'
const PASSWORD = 'correct horse battery staple'
const dashboard = (page = '') => `http://${PUBLIC_HOST}/dashboard/${page}`
/** What a browser's navigation sends. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8'
const AXE_REPORT = path.join(ROOT, 'test-artifacts', 'axe', 'dashboard-pages.json')
const DANGER = 'rgb(179, 38, 30)'
/** The page's globals, for functions that run in it (this project's TypeScript has no DOM types). */
interface InPage {
  getComputedStyle(element: unknown): { accentColor: string; color: string }
  document: { createRange(): { selectNodeContents(node: unknown): void; getClientRects(): ArrayLike<{ top: number }> } }
}
const ACCENT = (element: unknown) => (globalThis as unknown as InPage).getComputedStyle(element).accentColor
const COLOR = (element: unknown) => (globalThis as unknown as InPage).getComputedStyle(element).color

const eventually = <T>(probe: () => Promise<T>, timeout = 15_000) => expect.poll(probe, { timeout, interval: 50 })

/**
 * The dashboard's pages as a new user meets them (issue 18), in Debian's Chromium on a desktop
 * (1366x900) and a phone (390x844, touch): the HTML 404s, the empty file list, the upload list,
 * paging in the address, focus after a delete, a plan without uploads, the keys table, the phone
 * layout, and axe-core on every page. Screenshots land in test-artifacts/screenshots/pages-*.png,
 * axe's findings in test-artifacts/axe/dashboard-pages.json.
 */
describe.skipIf(!chromiumAvailable)('dashboard pages on desktop and phone', () => {
  let t: TestApp
  let browser: Browser
  const contexts: BrowserContext[] = []
  const problems: PageProblems[] = []
  let desktop: Page
  let phone: Page
  let holderEmail: string
  /** axe's violations per page; pages of other owners are reported here, not failed. */
  const axeFindings: Record<string, AxeViolation[]> = {}

  async function newContext(kind: 'desktop' | 'phone'): Promise<Page> {
    const context = await browser.newContext(
      kind === 'desktop' ? { viewport: DESKTOP } : { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
    )
    contexts.push(context)
    context.setDefaultTimeout(10_000)
    problems.push(watchContext(context, [PUBLIC_HOST, DOWNLOAD_HOST]))
    return context.newPage()
  }

  async function holder(plan: string): Promise<string> {
    const email = `${plan}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.test`
    const { accountId } = await t.createAccount(plan, email)
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    return email
  }

  const signIn = (page: Page, email: string) =>
    signInOnPage(page, { signIn: dashboard('sign-in'), files: dashboard('files') }, email, PASSWORD)
  // The API reference renders the whole OpenAPI document first (10 to 15 s of CPU in Swagger UI on a busy 2-core machine).
  const open = (page: Page, name: string) => openDashboardPage(page, dashboard(name), name === 'reference' ? 45_000 : undefined)
  const screenshot = dashboardScreenshot

  /** axe on the page as it is: our own pages must have no violation; others' are only recorded. */
  async function axe(page: Page, name: string, { own = true, csp = 'self' as 'self' | 'no-script' } = {}) {
    const violations = await axeViolations(page, { csp })
    axeFindings[name] = violations
    if (own) expect(violations, describeViolations(violations)).toEqual([])
  }

  /** Uploads through the dashboard's own endpoint, from the page (as its script does), without the upload list. */
  async function uploadFromPage(page: Page, names: string[]) {
    await page.evaluate(async (list) => {
      const session = (await (await fetch('api/session')).json()) as { csrf_token: string }
      for (const name of list) {
        const form = new FormData()
        form.append('file', new Blob([`bytes of ${name}`]), name)
        const answer = await fetch('api/files/upload', { method: 'POST', headers: { 'x-csrf-token': session.csrf_token }, body: form })
        if (answer.status !== 201) throw new Error(`upload of ${name}: ${answer.status}`)
      }
    }, names)
  }

  /** The names the dashboard's API lists on a page of the list. */
  const namesOnPage = (page: Page, number: number) =>
    page.evaluate(
      async (n) =>
        ((await (await fetch(`api/files?page=${n}&limit=20`)).json()) as { files: { filename: string }[] }).files.map((f) => f.filename),
      number,
    )
  const shownNames = (page: Page) => page.locator('#files-body td.name').allTextContents()

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}`, FILESHARE_DOWNLOAD_URL: `http://${DOWNLOAD_HOST}` })
    const server = new URL(t.url).host
    browser = await launchBrowser({ [PUBLIC_HOST]: server, [DOWNLOAD_HOST]: server })
    holderEmail = await holder('pro')
    ;[desktop, phone] = await Promise.all([newContext('desktop'), newContext('phone')])
    await signIn(desktop, holderEmail)
    await signIn(phone, holderEmail)
  })
  afterAll(async () => {
    await fs.mkdir(path.dirname(AXE_REPORT), { recursive: true })
    await fs.writeFile(AXE_REPORT, JSON.stringify(axeFindings, null, 2))
    await browser?.close()
    await t?.close()
  })

  it('an empty list is an empty state: a call to upload, no table header, no pager', async () => {
    for (const [page, kind] of [
      [desktop, 'desktop'],
      [phone, 'phone'],
    ] as const) {
      await open(page, 'files')
      expect(await page.locator('#files-table').isVisible()).toBe(false)
      expect(await page.locator('th:visible').count()).toBe(0)
      expect(await page.locator('#pager').isVisible()).toBe(false)
      expect(await page.getByRole('button', { disabled: true }).count()).toBe(0)
      expect(await page.locator('#empty').textContent()).toContain('No files yet')
      // The call to upload opens the file picker.
      const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Upload a file' }).click()])
      expect(chooser.isMultiple()).toBe(true)
      // "Drag files here" only where there is a mouse to drag with.
      expect(await page.getByText('Drag files here, or').isVisible()).toBe(kind === 'desktop')
      await screenshot(page, `pages-${kind}-files-empty`)
      await axe(page, `files (empty), ${kind}`)
    }
  })

  it('the upload list: a link and a copy button per finished row, its own scroll box, a red failed row, cleared by the next batch or a button', async () => {
    const page = desktop
    await open(page, 'files')
    const batch = Array.from({ length: 30 }, (_, i) => ({
      name: `batch-${String(i + 1).padStart(2, '0')}.txt`,
      mimeType: 'text/plain',
      buffer: Buffer.from(`file ${i + 1}`),
    }))
    await page.locator('#file-input').setInputFiles(batch)
    // 30 uploads one after another: 15 s was not always enough on a busy 2-core machine (29 done).
    await eventually(() => page.locator('#uploads li.done').count(), 45_000).toBe(30)

    // The page does not grow with the batch: the list scrolls inside a box of its own.
    const box = await page.locator('#uploads').evaluate((list) => ({ height: list.clientHeight, content: list.scrollHeight }))
    expect(box.height).toBeLessThan(400)
    expect(box.content).toBeGreaterThan(box.height)
    expect(await page.evaluate('document.documentElement.scrollHeight')).toBeLessThan(2600)

    // Every finished row shows its public link, with a button that copies it.
    const row = page.locator('#uploads li', { hasText: 'batch-27.txt' })
    const link = row.locator('.upload-link a')
    const href = (await link.getAttribute('href'))!
    expect(href).toMatch(new RegExp(`^http://${DOWNLOAD_HOST}/download/[A-Za-z0-9_-]+$`))
    expect(await link.textContent()).toBe(href)
    expect(await page.locator('#uploads li.done .upload-link button').count()).toBe(30)
    await page.evaluate(`document.addEventListener('copy', () => { window.copied = String(getSelection()) }, { once: true })`)
    await row.getByRole('button', { name: 'Copy link to batch-27.txt' }).click()
    expect(await page.evaluate('window.copied')).toBe(href)
    expect(
      await page.locator('#files-body tr', { hasText: 'batch-27.txt' }).getByRole('button', { name: /Copy/ }).getAttribute('data-link'),
    ).toBe(href)
    expect(await row.locator('progress').evaluate(ACCENT)).not.toBe(DANGER)
    await screenshot(page, 'pages-desktop-upload-batch')
    await axe(page, 'files (uploads), desktop')

    // A failed upload: its row turns red, and the next batch starts a list of its own.
    await page.route('**/dashboard/api/files/upload', (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({ success: false, error: { code: 'service_unavailable', message: 'Storage is away.' } }),
      }),
    )
    await page.locator('#file-input').setInputFiles({ name: 'fails.txt', mimeType: 'text/plain', buffer: Buffer.from('x') })
    const failed = page.locator('#uploads li.failed')
    await eventually(() => failed.locator('.upload-state').textContent()).toBe('Failed: Storage is away.')
    await page.unroute('**/dashboard/api/files/upload')
    expect(await page.locator('#uploads li').count()).toBe(1)
    expect(await failed.locator('progress').evaluate(ACCENT)).toBe(DANGER)
    expect(await failed.locator('.upload-state').evaluate(COLOR)).toBe(DANGER)
    await screenshot(page, 'pages-desktop-upload-failed')

    // "Clear list" empties it; focus stays in the upload box.
    await page.getByRole('button', { name: 'Clear list' }).click()
    expect(await page.locator('#uploads-panel').isVisible()).toBe(false)
    expect(await page.evaluate('document.activeElement?.id')).toBe('file-input')
  }, 90_000)

  it('pages: numbers and first/last, the page in the address (reload and Back keep it), the list top in view', async () => {
    const page = desktop
    await open(page, 'files')
    await uploadFromPage(
      page,
      Array.from({ length: 35 }, (_, i) => `paged-${String(i + 1).padStart(2, '0')}.txt`),
    )
    await open(page, 'files')
    expect(await page.locator('#page-info').textContent()).toBe('Page 1 of 4 (65 files)')
    const pager = page.getByRole('navigation', { name: 'Pages of files' })
    expect(await pager.getByRole('link').allTextContents()).toEqual(['1', '2', '3', '4', 'Next ›', 'Last »'])
    expect(await pager.getByRole('link', { name: 'Page 1' }).getAttribute('aria-current')).toBe('page')

    await pager.getByRole('link', { name: 'Page 3' }).click()
    await page.waitForURL(dashboard('files?page=3'))
    await eventually(() => shownNames(page)).toEqual(await namesOnPage(page, 3))
    expect(await page.evaluate('document.activeElement?.id')).toBe('list-title')
    const top = (await page.locator('#list-title').boundingBox())!.y
    expect(top).toBeGreaterThanOrEqual(-2)
    expect(top).toBeLessThan(40)
    expect(await pager.getByRole('link', { name: 'Page 3' }).getAttribute('aria-current')).toBe('page')
    await screenshot(page, 'pages-desktop-pager')

    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.locator('#page-info').textContent()).toBe('Page 3 of 4 (65 files)')
    expect(await shownNames(page)).toEqual(await namesOnPage(page, 3))

    await page.goBack()
    await page.waitForURL(dashboard('files'))
    await eventually(() => page.locator('#page-info').textContent()).toBe('Page 1 of 4 (65 files)')
    await page.goForward()
    await page.waitForURL(dashboard('files?page=3'))
    await eventually(() => page.locator('#page-info').textContent()).toBe('Page 3 of 4 (65 files)')

    await pager.getByRole('link', { name: 'Last page' }).click()
    await page.waitForURL(dashboard('files?page=4'))
    await eventually(() => shownNames(page)).toEqual(await namesOnPage(page, 4))
    expect(await pager.getByRole('link', { name: 'Next page' }).isVisible()).toBe(false)
    expect(await pager.getByRole('link', { name: 'First page' }).isVisible()).toBe(true)
    await axe(page, 'files (page 4), desktop')

    // A phone: the pager stays on one line.
    await open(phone, 'files?page=2')
    expect(await phone.locator('#page-short').textContent()).toBe('2 / 4')
    const pagerBox = (await phone.locator('#pager').boundingBox())!
    expect(pagerBox.height).toBeLessThan(50)
    const tops = await phone.locator('#pager > a').evaluateAll((links) => links.map((link) => link.getBoundingClientRect().top))
    expect(new Set(tops).size).toBe(1)
    await phone.locator('#pager').scrollIntoViewIfNeeded()
    await screenshot(phone, 'pages-phone-pager')
  })

  it('after a delete, focus goes to the row that took its place, not to the page body', async () => {
    for (const page of [desktop, phone]) {
      await open(page, 'files?page=4')
      const rows = page.locator('#files-body tr')
      const before = await shownNames(page)
      await rows
        .nth(1)
        .getByRole('button', { name: /^Delete / })
        .click()
      await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click()
      await eventually(() => page.locator('#status').textContent()).toBe(`Deleted ${before[1]}.`)
      await eventually(() => page.evaluate("document.activeElement?.closest('tr')?.querySelector('td.name')?.textContent ?? null")).toBe(
        before[2],
      )
      expect(await page.evaluate('document.activeElement?.tagName')).toBe('A')
    }
  })

  it('a phone: a two-line header, compact file cards with their buttons side by side, no "drag"', async () => {
    await open(phone, 'files')
    const header = (await phone.locator('header.top').boundingBox())!
    expect(header.height).toBeLessThanOrEqual(110)
    const navLinks = await phone.locator('header nav a').evaluateAll((links) => links.map((link) => link.getBoundingClientRect().top))
    expect(new Set(navLinks).size).toBe(1)
    const card = (await phone.locator('#files-body tr').first().boundingBox())!
    expect(card.height).toBeLessThan(140)
    const buttons = await phone
      .locator('#files-body tr')
      .first()
      .locator('td.link a, td.link button, td.actions button')
      .evaluateAll((elements) => elements.map((element) => Math.round(element.getBoundingClientRect().top)))
    expect(buttons).toHaveLength(3)
    expect(Math.max(...buttons) - Math.min(...buttons)).toBeLessThan(8)
    // The fourth, "Links" (a file's links and expiry, test/e2e/dashboard-links.test.ts), ends the name's line.
    const [name, links] = await Promise.all([
      phone.locator('#files-body tr td.name').first().boundingBox(),
      phone.locator('#files-body tr td.more button').first().boundingBox(),
    ])
    expect(links!.y).toBeLessThan(name!.y + name!.height)
    expect(await phone.locator('.drag-hint').isVisible()).toBe(false)
    expect(await phone.evaluate('document.documentElement.scrollWidth')).toBe(PHONE.width)
    await screenshot(phone, 'pages-phone-files')
    await axe(phone, 'files, phone')
    await open(phone, 'usage')
    await screenshot(phone, 'pages-phone-usage')
    await axe(phone, 'usage, phone')
  })

  it('a plan without uploads: the upload box is off and says why, never "up to 0 B"', async () => {
    const page = await newContext('desktop')
    const email = await holder('free')
    await signIn(page, email)
    expect(await page.locator('#file-input').isDisabled()).toBe(true)
    const limits = (await page.locator('#upload-limits').textContent())!
    expect(limits).toMatch(/^Your plan, free, does not include uploads\./)
    expect(await page.locator('#dropzone').textContent()).not.toContain('0 B')
    expect(await page.getByRole('button', { name: 'Upload a file' }).isVisible()).toBe(false)
    expect(await page.getByText('Drag files here, or').isVisible()).toBe(false)
    // A drop does nothing but say why.
    await page.evaluate(`window.dropped = new DataTransfer(); window.dropped.items.add(new File(['x'], 'x.txt'))`)
    await page.dispatchEvent('#dropzone', 'drop', { dataTransfer: await page.evaluateHandle('window.dropped') })
    expect(await page.locator('#status').textContent()).toBe(limits)
    expect(await page.locator('#uploads li').count()).toBe(0)
    await screenshot(page, 'pages-desktop-files-free-plan')
    await axe(page, 'files (free plan), desktop')
  })

  it('the keys table: a long name wraps, dates stay on one line, nothing leaves the screen; a new key shows whole on a phone', async () => {
    const longName = 'k'.repeat(100)
    await open(desktop, 'settings')
    await desktop.evaluate(async (name) => {
      const session = (await (await fetch('api/session')).json()) as { csrf_token: string }
      const headers = { 'x-csrf-token': session.csrf_token, 'content-type': 'application/json' }
      for (const keyName of [name, 'short']) await fetch('api/keys', { method: 'POST', headers, body: JSON.stringify({ name: keyName }) })
    }, longName)
    const dateLines = (page: Page) =>
      page.locator('#keys-body td').evaluateAll((cells: { dataset: { label?: string }; textContent: string | null }[]) =>
        cells
          .filter((cell) => /^(Created|Last used|State)/.test(cell.dataset.label ?? ''))
          .map((cell) => {
            const range = (globalThis as unknown as InPage).document.createRange()
            range.selectNodeContents(cell)
            const lines = new Set(Array.from(range.getClientRects(), (rect) => Math.round(rect.top)))
            return `${cell.textContent}: ${lines.size}`
          }),
      )
    for (const [page, kind] of [
      [desktop, 'desktop'],
      [phone, 'phone'],
    ] as const) {
      await open(page, 'settings')
      const row = page.locator('#keys-body tr', { hasText: longName })
      expect(await row.count()).toBe(1)
      const width = page.viewportSize()!.width
      const revoke = (await row.getByRole('button', { name: /^Revoke/ }).boundingBox())!
      expect(revoke.x + revoke.width).toBeLessThanOrEqual(width)
      const wrap = await page.locator('#keys-table').evaluate((table) => {
        const holder = table.parentElement!
        return { scroll: holder.scrollWidth, client: holder.clientWidth }
      })
      expect(wrap.scroll, kind).toBeLessThanOrEqual(wrap.client)
      for (const line of await dateLines(page)) expect(line, kind).toMatch(/: 1$/)
      await row.scrollIntoViewIfNeeded()
      await screenshot(page, `pages-${kind}-settings-keys`)
      await axe(page, `settings, ${kind}`, { own: false })
    }
    // A new key on a phone: the whole key in view, wrapping, with its copy button.
    await phone.getByLabel('Key name').fill('phone key')
    await phone.getByRole('button', { name: 'Create key' }).click()
    const shown = phone.getByLabel('New API key')
    await eventually(() => shown.inputValue()).toMatch(/^fsk_/)
    const fits = await shown.evaluate((field) => ({
      tag: field.tagName,
      whole: field.scrollWidth <= field.clientWidth && field.scrollHeight <= field.clientHeight + 1,
      right: field.getBoundingClientRect().right,
    }))
    expect(fits, 'the new key shows whole on a phone').toMatchObject({ whole: true })
    expect(fits.right).toBeLessThanOrEqual(PHONE.width)
    expect(await phone.getByRole('button', { name: 'Copy key' }).isVisible()).toBe(true)
    await phone.locator('#new-key').scrollIntoViewIfNeeded()
    await screenshot(phone, 'pages-phone-settings-new-key')
  })

  it('a dead public link and an unknown dashboard path: an HTML 404 for browsers, JSON for API clients', async () => {
    // A link that once worked (its file deleted since) and one that never did: the same page, byte for byte.
    await open(desktop, 'files')
    const deleted = await desktop.evaluate(async () => {
      const session = (await (await fetch('api/session')).json()) as { csrf_token: string }
      const form = new FormData()
      form.append('file', new Blob(['soon gone']), 'soon-gone.txt')
      const headers = { 'x-csrf-token': session.csrf_token }
      const file = (await (await fetch('api/files/upload', { method: 'POST', headers, body: form })).json()) as {
        file_id: number
        public_link: string
      }
      await fetch(`api/files/${file.file_id}`, { method: 'DELETE', headers })
      return new URL(file.public_link).pathname
    })
    const pages: string[] = []
    for (const target of [deleted, '/download/never-was-a-link']) {
      const answer = await fetch(`${t.url}${target}`, { headers: { accept: BROWSER_ACCEPT } })
      expect(answer.status).toBe(404)
      expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(answer.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'sha256-[^']+'; /)
      expect(answer.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
      expect(answer.headers.get('x-frame-options')).toBe('DENY')
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff')
      expect(answer.headers.get('vary')).toBe('Accept')
      pages.push(await answer.text())
      // API clients keep the JSON error body.
      for (const accept of ['application/json', '*/*', 'application/json, text/html;q=0.5']) {
        const json = await fetch(`${t.url}${target}`, { headers: { accept } })
        expect(json.status).toBe(404)
        expect(await json.json()).toMatchObject({ success: false, error: { code: 'not_found' } })
      }
      const head = await fetch(`${t.url}${target}`, { method: 'HEAD', headers: { accept: BROWSER_ACCEPT } })
      expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([404, 'text/html; charset=utf-8', ''])
    }
    expect(pages[0]).toBe(pages[1])
    expect(pages[0]).not.toMatch(/<script/i)

    // In the browser, on the download host and on the public host.
    for (const [page, kind] of [
      [desktop, 'desktop'],
      [phone, 'phone'],
    ] as const) {
      const answer = (await page.goto(`http://${DOWNLOAD_HOST}${deleted}`))!
      expect(answer.status()).toBe(404)
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This link no longer works')
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(page.viewportSize()!.width)
      await screenshot(page, `pages-${kind}-download-404`)
      await axe(page, `download 404, ${kind}`, { csp: 'no-script' })
    }
    const onPublicHost = (await desktop.goto(`http://${PUBLIC_HOST}/download/never-was-a-link`))!
    expect(onPublicHost.status()).toBe(404)
    expect(await onPublicHost.text()).toBe(pages[0])

    // An unknown dashboard path, however deep: a page with a way back to the files.
    for (const [page, kind] of [
      [desktop, 'desktop'],
      [phone, 'phone'],
    ] as const) {
      const answer = (await page.goto(dashboard('no/such/page')))!
      expect(answer.status()).toBe(404)
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Page not found')
      await screenshot(page, `pages-${kind}-dashboard-404`)
      await axe(page, `dashboard 404, ${kind}`, { csp: 'no-script' })
      await page.getByRole('link', { name: 'Go to your files' }).click()
      await page.waitForURL(dashboard('files'))
    }
    const json = await fetch(`${t.url}/dashboard/no/such/page`, { headers: { accept: 'application/json' } })
    expect(await json.json()).toMatchObject({ success: false, error: { code: 'not_found' } })
  })

  // ---- Round 3 (issue 37): what was seen and mended, and the dark theme ----

  /** A nav's box, and where its links are: what shows of the list that scrolls sideways on a phone. */
  const navState = (page: Page) =>
    page.evaluate(`(() => {
      const nav = document.querySelector('header.top nav')
      const box = nav.getBoundingClientRect()
      const links = [...nav.querySelectorAll('a')].map((a) => {
        const r = a.getBoundingClientRect()
        return { text: a.textContent, current: a.getAttribute('aria-current') === 'page', inside: r.left >= box.left - 1 && r.right <= box.right + 1 }
      })
      return { classes: [...nav.classList].sort(), after: getComputedStyle(nav, '::after').content, before: getComputedStyle(nav, '::before').content, links }
    })()`) as Promise<{ classes: string[]; after: string; before: string; links: { text: string; current: boolean; inside: boolean }[] }>

  it('a phone: the pages in the header scroll sideways with a cue on the side with more, the current page in view', async () => {
    await open(phone, 'files')
    let nav = await navState(phone)
    expect(nav.links.map((link) => link.text)).toContain('API reference')
    expect(nav.links.find((link) => link.text === 'API reference')!.inside).toBe(false)
    expect(nav.classes).toEqual(['more-after'])
    expect(nav.after).not.toBe('none')
    expect(nav.before).toBe('none')
    await screenshot(phone, 'pages-phone-nav-files')
    await axe(phone, 'files (nav with a cue), phone')

    // A page far along the list: scrolled into view, with more on both sides.
    await open(phone, 'get-started')
    nav = await navState(phone)
    expect(nav.links.find((link) => link.current)).toMatchObject({ text: 'Get started', inside: true })
    expect(nav.classes).toEqual(['more-after', 'more-before'])
    await screenshot(phone, 'pages-phone-nav-get-started')

    // Scrolled to its end: the last page shows, and the cue moves to the start.
    await phone.locator('header nav ul').evaluate((list) => {
      ;(list as unknown as { scrollLeft: number; scrollWidth: number }).scrollLeft = (
        list as unknown as { scrollWidth: number }
      ).scrollWidth
    })
    await eventually(() => navState(phone).then((state) => state.classes)).toEqual(['more-before'])
    nav = await navState(phone)
    expect(nav.links.find((link) => link.text === 'API reference')!.inside).toBe(true)
    expect(nav.after).toBe('none')

    // A desktop: every page in view, no cue.
    await open(desktop, 'get-started')
    nav = await navState(desktop)
    expect(nav.classes).toEqual([])
    expect(nav.links.every((link) => link.inside)).toBe(true)
    const right = await desktop.locator('header nav a').evaluateAll((links) => links.map((link) => link.getBoundingClientRect().right))
    expect(Math.max(...right)).toBeLessThanOrEqual(DESKTOP.width)
  })

  it('a phone: a file card keeps Download, Copy link and Delete on one line under its figures, whatever the size; Copy link answers at the button', async () => {
    await open(phone, 'files')
    await phone.evaluate(async () => {
      const session = (await (await fetch('api/session')).json()) as { csrf_token: string }
      const form = new FormData()
      form.append('file', new Blob([new Uint8Array(140_000)]), 'quarterly report.pdf')
      await fetch('api/files/upload', { method: 'POST', headers: { 'x-csrf-token': session.csrf_token }, body: form })
    })
    await open(phone, 'files')
    const row = phone.locator('#files-body tr.file').first()
    expect(await row.locator('td.name').textContent()).toBe('quarterly report.pdf')
    expect(await row.locator('td.size').textContent()).toBe('137 KiB')
    const boxes = async (selector: string) => (await row.locator(selector).first().boundingBox())!
    const [link, copy, remove] = await Promise.all(['td.link a', 'td.link button', 'td.actions button'].map(boxes))
    expect(Math.max(link!.y, copy!.y, remove!.y) - Math.min(link!.y, copy!.y, remove!.y)).toBeLessThan(8)
    // Size, date and downloads sit above that line, never beside the link (off its baseline) or pushing Delete down.
    for (const figure of ['td.size', 'td.date', 'td.downloads']) {
      const box = await boxes(figure)
      expect(box.y + box.height, figure).toBeLessThanOrEqual(Math.min(link!.y, copy!.y, remove!.y) + 1)
    }
    const size = await boxes('td.size')
    const date = await boxes('td.date')
    expect(Math.abs(size.y - date.y)).toBeLessThan(2)
    expect(remove!.x + remove!.width).toBeLessThanOrEqual(PHONE.width)
    await screenshot(phone, 'pages-phone-file-card-137-kib')
    await axe(phone, 'files (a 137 KiB card), phone')

    // Copy link, tapped on a card far below the page's status line: the button says "Copied", a live region beside it says what.
    const lower = phone.locator('#files-body tr.file').nth(6)
    // By its place: its name changes while it says "Copied".
    const button = lower.locator('td.link button')
    const name = (await button.getAttribute('aria-label'))!.replace(/^Copy link to /, '')
    await button.scrollIntoViewIfNeeded()
    await button.tap()
    expect(await button.textContent()).toBe('Copied')
    expect(await button.getAttribute('aria-label')).toMatch(/^Copied \(Copy link to .+\)$/)
    const note = lower.locator('td.link .action-note[role=status]')
    await eventually(() => note.textContent()).toBe(`Copied the public link of ${name}.`)
    const shown = (await button.boundingBox())!
    expect(shown.y).toBeGreaterThanOrEqual(0)
    expect(shown.y + shown.height).toBeLessThanOrEqual(PHONE.height)
    expect(await phone.locator('#status').textContent()).toBe('')
    // The button keeps its width (nothing beside it moves) and gets its label back.
    expect(Math.round(shown.width)).toBe(Math.round(copy!.width))
    await screenshot(phone, 'pages-phone-copied')
    await axe(phone, 'files (copied), phone')
    await eventually(() => button.textContent(), 5_000).toBe('Copy link')
    expect(await button.getAttribute('aria-label')).toBe(`Copy link to ${name}`)
  })

  it('the pager starts with the page numbers on page 1 (no empty room for First and Previous); Usage keeps its spacing', async () => {
    await open(desktop, 'files')
    const pager = desktop.getByRole('navigation', { name: 'Pages of files' })
    expect(await pager.isVisible()).toBe(true)
    expect(await desktop.locator('#first').boundingBox()).toBeNull()
    expect(await desktop.locator('#prev').boundingBox()).toBeNull()
    const [pagerBox, numbers] = await Promise.all([pager.boundingBox(), desktop.locator('#page-numbers').boundingBox()])
    expect(Math.abs(numbers!.x - pagerBox!.x)).toBeLessThan(2)
    await pager.scrollIntoViewIfNeeded()
    await screenshot(desktop, 'pages-desktop-pager-page-1')

    for (const [page, kind] of [
      [desktop, 'desktop'],
      [phone, 'phone'],
    ] as const) {
      await open(page, 'usage')
      // The note under "Today and in total" had no room below it before the figures.
      const card = page.locator('section', { has: page.getByRole('heading', { name: 'Today and in total' }) })
      const [hint, figures] = await Promise.all([card.locator('p.hint').boundingBox(), card.locator('dl.figures').boundingBox()])
      expect(figures!.y - (hint!.y + hint!.height), kind).toBeGreaterThanOrEqual(8)
      // Figures of one row stand on one line, however many lines their names take ("Reserved by uploads in progress").
      const tops = await page
        .locator('.storage-figures dd')
        .evaluateAll((values) => values.map((value) => Math.round(value.getBoundingClientRect().top)))
      const firstRow = kind === 'desktop' ? tops : tops.slice(0, 2)
      expect(new Set(firstRow).size, kind).toBe(1)
      await screenshot(page, `pages-${kind}-usage-spacing`)
      await axe(page, `usage, ${kind}`)
    }
  })

  it('dark theme: the system one, or one chosen in the header and remembered, applied before the first paint; axe-core on every page in it', async () => {
    // The choice is in the header of every page, the sign-in page too.
    await open(desktop, 'files')
    const choice = desktop.getByRole('combobox', { name: 'Colour theme' })
    expect(await choice.inputValue()).toBe('system')
    expect(await desktop.evaluate('document.documentElement.dataset.theme ?? null')).toBeNull()
    const background = (page: Page) => page.evaluate('getComputedStyle(document.documentElement).backgroundColor')
    expect(await background(desktop)).toBe('rgb(243, 245, 248)')
    await choice.selectOption('dark')
    expect(await desktop.evaluate('document.documentElement.dataset.theme')).toBe('dark')
    expect(await background(desktop)).toBe('rgb(15, 19, 25)')
    expect(await desktop.evaluate("localStorage.getItem('fileshare-theme')")).toBe('dark')

    // Remembered, and on <html> before the body is parsed: no page is drawn light first.
    const fresh = await desktop.context().newPage()
    await fresh.addInitScript({
      content: `new MutationObserver((_, observer) => {
        if (!document.body) return
        window.themeAtBody = document.documentElement.dataset.theme ?? 'none'
        observer.disconnect()
      }).observe(document, { childList: true, subtree: true })`,
    })
    await open(fresh, 'usage')
    expect(await fresh.evaluate('window.themeAtBody')).toBe('dark')
    expect(await fresh.getByRole('combobox', { name: 'Colour theme' }).inputValue()).toBe('dark')
    await fresh.close()

    // Every page of the dashboard in the dark theme, chosen (desktop) or the system's (phone): axe-core finds nothing.
    await phone.emulateMedia({ colorScheme: 'dark' })
    try {
      for (const name of ['files', 'usage', 'requests', 'webhooks', 'activity', 'get-started']) {
        for (const [page, kind] of [
          [desktop, 'desktop'],
          [phone, 'phone'],
        ] as const) {
          await open(page, name)
          expect(await background(page), `${name}, ${kind}`).toBe('rgb(15, 19, 25)')
          await screenshot(page, `pages-${kind}-dark-${name}`)
          await axe(page, `${name}, dark, ${kind}`)
        }
      }
      // The account helper's pages: reported here, not failed.
      await open(desktop, 'settings')
      await axe(desktop, 'settings, dark, desktop', { own: false })
      await screenshot(desktop, 'pages-desktop-dark-settings')
      const visitor = await newContext('phone')
      await visitor.emulateMedia({ colorScheme: 'dark' })
      await visitor.goto(dashboard('sign-in'))
      expect(await visitor.getByRole('combobox', { name: 'Colour theme' }).isVisible()).toBe(true)
      expect(await background(visitor)).toBe('rgb(15, 19, 25)')
      await screenshot(visitor, 'pages-phone-dark-sign-in')
      await axe(visitor, 'sign-in, dark, phone', { own: false })
    } finally {
      await phone.emulateMedia({ colorScheme: 'light' })
    }

    // Back to the system's: the choice is forgotten, and a light system gives the light theme.
    await open(desktop, 'files')
    await desktop.getByRole('combobox', { name: 'Colour theme' }).selectOption('system')
    expect(await desktop.evaluate('document.documentElement.dataset.theme ?? null')).toBeNull()
    expect(await desktop.evaluate("localStorage.getItem('fileshare-theme')")).toBeNull()
    expect(await background(desktop)).toBe('rgb(243, 245, 248)')
  }, 90_000)

  it('axe-core on the pages of other owners (reported, not failed): sign-in, invite, usage, API reference', async () => {
    const visitor = await newContext('desktop')
    await visitor.goto(dashboard('sign-in'))
    await axe(visitor, 'sign-in, desktop', { own: false })
    await visitor.goto(dashboard('invite'))
    await axe(visitor, 'invite, desktop', { own: false })
    await open(desktop, 'usage')
    await axe(desktop, 'usage, desktop')
    await open(desktop, 'reference')
    await desktop.waitForSelector('.swagger-ui .opblock', { timeout: 15_000 }).catch(() => undefined)
    await axe(desktop, 'reference, desktop', { own: false })
    console.info(
      `axe-core (test-artifacts/axe/dashboard-pages.json):\n${Object.entries(axeFindings)
        .map(([name, found]) => `  ${name}: ${found.length === 0 ? 'no violation' : describeViolations(found).replace(/\n/g, '\n    ')}`)
        .join('\n')}`,
    )
  }, 90_000)

  it('no page raised an error, broke its CSP, or asked any host but the service', () => {
    for (const found of problems) expect(found).toEqual({ errors: [], foreignRequests: [] })
  })
})

import fs from 'node:fs/promises'
import path from 'node:path'
import type { Browser, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import {
  chromiumAvailable,
  launchBrowser,
  screenshot as fullPageScreenshot,
  SCREENSHOT_DIR,
  watchContext,
  type PageProblems,
} from '../helpers/browser.js'
import { axeViolations, describeViolations } from '../helpers/axe.js'

const PUBLIC_HOST = 'files.example.test'
const PASSWORD = 'correct horse battery staple'
const DESKTOP = { width: 1366, height: 900 }
const PHONE = { width: 390, height: 844 }
const dashboard = (page = '') => `http://${PUBLIC_HOST}/dashboard/${page}`
/** A request's link: the public URL, /r/, a 43-character base64url token. */
const REQUEST_URL = new RegExp(`^http://${PUBLIC_HOST.replace(/\./g, '\\.')}/r/[A-Za-z0-9_-]{43}$`)
/** What the page shows for a time to the minute: `YYYY-MM-DD HH:MM UTC`. */
const MINUTE_UTC = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/
const LABEL = 'Invoices for March'
/** A label and a message that would be markup if the page wrote them as HTML. */
const HTML_LABEL = '<img src=x id=injected onerror="window.pwned=1"><b>bold</b> & co'
const HTML_MESSAGE = '<script>window.pwned = 2</script>\n<i>second line</i>'

const eventually = <T>(probe: () => Promise<T>, timeout = 15_000) => expect.poll(probe, { timeout, interval: 50 })

/** The page's globals, for functions that run in it (this project's TypeScript has no DOM types). */
interface InPage {
  document: {
    documentElement: { scrollWidth: number; clientWidth: number }
    activeElement: { getAttribute(name: string): string | null; textContent: string | null; tagName: string } | null
  }
}

interface UploadRequest {
  request_id: number
  url: string
  label: string
  status: string
  files_received: number
  bytes_received: number
}

/**
 * Issue 34 in the dashboard, in Chromium on a desktop (1366x900) and a phone (390x844, touch): the
 * Upload requests page against a real server. A request created through the form (the page's own
 * checks first), its link shown once created and copied, from the box and from its card; guests'
 * uploads over HTTP (tus creation-with-upload with `Authorization: UploadRequest <token>`) arriving
 * in the open list of files by themselves, with the counters; Close (confirmed; the guest is then
 * refused) and Delete (confirmed; the files stay); a label and a message with markup shown as
 * text. axe-core in both viewports. Screenshots: test-artifacts/screenshots/requests-*.png.
 */
describe.skipIf(!chromiumAvailable)('the Upload requests page of the dashboard', () => {
  let t: TestApp
  let browser: Browser
  let apiKey: string
  let email: string
  let desktop: Page
  let phone: Page
  const problems: PageProblems[] = []
  /** The request made through the form, as the page showed its link. */
  let requestUrl: string

  async function newPage(kind: 'desktop' | 'phone'): Promise<Page> {
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

  async function open(page: Page) {
    await page.goto(dashboard('requests'))
    await page.waitForSelector('body[data-ready="true"]')
  }

  /** Desktop: the whole page. Phone: what the screen shows (a full-page capture drops the touch emulation). */
  async function shot(page: Page, name: string) {
    if (page.viewportSize()!.width > PHONE.width) return fullPageScreenshot(page, `requests-${name}`)
    await fs.mkdir(SCREENSHOT_DIR, { recursive: true })
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `requests-${name}.png`) })
  }

  async function axeClean(page: Page, what: string) {
    const violations = await axeViolations(page)
    expect(violations, `${what}\n${describeViolations(violations)}`).toEqual([])
  }

  /** Nothing on the page scrolls sideways. */
  async function fitsSideways(page: Page, what: string) {
    const widths = await page.evaluate(() => {
      const root = (globalThis as unknown as InPage).document.documentElement
      return { scroll: root.scrollWidth, client: root.clientWidth }
    })
    expect(widths.scroll, what).toBeLessThanOrEqual(widths.client)
  }

  const activeText = (page: Page) => page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.textContent ?? null)

  /** The card of the request with this label. */
  const card = (page: Page, label: string) =>
    page.locator('li.request').filter({ has: page.getByRole('heading', { name: label, exact: true }) })

  /** A card as the page shows it: its status, message, facts, link and visible buttons. */
  const cardText = (item: Locator) =>
    item.evaluate((element) => {
      const text = (selector: string) => {
        const found = element.querySelector(selector) as unknown as { textContent: string; hidden: boolean } | null
        return found && !found.hidden ? found.textContent : null
      }
      return {
        status: text('.request-state'),
        message: text('.request-message'),
        files: text('.request-files'),
        bytes: text('.request-bytes'),
        expires: text('.request-expires'),
        maxFileSize: text('.request-max-file-size'),
        kept: text('.request-file-lifetime'),
        password: text('.request-password'),
        created: text('.request-created'),
        url: text('.request-url'),
        buttons: [...element.querySelectorAll('.request-actions button')]
          .filter((button) => !(button as unknown as { hidden: boolean }).hidden)
          .map((button) => button.textContent),
      }
    })

  /** The files table of a card: name, size, uploaded, expires, row by row. */
  const fileRows = (item: Locator) =>
    item
      .locator('.request-files-table tbody tr')
      .evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('td')].slice(0, 4).map((cell) => cell.textContent)))

  /** The API, with the account's key, from this process. */
  const withKey = (pathName: string, init: RequestInit = {}) =>
    fetch(`${t.api}${pathName}`, { ...init, headers: { authorization: `Bearer ${apiKey}`, ...init.headers } })

  /** A guest's one-request upload (tus creation-with-upload), as the API sheet describes it. */
  function guestUpload(url: string, name: string, content: string) {
    const token = new URL(url).pathname.split('/').pop()!
    return fetch(`${t.api}/uploads`, {
      method: 'POST',
      headers: {
        'tus-resumable': '1.0.0',
        authorization: `UploadRequest ${token}`,
        'upload-length': String(Buffer.byteLength(content)),
        'upload-metadata': `filename ${Buffer.from(name).toString('base64')}`,
        'content-type': 'application/offset+octet-stream',
      },
      body: content,
    })
  }

  async function requestsOfAccount(): Promise<UploadRequest[]> {
    const answer = await withKey('/upload-requests')
    expect(answer.status).toBe(200)
    return ((await answer.json()) as { upload_requests: UploadRequest[] }).upload_requests
  }

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}` })
    browser = await launchBrowser({ [PUBLIC_HOST]: new URL(t.url).host })
    email = `requests-${Date.now()}@example.test`
    const created = await t.createAccount('pro', email)
    apiKey = created.apiKey
    await t.app.services.accounts.setLimits(created.accountId, { requests_per_minute: 100_000, requests_per_day: 100_000 })
    await t.app.services.accountHolders.setPassword(created.accountId, PASSWORD)
    ;[desktop, phone] = await Promise.all([newPage('desktop'), newPage('phone')])
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  it('creates a request through the form; its link is shown and copies', async () => {
    await desktop.getByRole('link', { name: 'Requests' }).click()
    await desktop.waitForURL(dashboard('requests'))
    await desktop.waitForSelector('body[data-ready="true"]')
    expect(await desktop.title()).toBe('Upload requests · Fileshare')
    expect(await desktop.locator('nav a[aria-current="page"]').textContent()).toBe('Requests')
    expect(await desktop.locator('#no-requests').isVisible()).toBe(true)
    expect(await desktop.getByRole('region', { name: 'Link of the new request' }).isVisible()).toBe(false)
    // The plan's largest file is in the hint.
    expect(await desktop.locator('#request-max-file-size-hint').textContent()).toMatch(/^Empty: your plan's limit, \d/)
    await axeClean(desktop, 'requests, empty, desktop')

    const sent: unknown[] = []
    const tokens: string[] = []
    desktop.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/dashboard/api/upload-requests')) {
        sent.push(request.postDataJSON())
        tokens.push(request.headers()['x-csrf-token'] ?? '')
      }
    })

    // The page's own checks: no label, 0 days, a short password; each field marked, focus on the first.
    await desktop.getByLabel('Days').fill('0')
    await desktop.getByLabel('Password').fill('short')
    await desktop.getByRole('button', { name: 'Create request' }).click()
    const label = desktop.getByLabel('Label', { exact: true })
    expect(await label.getAttribute('aria-invalid')).toBe('true')
    expect(await desktop.getByLabel('Days').getAttribute('aria-invalid')).toBe('true')
    expect(await desktop.getByLabel('Password').getAttribute('aria-invalid')).toBe('true')
    expect(await desktop.locator('#request-days-error').textContent()).toBe('Give a whole number of days from 1 to 90.')
    expect(await label.evaluate((element) => element === (globalThis as unknown as InPage).document.activeElement)).toBe(true)
    expect(sent).toEqual([])
    await axeClean(desktop, 'requests form with errors, desktop')

    // A date offered instead of days: its field replaces the days'.
    await desktop.getByLabel('Expires', { exact: true }).selectOption('On a date')
    expect(await desktop.getByLabel('Days').isVisible()).toBe(false)
    expect(await desktop.getByLabel('Expiry date and time (UTC)').isVisible()).toBe(true)
    await desktop.getByLabel('Expires', { exact: true }).selectOption('After a number of days')

    await label.fill(LABEL)
    await desktop.getByLabel('Message').fill('Please send the PDFs.\nOne file each.')
    await desktop.getByLabel('Days').fill('14')
    await desktop.getByLabel('Most files').fill('3')
    await desktop.getByLabel('Largest file, in MB').fill('1')
    await desktop.getByLabel('All files together, in MB').fill('1.5')
    await desktop.getByLabel('Password').fill('')
    await desktop.getByLabel('Keep received files').selectOption('7 days')
    await desktop.getByRole('button', { name: 'Create request' }).click()
    await eventually(() => desktop.locator('#status').textContent()).toBe(
      `Created the request ${LABEL}. Send its link to the person who has the files.`,
    )
    expect(sent).toEqual([
      {
        label: LABEL,
        message: 'Please send the PDFs.\nOne file each.',
        expires_in: 14 * 86_400,
        max_files: 3,
        max_file_size: 1_048_576,
        max_total_size: 1_572_864,
        file_expires_in: 604_800,
      },
    ])
    expect(tokens).toEqual([expect.stringMatching(/^\S{16,}$/)])
    // Every field marked before is clear again, and the form is empty.
    expect(await desktop.locator('[aria-invalid="true"]').count()).toBe(0)
    expect(await label.inputValue()).toBe('')

    // The link's box has focus; its link copies (plain http: the page falls back to a selection).
    const box = desktop.getByRole('region', { name: 'Link of the new request' })
    expect(await box.evaluate((element) => element === (globalThis as unknown as InPage).document.activeElement)).toBe(true)
    requestUrl = await box.getByRole('textbox').inputValue()
    expect(requestUrl).toMatch(REQUEST_URL)
    await desktop.evaluate(`document.addEventListener('copy', () => { window.copied = String(getSelection()) }, { once: true })`)
    await box.getByRole('button', { name: 'Copy link' }).click()
    expect(await desktop.evaluate('window.copied')).toBe(requestUrl)
    await eventually(() => box.locator('.action-note[role=status]').textContent()).toBe('Copied the link.')
    expect(await activeText(desktop)).toBe('Copied')

    const [created] = await requestsOfAccount()
    expect(created).toMatchObject({ url: requestUrl, label: LABEL, status: 'active', files_received: 0 })

    const item = card(desktop, LABEL)
    expect(await cardText(item)).toEqual({
      status: 'Active',
      message: 'Please send the PDFs.\nOne file each.',
      files: '0 of 3',
      bytes: '0 B of 1.5 MiB',
      expires: expect.stringMatching(MINUTE_UTC),
      maxFileSize: '1.0 MiB',
      kept: '7 days',
      password: 'No',
      created: expect.stringMatching(MINUTE_UTC),
      url: requestUrl,
      buttons: ['Copy link', 'Files', 'Close', 'Delete'],
    })
    // 14 days ahead, give or take the minute the page shows.
    const expires = Date.parse(`${(await item.locator('.request-expires').textContent())!.slice(0, 16).replace(' ', 'T')}:00Z`)
    expect(Math.abs(expires - (Date.now() + 14 * 86_400_000))).toBeLessThan(2 * 60_000)
    expect(await item.locator('.request-url').getAttribute('href')).toBe(requestUrl)
    expect(await desktop.locator('#requests-summary').textContent()).toBe('1 request, 1 active.')

    // The card's own copy button, named after the request.
    await desktop.evaluate(`document.addEventListener('copy', () => { window.copied = String(getSelection()) }, { once: true })`)
    await item.getByRole('button', { name: `Copy link of ${LABEL}` }).click()
    expect(await desktop.evaluate('window.copied')).toBe(requestUrl)
    await eventually(() => item.locator('.copy-link + .action-note').textContent()).toBe(`Copied the link of ${LABEL}.`)
    expect(await activeText(desktop)).toBe('Copied')
    await eventually(() => activeText(desktop), 5_000).toBe('Copy link')

    await fitsSideways(desktop, 'requests with a new one, desktop')
    await shot(desktop, 'desktop-created')
    await axeClean(desktop, 'requests with a new one, desktop')
  })

  it("watches a guest's files arrive: the list of files and the counters follow by themselves", async () => {
    const item = card(desktop, LABEL)
    const toggle = item.getByRole('button', { name: `Files of ${LABEL}` })
    await toggle.click()
    expect(await toggle.getAttribute('aria-expanded')).toBe('true')
    await eventually(() => item.locator('.no-files').isVisible()).toBe(true)
    expect(await item.locator('.request-files-table').isVisible()).toBe(false)

    // A guest uploads over HTTP; the open list shows the file within a few seconds, no click needed.
    const first = await guestUpload(requestUrl, 'hello.txt', 'hello')
    expect(first.status).toBe(201)
    const firstId = Number(first.headers.get('fileshare-file-id'))
    expect(firstId).toBeGreaterThan(0)
    await eventually(() => fileRows(item)).toEqual([
      ['hello.txt', '5 B', expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/), expect.any(String)],
    ])
    expect(await item.locator('.request-status').textContent()).toBe('A new file: hello.txt.')
    expect((await cardText(item)).files).toBe('1 of 3')
    expect((await cardText(item)).bytes).toBe('5 B of 1.5 MiB')
    // The request's file lifetime: the file expires 7 days after its upload.
    const [, , uploaded, expiresAt] = (await fileRows(item))[0] as string[]
    const minute = (text: string) => Date.parse(`${text.replace(' ', 'T')}:00Z`)
    expect(Math.abs(minute(expiresAt!) - minute(uploaded!) - 7 * 86_400_000)).toBeLessThanOrEqual(60_000)
    expect(await item.getByRole('link', { name: 'Download hello.txt' }).getAttribute('href')).toMatch(/^http:\/\/files\.example\.test\//)

    // Two more at once: both appear, newest first, announced together.
    expect((await guestUpload(requestUrl, 'b.txt', 'bee')).status).toBe(201)
    expect((await guestUpload(requestUrl, 'c.txt', 'seas')).status).toBe(201)
    await eventually(async () => (await fileRows(item)).map((row) => row[0])).toEqual(['c.txt', 'b.txt', 'hello.txt'])
    // Announced together, or c.txt alone when a refresh fell between the two uploads.
    expect(await item.locator('.request-status').textContent()).toMatch(/^(2 new files: c\.txt, b\.txt|A new file: c\.txt)\.$/)
    expect(await cardText(item)).toMatchObject({ status: 'Full', files: '3 of 3', bytes: '12 B of 1.5 MiB' })
    expect(await desktop.locator('#requests-summary').textContent()).toBe('1 request, 0 active.')
    // Full, the link is dead: the guest is refused as with an unknown token.
    expect((await guestUpload(requestUrl, 'd.txt', 'dee')).status).toBe(401)

    // Refresh asks at once and says what the request holds.
    await item.getByRole('button', { name: 'Refresh' }).click()
    await eventually(() => item.locator('.request-status').textContent()).toBe('Refreshed: 3 of 3 files, 12 B of 1.5 MiB.')

    // The files are the account's, marked as coming from the request.
    const files = (await (await withKey('/files?limit=100')).json()) as { files: { filename: string; source: unknown }[] }
    const [request] = await requestsOfAccount()
    expect(files.files.find((file) => file.filename === 'hello.txt')?.source).toEqual({
      type: 'upload_request',
      request_id: request!.request_id,
    })

    await shot(desktop, 'desktop-files')
    await fitsSideways(desktop, 'a request with its files, desktop')
    await axeClean(desktop, 'a request with its files, desktop')
  })

  it('close asks first, then the request is Closed and its link takes nothing', async () => {
    // A second request, from the API, still active: the page shows it after a reload, newest first.
    const answer = await withKey('/upload-requests', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'Signed contract', expires_in: 86_400, password: 'a long password' }),
    })
    expect(answer.status).toBe(201)
    const { upload_request: second } = (await answer.json()) as { upload_request: UploadRequest }
    await open(desktop)
    expect(await desktop.locator('li.request h3').allTextContents()).toEqual(['Signed contract', LABEL])
    const item = card(desktop, 'Signed contract')
    expect(await cardText(item)).toMatchObject({
      status: 'Active',
      files: '0 (no limit)',
      bytes: '0 B',
      password: 'Yes',
      kept: 'Until deleted',
    })
    expect((await cardText(item)).message).toBeNull()

    // Escape cancels.
    await item.getByRole('button', { name: 'Close Signed contract' }).click()
    const dialog = desktop.getByRole('dialog', { name: 'Close this request?' })
    expect(await dialog.textContent()).toContain('Signed contract')
    await axeClean(desktop, 'the close dialog, desktop')
    await desktop.keyboard.press('Escape')
    await eventually(() => dialog.isVisible()).toBe(false)
    expect((await cardText(item)).status).toBe('Active')

    await item.getByRole('button', { name: 'Close Signed contract' }).click()
    await dialog.getByRole('button', { name: 'Close request' }).click()
    await eventually(() => item.locator('.request-status').textContent()).toBe('Closed Signed contract: its link no longer takes files.')
    expect(await cardText(item)).toMatchObject({ status: 'Closed', buttons: ['Copy link', 'Files', 'Delete'] })
    // Focus went to Delete, where the Close button was.
    expect(await activeText(desktop)).toBe('Delete')
    expect((await requestsOfAccount()).find((one) => one.request_id === second.request_id)?.status).toBe('closed')
    expect((await guestUpload(second.url, 'late.txt', 'late')).status).toBe(401)
    await axeClean(desktop, 'a closed request, desktop')
  })

  it('a refusal of the server is shown at the field it names', async () => {
    // A control character: only the server judges it (a text field keeps it, the page sends it).
    const label = desktop.getByLabel('Label', { exact: true })
    await label.fill('Bell\u0007')
    await desktop.getByRole('button', { name: 'Create request' }).click()
    await eventually(() => desktop.locator('#request-label-error').textContent()).toBe(
      'label must be one line of text, without control characters.',
    )
    expect(await label.getAttribute('aria-invalid')).toBe('true')
    expect(await label.evaluate((element) => element === (globalThis as unknown as InPage).document.activeElement)).toBe(true)
    expect(await desktop.locator('#form-error').textContent()).toBe('')
    await axeClean(desktop, "the server's refusal at its field, desktop")
    await label.fill('')
  })

  it('shows a label and a message with markup as text', async () => {
    await desktop.getByLabel('Label', { exact: true }).fill(HTML_LABEL)
    await desktop.getByLabel('Message').fill(HTML_MESSAGE)
    await desktop.getByLabel('Days').fill('1')
    await desktop.getByRole('button', { name: 'Create request' }).click()
    await eventually(() => desktop.locator('#status').textContent()).toBe(
      `Created the request ${HTML_LABEL}. Send its link to the person who has the files.`,
    )
    const item = card(desktop, HTML_LABEL)
    expect(await item.locator('h3').textContent()).toBe(HTML_LABEL)
    expect((await cardText(item)).message).toBe(HTML_MESSAGE)
    expect(await desktop.locator('#new-request-label').textContent()).toBe(HTML_LABEL)
    expect(await desktop.locator('#injected, main img, main b, main i, main script').count()).toBe(0)
    expect(await desktop.evaluate('window.pwned')).toBeUndefined()
    // A reload too: the list writes it as text.
    await open(desktop)
    expect(await card(desktop, HTML_LABEL).locator('h3').textContent()).toBe(HTML_LABEL)
    expect(await desktop.locator('#injected, main img, main b, main i, main script').count()).toBe(0)
    expect(await desktop.evaluate('window.pwned')).toBeUndefined()
  })

  it('delete asks first, removes the request from the list, and keeps its files', async () => {
    const item = card(desktop, HTML_LABEL)
    await item.getByRole('button', { name: `Delete ${HTML_LABEL}` }).click()
    const dialog = desktop.getByRole('dialog', { name: 'Delete this request?' })
    // The dialog names it as text too.
    expect(await dialog.locator('strong').textContent()).toBe(HTML_LABEL)
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    expect(await item.count()).toBe(1)

    await item.getByRole('button', { name: `Delete ${HTML_LABEL}` }).click()
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await eventually(() => desktop.locator('#status').textContent()).toBe(
      `Deleted the request ${HTML_LABEL}; the files it received stay in your files.`,
    )
    expect(await item.count()).toBe(0)
    // Focus on the Delete button that took its place.
    expect(await desktop.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.getAttribute('aria-label'))).toBe(
      'Delete Signed contract',
    )
    expect((await requestsOfAccount()).map((one) => one.label)).toEqual(['Signed contract', LABEL])

    // The first one, with its files: they stay in the account.
    const first = card(desktop, LABEL)
    await first.getByRole('button', { name: `Delete ${LABEL}` }).click()
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await eventually(() => first.count()).toBe(0)
    expect((await requestsOfAccount()).map((one) => one.label)).toEqual(['Signed contract'])
    const files = (await (await withKey('/files?limit=100')).json()) as { files: { filename: string }[] }
    expect(files.files.map((file) => file.filename).sort()).toEqual(['b.txt', 'c.txt', 'hello.txt'])
    await axeClean(desktop, 'requests after deletes, desktop')
  })

  it('on a phone: the form, a card and its files fit the screen, axe clean', async () => {
    const created = await withKey('/upload-requests', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'Photos from the site visit, all of them please', expires_in: 3_600, max_files: 10 }),
    })
    const { upload_request: request } = (await created.json()) as { upload_request: UploadRequest }
    expect((await guestUpload(request.url, 'a-rather-long-file-name-from-a-phone-camera-0001.jpg', 'jpeg')).status).toBe(201)
    await open(phone)
    const item = card(phone, 'Photos from the site visit, all of them please')
    await item.getByRole('button', { name: 'Files of Photos from the site visit, all of them please' }).click()
    await eventually(async () => (await fileRows(item)).length).toBe(1)
    await item.scrollIntoViewIfNeeded()
    await fitsSideways(phone, 'requests with files, phone')
    await shot(phone, 'phone-files')
    await axeClean(phone, 'requests with files, phone')

    await phone.getByRole('button', { name: 'Create request' }).scrollIntoViewIfNeeded()
    await phone.getByRole('button', { name: 'Create request' }).click()
    expect(await phone.getByLabel('Label', { exact: true }).getAttribute('aria-invalid')).toBe('true')
    await fitsSideways(phone, 'requests form with errors, phone')
    await shot(phone, 'phone-form')
    await axeClean(phone, 'requests form with errors, phone')
  })

  it('no page raised an error, broke its CSP, or asked any host but the service', () => {
    for (const found of problems) expect(found).toEqual({ errors: [], foreignRequests: [] })
  })
})

import fs from 'node:fs/promises'
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { chromiumAvailable, launchBrowser, watchContext, type PageProblems } from '../helpers/browser.js'
import { axeViolations, describeViolations } from '../helpers/axe.js'
import { dashboardScreenshot, DESKTOP, openDashboardPage, PHONE, signInOnPage } from '../helpers/dashboard-browser.js'

const PUBLIC_HOST = 'files.example.test'
const DOWNLOAD_HOST = 'dl.example.test'
const PASSWORD = 'correct horse battery staple'
const LINK_PASSWORD = 'auditors only 2026'
const FILE_NAME = 'report 2026.txt'
const FILE_BYTES = 'the yearly report, in full'
const dashboard = (page = '') => `http://${PUBLIC_HOST}/dashboard/${page}`
/** What a browser's navigation sends. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8'
/** `YYYY-MM-DD HH:MM`, the dashboard's form of a UTC time, `ms` from now. */
const minuteFromNow = (ms: number) => new Date(Date.now() + ms).toISOString().replace('T', ' ').slice(0, 16)
/** The time `ms` from now, or from a minute ago (the minute may turn while the test runs), between `before` and `after`. */
const around = (ms: number, before = '', after = '') =>
  new RegExp(`^${before}(${minuteFromNow(ms - 60_000)}|${minuteFromNow(ms)})${after}$`)
const DAY = 86_400_000

const eventually = <T>(probe: () => Promise<T>, timeout = 15_000) => expect.poll(probe, { timeout, interval: 50 })

/**
 * Issue 28 on the files page, in Chromium on a desktop (1366x900) and a phone (390x844, touch): a
 * file's links (create with a label, an expiry, a download limit and a password; status and counts;
 * copy; rotate and revoke after a confirmation), the file's expiry (set, on a date, removed; at
 * upload, one request and tus), and the server's landing page of a protected link, which works
 * without a script: its labelled password field, a wrong password (401, the page again), the right
 * one (the browser downloads the file). axe-core on every new state. Screenshots:
 * test-artifacts/screenshots/links-*.png.
 */
describe.skipIf(!chromiumAvailable)('links and expiry in the dashboard', () => {
  let t: TestApp
  let browser: Browser
  const problems: PageProblems[] = []
  let desktop: Page
  let phone: Page
  let fileId: number
  let holderEmail: string
  /** The protected link's URL, as the dashboard showed it when it was created. */
  let protectedUrl: string

  async function newContext(kind: 'desktop' | 'phone'): Promise<Page> {
    const context: BrowserContext = await browser.newContext({
      acceptDownloads: true,
      ...(kind === 'desktop' ? { viewport: DESKTOP } : { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }),
    })
    context.setDefaultTimeout(10_000)
    problems.push(watchContext(context, [PUBLIC_HOST, DOWNLOAD_HOST]))
    return context.newPage()
  }

  const signIn = (page: Page, email: string, { onThePage = false } = {}) =>
    signInOnPage(page, { signIn: dashboard('sign-in'), files: dashboard('files') }, email, PASSWORD, { onThePage })
  const open = (page: Page) => openDashboardPage(page, dashboard('files'))
  const screenshot = (page: Page, name: string) => dashboardScreenshot(page, `links-${name}`)

  async function axe(page: Page, csp: 'self' | 'no-script' = 'self') {
    const violations = await axeViolations(page, { csp })
    expect(violations, describeViolations(violations)).toEqual([])
  }

  /** Opens the panel of links and expiry of the file named `name` (the disclosure under its row). */
  async function openPanel(page: Page, name = FILE_NAME): Promise<Locator> {
    const toggle = page.getByRole('button', { name: `Links of ${name}` })
    if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click()
    expect(await toggle.getAttribute('aria-expanded')).toBe('true')
    const panel = page.locator(`#${(await toggle.getAttribute('aria-controls'))!}`)
    await eventually(() => panel.locator('.links-loading').isHidden()).toBe(true)
    return panel
  }

  const linkItem = (panel: Locator, title: string) =>
    panel.locator('li.link-item', { has: panel.page().locator('.link-title', { hasText: title }) })
  /** A link's title, state and facts as the page shows them. */
  const described = (item: Locator) =>
    item.evaluate((element) => ({
      state: element.querySelector('.badge')!.textContent,
      facts: [...element.querySelectorAll('.link-facts div')].map(
        (pair) => `${pair.children[0]!.textContent}: ${pair.children[1]!.textContent}`,
      ),
      buttons: [...element.querySelectorAll('button')].map((button) => button.textContent),
    }))
  /** Where each of the elements starts, from the top of the screen: the same number for a line of buttons. */
  const topsOf = (elements: Locator) =>
    elements.evaluateAll((found) => found.map((element) => Math.round(element.getBoundingClientRect().top)))
  /** The page's own call, with its session, as its script makes them. */
  const fromPage = (page: Page, pathName: string) =>
    page.evaluate(async (target) => {
      const answer = await fetch(target)
      return { status: answer.status, body: (await answer.json()) as Record<string, unknown> }
    }, `api/${pathName}`)
  const status = (url: string, init: RequestInit = {}) => fetch(`${t.url}${new URL(url).pathname}`, init).then((answer) => answer.status)

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}`, FILESHARE_DOWNLOAD_URL: `http://${DOWNLOAD_HOST}` })
    const server = new URL(t.url).host
    browser = await launchBrowser({ [PUBLIC_HOST]: server, [DOWNLOAD_HOST]: server })
    holderEmail = `links-${Date.now()}@example.test`
    const { accountId } = await t.createAccount('pro', holderEmail)
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    ;[desktop, phone] = await Promise.all([newContext('desktop'), newContext('phone')])
    await Promise.all([signIn(desktop, holderEmail), signIn(phone, holderEmail)])
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  it('an upload with an expiry: in one request and through tus, shown in the list', async () => {
    await open(desktop)
    const choice = desktop.getByLabel('New uploads expire')
    expect(await choice.locator('option').allTextContents()).toEqual([
      'Never',
      'After 1 hour',
      'After 1 day',
      'After 7 days',
      'After 30 days',
    ])
    await choice.selectOption({ label: 'After 7 days' })
    // 9 MiB goes through tus (over 8 MiB), the small one in one request.
    // Handing Chromium 9 MiB through the protocol took 12 s on a busy 2-core machine: more than the default 10 s.
    await desktop.locator('#file-input').setInputFiles(
      [
        { name: 'large.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(9 * 1024 * 1024, 'x') },
        { name: 'kept a week.txt', mimeType: 'text/plain', buffer: Buffer.from('a week') },
      ],
      { timeout: 60_000 },
    )
    await eventually(() => desktop.locator('#uploads li.done').count()).toBe(2)
    for (const name of ['large.bin', 'kept a week.txt']) {
      const expiry = desktop.locator('#files-body tr.file', { hasText: name }).locator('td.name .file-expiry')
      expect(await expiry.textContent(), name).toMatch(around(7 * DAY, 'Expires ', ' UTC'))
    }
    // Back to never: the next upload keeps its file until it is deleted.
    await choice.selectOption({ label: 'Never' })
    await desktop.locator('#file-input').setInputFiles({ name: FILE_NAME, mimeType: 'text/plain', buffer: Buffer.from(FILE_BYTES) })
    await eventually(() => desktop.locator('#uploads li.done').count()).toBe(1)
    const row = desktop.locator('#files-body tr.file', { hasText: FILE_NAME })
    // No expiry, nothing said: the name alone.
    expect(await row.locator('td.name').textContent()).toBe(FILE_NAME)
    fileId = Number(await row.getAttribute('data-file-id'))
    expect((await fromPage(desktop, `files/${fileId}`)).body).toMatchObject({ file: { expires_at: null } })
  }, 90_000)

  it('creates a link with a label, an expiry, a download limit and a password; it is listed with its status and copied', async () => {
    await open(desktop)
    const panel = await openPanel(desktop)
    expect(await panel.getByRole('heading', { level: 3 }).allTextContents()).toEqual([
      `Links of ${FILE_NAME}`,
      `Expiry of ${FILE_NAME}`,
      `Name of ${FILE_NAME}`,
    ])
    // The default link (the file's public link) comes first; it cannot be revoked.
    const byDefault = linkItem(panel, 'Default link')
    expect(await described(byDefault)).toEqual({
      state: 'Active',
      facts: [
        'Downloads: 0 (no limit)',
        'Expires: never',
        'Password: no',
        expect.stringMatching(/^Created: \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/),
      ],
      buttons: ['Copy URL', 'QR code', 'Rotate'],
    })

    // Mistakes are caught in the page, named, and focus goes to the field.
    await panel.getByLabel('Label (optional)').fill('for the auditors')
    await panel.getByLabel('Link expires').selectOption({ label: 'After 7 days' })
    await panel.getByLabel('Download limit').fill('0')
    await panel.getByRole('button', { name: 'Create link' }).click()
    const error = panel.locator('.create-error')
    await eventually(() => error.textContent()).toBe(
      'The download limit is a whole number from 1 to 1,000,000; leave it empty for no limit.',
    )
    expect(await desktop.evaluate('document.activeElement?.getAttribute("aria-invalid")')).toBe('true')
    await panel.getByLabel('Download limit').fill('3')
    await panel.getByLabel('Password').fill('short')
    await panel.getByRole('button', { name: 'Create link' }).click()
    await eventually(() => error.textContent()).toBe('The password needs at least 8 characters; leave it empty for none.')
    expect(await desktop.evaluate('document.activeElement?.id')).toBe(`file-${fileId}-link-password`)
    await axe(desktop)

    await panel.getByLabel('Password').fill(LINK_PASSWORD)
    await panel.getByRole('button', { name: 'Create link' }).click()
    // The new URL shows with a copy button, and takes focus; the error of the attempt before is gone.
    const box = panel.getByRole('region', { name: 'New link: for the auditors' })
    await eventually(() => box.isVisible()).toBe(true)
    expect(await desktop.evaluate('document.activeElement?.id')).toBe(`file-${fileId}-new-link`)
    expect(await error.textContent()).toBe('')
    protectedUrl = await box.getByLabel('New link URL').inputValue()
    expect(protectedUrl).toMatch(new RegExp(`^http://${DOWNLOAD_HOST}/download/[A-Za-z0-9_-]{20,}$`))
    expect(await panel.locator('.links-status').textContent()).toBe(`Created the link “for the auditors” of ${FILE_NAME}.`)
    // The form is empty again, for the next link.
    expect(await panel.getByLabel('Password').inputValue()).toBe('')

    const item = linkItem(panel, 'for the auditors')
    expect(await described(item)).toEqual({
      state: 'Active',
      facts: [
        'Downloads: 0 of 3',
        expect.stringMatching(around(7 * DAY, 'Expires: ', ' UTC')),
        'Password: yes',
        expect.stringMatching(/^Created: /),
      ],
      buttons: ['Copy URL', 'QR code', 'Rotate', 'Revoke'],
    })
    // Default first, then the newest.
    expect(await panel.locator('.link-title').allTextContents()).toEqual(['Default link', 'for the auditors'])

    // Copy (plain http: the page falls back to a selection); the button says so, a live region beside it too, and focus stays on the button.
    await desktop.evaluate(`document.addEventListener('copy', () => { window.copied = String(getSelection()) }, { once: true })`)
    const copy = item.getByRole('button', { name: `Copy URL of the link “for the auditors” of ${FILE_NAME}` })
    await copy.click()
    expect(await desktop.evaluate('window.copied')).toBe(protectedUrl)
    await eventually(() => item.locator('.action-note[role=status]').textContent()).toBe(
      `Copied the URL of the link “for the auditors” of ${FILE_NAME}.`,
    )
    expect(await desktop.evaluate('document.activeElement?.textContent')).toBe('Copied')
    expect(await desktop.evaluate('document.activeElement?.getAttribute("aria-label")')).toBe(
      `Copied (Copy URL of the link “for the auditors” of ${FILE_NAME})`,
    )
    await desktop.evaluate(`document.addEventListener('copy', () => { window.copied = String(getSelection()) }, { once: true })`)
    await box.locator('button.copy-new-link').click()
    expect(await desktop.evaluate('window.copied')).toBe(protectedUrl)
    await eventually(() => box.locator('.action-note[role=status]').textContent()).toBe('Copied the new URL.')
    expect(await panel.locator('.links-status').textContent()).toBe('')

    await screenshot(desktop, 'desktop-created')
    await axe(desktop)
    // What the API says of it: the dashboard sent every field.
    const { body } = await fromPage(desktop, `files/${fileId}/links`)
    expect((body.links as Record<string, unknown>[])[1]).toMatchObject({
      label: 'for the auditors',
      max_downloads: 3,
      password_protected: true,
      url: protectedUrl,
      status: 'active',
    })
  })

  it('the landing page of the protected link, with no script: labelled password, a wrong one (401), the right one downloads', async () => {
    const plain = await fetch(`${t.url}${new URL(protectedUrl).pathname}`, { headers: { accept: BROWSER_ACCEPT } })
    expect(plain.status).toBe(200)
    expect(await plain.text()).not.toMatch(/<script/i)
    expect(plain.headers.get('content-security-policy')).toMatch(/^default-src 'none';/)

    let left = 3
    for (const [page, kind] of [
      [desktop, 'desktop'],
      [phone, 'phone'],
    ] as const) {
      const landing = await page.context().newPage()
      const shown = (await landing.goto(protectedUrl))!
      expect(shown.status()).toBe(200)
      expect(await landing.getByRole('heading', { level: 1 }).textContent()).toBe(FILE_NAME)
      expect(await landing.locator('dl').textContent()).toContain(`Downloads left${left}`)
      const password = landing.getByLabel('Password')
      expect(await password.getAttribute('type')).toBe('password')
      expect(await landing.evaluate('document.documentElement.scrollWidth')).toBe(landing.viewportSize()!.width)
      await screenshot(landing, `${kind}-landing`)
      await axe(landing, 'no-script')

      // A wrong password: 401, the page again, with the error tied to the field, which has focus.
      await password.fill('not the password')
      const [wrong] = await Promise.all([
        landing.waitForResponse((response) => response.request().method() === 'POST'),
        landing.getByRole('button', { name: 'Download' }).click(),
      ])
      expect(wrong.status()).toBe(401)
      await landing.waitForLoadState()
      expect(await landing.getByRole('alert').textContent()).toBe('That password is wrong. Check it and try again.')
      expect(await landing.getByLabel('Password').getAttribute('aria-invalid')).toBe('true')
      expect(await landing.evaluate('document.activeElement?.id')).toBe('password')
      await screenshot(landing, `${kind}-landing-wrong-password`)
      await axe(landing, 'no-script')

      // The right one: the form posts, follows the 303 to a grant, and the browser downloads the file.
      await landing.getByLabel('Password').fill(LINK_PASSWORD)
      const [download] = await Promise.all([landing.waitForEvent('download'), landing.getByRole('button', { name: 'Download' }).click()])
      expect(download.suggestedFilename()).toBe(FILE_NAME)
      expect(download.url()).toMatch(new RegExp(`^${protectedUrl}/[A-Za-z0-9_-]+$`))
      expect(await fs.readFile((await download.path())!, 'utf8')).toBe(FILE_BYTES)
      left--
      await landing.close()
    }

    // The dashboard counts them against the limit.
    await open(desktop)
    const panel = await openPanel(desktop)
    expect((await described(linkItem(panel, 'for the auditors'))).facts[0]).toBe('Downloads: 2 of 3')
    expect(await desktop.locator('#files-body tr.file', { hasText: FILE_NAME }).locator('td.downloads').textContent()).toBe('2')
  })

  it('rotates a link after a confirmation: the old URL answers 404, the new one works; rotating the default link changes the public link', async () => {
    const panel = await openPanel(desktop)
    const item = linkItem(panel, 'for the auditors')
    const rotate = item.getByRole('button', { name: `Rotate the link “for the auditors” of ${FILE_NAME}` })
    await rotate.click()
    const dialog = desktop.getByRole('dialog')
    expect(await dialog.textContent()).toContain(`The link “for the auditors” of ${FILE_NAME} gets a new URL`)
    await screenshot(desktop, 'desktop-rotate-dialog')
    await axe(desktop)
    await desktop.keyboard.press('Escape')
    expect(await status(protectedUrl, { headers: { accept: 'application/json' } })).toBe(200)

    await rotate.click()
    await dialog.getByRole('button', { name: 'Rotate' }).click()
    const box = panel.getByRole('region', { name: `New URL of the link “for the auditors” of ${FILE_NAME}` })
    await eventually(() => box.isVisible()).toBe(true)
    const rotated = await box.getByLabel('New link URL').inputValue()
    expect(rotated).not.toBe(protectedUrl)
    expect(await panel.locator('.links-status').textContent()).toBe(
      `Rotated the link “for the auditors” of ${FILE_NAME}: the old URL no longer works.`,
    )
    expect(await desktop.evaluate('document.activeElement?.id')).toBe(`file-${fileId}-new-link`)
    expect(await status(protectedUrl, { headers: { accept: BROWSER_ACCEPT } })).toBe(404)
    expect(await status(rotated, { headers: { accept: BROWSER_ACCEPT } })).toBe(200)
    // Counts, limit and password stay.
    expect((await described(item)).facts.slice(0, 3)).toEqual([
      'Downloads: 2 of 3',
      expect.stringMatching(around(7 * DAY, 'Expires: ', ' UTC')),
      'Password: yes',
    ])
    protectedUrl = rotated

    // The default link is the file's public link: the list's Download link follows it.
    const row = desktop.locator('#files-body tr.file', { hasText: FILE_NAME })
    const before = (await row.getByRole('link', { name: `Download ${FILE_NAME}` }).getAttribute('href'))!
    await linkItem(panel, 'Default link')
      .getByRole('button', { name: `Rotate the default link of ${FILE_NAME}` })
      .click()
    await dialog.getByRole('button', { name: 'Rotate' }).click()
    await eventually(() => row.getByRole('link', { name: `Download ${FILE_NAME}` }).getAttribute('href')).not.toBe(before)
    const after = (await row.getByRole('link', { name: `Download ${FILE_NAME}` }).getAttribute('href'))!
    expect(await panel.getByLabel('New link URL').inputValue()).toBe(after)
    expect(await status(before)).toBe(404)
    expect(await status(after)).toBe(200)
    await screenshot(desktop, 'desktop-rotated')
    await axe(desktop)
  })

  it('an exhausted link says so and offers only Revoke; revoking after a confirmation: listed as revoked, last, without buttons', async () => {
    // The third and last download, as curl would take it.
    const last = await fetch(`${t.url}${new URL(protectedUrl).pathname}`, {
      method: 'POST',
      body: new URLSearchParams({ password: LINK_PASSWORD }),
      redirect: 'manual',
    })
    expect(last.status).toBe(303)
    await open(desktop)
    const panel = await openPanel(desktop)
    expect(await described(linkItem(panel, 'for the auditors'))).toMatchObject({
      state: 'Exhausted',
      facts: ['Downloads: 3 of 3', expect.stringMatching(/^Expires: /), 'Password: yes', expect.stringMatching(/^Created: /)],
      buttons: ['Revoke'],
    })
    expect(await status(protectedUrl, { headers: { accept: BROWSER_ACCEPT } })).toBe(404)
    await axe(desktop)

    // One more link, without a policy, to see focus move to the Revoke button that takes the place.
    await panel.getByLabel('Label (optional)').fill('spare')
    await panel.getByRole('button', { name: 'Create link' }).click()
    await eventually(() => linkItem(panel, 'spare').count()).toBe(1)
    expect(await panel.locator('.link-title').allTextContents()).toEqual(['Default link', 'spare', 'for the auditors'])

    await linkItem(panel, 'spare').getByRole('button', { name: 'Revoke' }).click()
    const dialog = desktop.getByRole('dialog')
    expect(await dialog.textContent()).toContain(`The link “spare” of ${FILE_NAME} stops working at once`)
    await dialog.getByRole('button', { name: 'Revoke' }).click()
    await eventually(() => panel.locator('.links-status').textContent()).toBe(
      `Revoked the link “spare” of ${FILE_NAME}: its URL no longer works.`,
    )
    expect(await panel.locator('.link-title').allTextContents()).toEqual(['Default link', 'for the auditors', 'spare'])
    expect(await described(linkItem(panel, 'spare'))).toMatchObject({ state: 'Revoked', buttons: [] })
    // The box showed the spare link's URL: it goes with it.
    expect(await panel.locator('.new-link').isVisible()).toBe(false)
    expect(await desktop.evaluate('document.activeElement?.getAttribute("aria-label")')).toBe(
      `Revoke the link “for the auditors” of ${FILE_NAME}`,
    )

    await desktop.keyboard.press('Enter')
    await dialog.getByRole('button', { name: 'Revoke' }).click()
    await eventually(() => described(linkItem(panel, 'for the auditors'))).toMatchObject({ state: 'Revoked', buttons: [] })
    // No Revoke button left: focus goes to the list's heading, not to the page's body.
    expect(await desktop.evaluate('document.activeElement?.id')).toBe(`file-${fileId}-links-title`)
    expect(await status(protectedUrl, { headers: { accept: BROWSER_ACCEPT } })).toBe(404)
    expect(await status(protectedUrl, { method: 'POST', body: new URLSearchParams({ password: LINK_PASSWORD }), redirect: 'manual' })).toBe(
      404,
    )
    await screenshot(desktop, 'desktop-revoked')
    await axe(desktop)
  })

  it("sets a file's expiry (a lifetime, a date), refuses a past date, and removes it; the list shows it", async () => {
    await open(desktop)
    const panel = await openPanel(desktop)
    const row = desktop.locator('#files-body tr.file', { hasText: FILE_NAME })
    expect(await panel.locator('.expiry-now').textContent()).toBe('This file does not expire: it stays until you delete it.')
    expect(await panel.getByRole('button', { name: 'Remove expiry' }).isVisible()).toBe(false)

    await panel.getByLabel('Expire the file').selectOption({ label: 'After 1 day' })
    await panel.getByRole('button', { name: 'Set expiry' }).click()
    const expiry = row.locator('td.name .file-expiry')
    await eventually(() => expiry.textContent()).toMatch(around(DAY, 'Expires ', ' UTC'))
    const day = (await expiry.textContent())!.slice('Expires '.length, -' UTC'.length)
    expect(await panel.locator('.expiry-status').textContent()).toBe(`${FILE_NAME} now expires ${day} UTC.`)
    expect(await panel.locator('.expiry-now').textContent()).toBe(
      `This file expires ${day} UTC. Then it is deleted, and every link to it stops working.`,
    )
    // A new link is told it cannot outlive the file.
    expect(await panel.locator('.file-expiry-note').textContent()).toBe(`No link outlives its file, which expires ${day} UTC.`)

    await panel.getByLabel('Expire the file').selectOption({ label: 'On a date…' })
    const date = panel.getByLabel('Expiry date and time (UTC)').last()
    await date.fill('2020-01-01T00:00')
    await panel.getByRole('button', { name: 'Set expiry' }).click()
    await eventually(() => panel.locator('.expiry-error').textContent()).toBe('Choose a date and time in the future (UTC).')
    // The message of the last success went: no stale message next to a new one.
    expect(await panel.locator('.expiry-status').textContent()).toBe('')
    expect(await date.getAttribute('aria-invalid')).toBe('true')
    await date.fill('2030-12-01T00:00')
    await panel.getByRole('button', { name: 'Set expiry' }).click()
    await eventually(() => expiry.textContent()).toBe('Expires 2030-12-01 00:00 UTC')
    expect(await panel.locator('.expiry-error').textContent()).toBe('')
    expect((await fromPage(desktop, `files/${fileId}`)).body).toMatchObject({ file: { expires_at: '2030-12-01 00:00:00' } })
    await screenshot(desktop, 'desktop-file-expiry')
    await axe(desktop)

    // On a phone's file card: "Expires … UTC".
    await open(phone)
    const card = phone.locator('#files-body tr.file', { hasText: FILE_NAME })
    expect(await card.locator('.file-expiry').textContent()).toBe('Expires 2030-12-01 00:00 UTC')
    const [name, expires] = await Promise.all([card.locator('td.name').boundingBox(), card.locator('.file-expiry').boundingBox()])
    expect(expires!.x + expires!.width).toBeLessThanOrEqual(name!.x + name!.width)
    await card.scrollIntoViewIfNeeded()
    await screenshot(phone, 'phone-file-expiry')

    await panel.getByRole('button', { name: 'Remove expiry' }).click()
    await eventually(() => row.locator('td.name').textContent()).toBe(FILE_NAME)
    expect(await panel.locator('.expiry-status').textContent()).toBe(`${FILE_NAME} no longer expires.`)
    expect(await panel.getByRole('button', { name: 'Remove expiry' }).isVisible()).toBe(false)
    expect(await desktop.evaluate('document.activeElement?.id')).toBe(`file-${fileId}-file-expires`)
    expect((await fromPage(desktop, `files/${fileId}`)).body).toMatchObject({ file: { expires_at: null } })
  })

  it('a phone: the panel fits the screen, its buttons side by side, nothing sideways; axe finds nothing', async () => {
    await open(phone)
    const panel = await openPanel(phone)
    await panel.getByLabel('Label (optional)').fill('phone link with a rather long label, to see it wrap on a small screen')
    await panel.getByLabel('Download limit').fill('5')
    await panel.getByRole('button', { name: 'Create link' }).click()
    await eventually(() => panel.locator('.new-link').isVisible()).toBe(true)
    expect(await phone.evaluate('document.documentElement.scrollWidth')).toBe(PHONE.width)
    const tooWide = await phone.evaluate(`[...document.querySelectorAll('main *')]
      .filter((element) => !element.closest('thead, .visually-hidden') && element.checkVisibility())
      .filter((element) => element.getBoundingClientRect().right > document.documentElement.clientWidth)
      .map((element) => element.tagName + '.' + element.className)`)
    expect(tooWide).toEqual([])
    const item = linkItem(panel, 'phone link with')
    await item.scrollIntoViewIfNeeded()
    await screenshot(phone, 'phone-panel-item')
    const tops = await topsOf(item.locator('button'))
    // Copy URL, QR code and Rotate side by side; Revoke may take the next line.
    expect(tops).toHaveLength(4)
    expect(new Set(tops.slice(0, 3)).size, JSON.stringify(tops)).toBe(1)
    // The file's card keeps its three buttons on one line; the Links button sits at the end of the name's line.
    const row = phone.locator('#files-body tr.file', { hasText: FILE_NAME })
    const toggle = phone.getByRole('button', { name: `Links of ${FILE_NAME}` })
    await toggle.scrollIntoViewIfNeeded()
    await screenshot(phone, 'phone-panel')
    const controls = await topsOf(row.locator('td.link a, td.link button, td.actions button'))
    expect(controls).toHaveLength(3)
    expect(Math.max(...controls) - Math.min(...controls)).toBeLessThan(8)
    const [name, links] = await Promise.all([row.locator('td.name').boundingBox(), toggle.boundingBox()])
    expect(links!.y).toBeLessThan(name!.y + name!.height)
    expect(links!.x + links!.width).toBeLessThanOrEqual(PHONE.width)
    expect((await row.boundingBox())!.height).toBeLessThan(150)
    await panel.locator('form.create-link').scrollIntoViewIfNeeded()
    await screenshot(phone, 'phone-panel-form')
    await axe(phone)

    // Closing it: the toggle says so, and the panel goes.
    await phone.getByRole('button', { name: `Links of ${FILE_NAME}` }).click()
    expect(await phone.getByRole('button', { name: `Links of ${FILE_NAME}` }).getAttribute('aria-expanded')).toBe('false')
    expect(await phone.locator('tr.file-panel').count()).toBe(0)
  })

  it('an open panel survives a reload of the list (an upload): what is typed stays, focus stays', async () => {
    await open(desktop)
    const panel = await openPanel(desktop)
    const label = panel.getByLabel('Label (optional)')
    await label.fill('half typed')
    await label.focus()
    await desktop.locator('#file-input').setInputFiles({ name: 'meanwhile.txt', mimeType: 'text/plain', buffer: Buffer.from('meanwhile') })
    await eventually(() => desktop.locator('#files-body tr.file td.name').first().textContent()).toBe('meanwhile.txt')
    expect(await label.inputValue()).toBe('half typed')
    expect(await desktop.evaluate('document.activeElement?.id')).toBe(`file-${fileId}-link-label`)
    // The panel sits right under its file.
    expect(
      await desktop
        .locator('#files-body tr.file', { hasText: FILE_NAME })
        .evaluate((row) => row.nextElementSibling?.classList.contains('file-panel')),
    ).toBe(true)
  })

  it('a link past its expiry shows as expired, with only Revoke left; its URL answers 404', async () => {
    await open(desktop)
    const panel = await openPanel(desktop)
    await panel.getByLabel('Label (optional)').fill('for an hour')
    await panel.getByLabel('Link expires').selectOption({ label: 'After 1 hour' })
    await panel.getByRole('button', { name: 'Create link' }).click()
    const box = panel.getByRole('region', { name: 'New link: for an hour' })
    await eventually(() => box.isVisible()).toBe(true)
    const url = await box.getByLabel('New link URL').inputValue()
    // A HEAD: the link has no policy, so a GET would download (and count) the file.
    expect(await status(url, { method: 'HEAD' })).toBe(200)

    // Two hours on the server's clock (the session may lapse meanwhile: then sign in again).
    t.advanceClock(2 * 3_600_000)
    await desktop.goto(dashboard('files'))
    if (desktop.url() === dashboard('sign-in')) await signIn(desktop, holderEmail, { onThePage: true })
    else await desktop.waitForSelector('body[data-ready="true"]')
    const later = await openPanel(desktop)
    expect(await described(linkItem(later, 'for an hour'))).toMatchObject({
      state: 'Expired',
      facts: ['Downloads: 0 (no limit)', expect.stringMatching(/^Expires: /), 'Password: no', expect.stringMatching(/^Created: /)],
      buttons: ['Revoke'],
    })
    expect(await status(url, { method: 'HEAD' })).toBe(404)
    // Nothing in the panel widens the table: it needs no sideways scrolling on a desktop.
    expect(await desktop.locator('#files-list').evaluate((wrap) => wrap.scrollWidth - wrap.clientWidth)).toBe(0)
    await later.locator('.link-item.expired').scrollIntoViewIfNeeded()
    await screenshot(desktop, 'desktop-expired')
    await axe(desktop)
  })

  it('no page raised an error, broke its CSP, or asked any host but the service', () => {
    for (const found of problems) expect(found).toEqual({ errors: [], foreignRequests: [] })
  })
})

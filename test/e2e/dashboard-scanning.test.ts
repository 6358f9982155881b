import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { chromiumAvailable, launchBrowser, screenshot, watchContext, type PageProblems } from '../helpers/browser.js'
import { axeViolations, describeViolations } from '../helpers/axe.js'
import { CLAMD_AVAILABLE, EICAR, EICAR_SIGNATURE, startClamd, type TestClamd } from '../helpers/clamd.js'

const PUBLIC_HOST = 'files.example.test'
const PASSWORD = 'correct horse battery staple'
const dashboard = (page = '') => `http://${PUBLIC_HOST}/dashboard/${page}`
const CLEAN_NAME = 'minutes.txt'
/** The infected upload's name would be markup if the page wrote it as HTML. */
const INFECTED_NAME = 'eicar <img src=x onerror="window.pwned=1">.txt'

const eventually = <T>(probe: () => Promise<T>, timeout = 15_000) => expect.poll(probe, { timeout, interval: 50 })

/**
 * Issue 35 in the dashboard, in Chromium against a real server scanning with a real clamd
 * (test/helpers/clamd.ts; FILESHARE_SCAN defaults to required): a file's scan as a badge under its
 * name (checking, then scanned, refreshed by the page itself), what a pending file's link does, an
 * upload of EICAR turning into "Removed: a virus was found (<signature>)", the notice of removed
 * files (from the audit log's scan.infected, dismissed with DELETE) and the Activity page's words
 * for scan.infected. axe-core on each state. Skipped without Chromium or clamd.
 * Screenshots: test-artifacts/screenshots/scanning-*.png.
 */
describe.skipIf(!chromiumAvailable || !CLAMD_AVAILABLE)('virus scanning in the dashboard', () => {
  let clamd: TestClamd
  let t: TestApp
  let browser: Browser
  let page: Page
  let problems: PageProblems
  let infectedId: number

  async function open(name: string) {
    await page.goto(dashboard(name))
    await page.waitForSelector('body[data-ready="true"]')
  }

  async function axe() {
    const violations = await axeViolations(page)
    expect(violations, describeViolations(violations)).toEqual([])
  }

  /** The page's own call, with its session, as its script makes them. */
  const fromPage = (pathName: string) =>
    page.evaluate(async (target) => {
      const answer = await fetch(target)
      return { status: answer.status, body: (await answer.json()) as Record<string, unknown> }
    }, `api/${pathName}`)

  const upload = (name: string, content: string) =>
    page.getByLabel('Choose files').setInputFiles({ name, mimeType: 'text/plain', buffer: Buffer.from(content) })
  const uploadState = (name: string) => page.locator('#uploads li', { hasText: name }).locator('.upload-state')
  const row = (name: string) => page.locator('#files-body tr.file', { hasText: name })

  beforeAll(async () => {
    clamd = await startClamd()
    t = await startTestApp(
      { FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}`, FILESHARE_CLAMD: clamd.url },
      { scanning: { pollMs: 20, retryMs: 50, maxRetryMs: 200, leaseMs: 5000 } },
    )
    browser = await launchBrowser({ [PUBLIC_HOST]: new URL(t.url).host })
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } })
    context.setDefaultTimeout(10_000)
    problems = watchContext(context, [PUBLIC_HOST])
    page = await context.newPage()
    const email = `scanning-${Date.now()}@example.test`
    const { accountId } = await t.createAccount('pro', email)
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    await page.goto(dashboard('sign-in'))
    await page.getByLabel('Email address').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(dashboard('files'))
    await page.waitForSelector('body[data-ready="true"]')
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
    await clamd?.close()
  })

  it('a clean upload: "Checking for viruses…" while clamd has not answered, then "Scanned", by itself', async () => {
    // clamd away: the file stays pending (retried), so the page's first state can be seen for sure.
    await clamd.stop()
    try {
      await upload(CLEAN_NAME, 'the minutes of the meeting, nothing else')
      await eventually(() => uploadState(CLEAN_NAME).textContent()).toBe('Uploaded. Checking for viruses…')
      await eventually(() => row(CLEAN_NAME).locator('.badge.scan').textContent()).toBe('Checking for viruses…')
      // Near the copy button: the link waits for the scan (required mode); the button is described by that.
      const hint = row(CLEAN_NAME).locator('.scan-link-hint')
      expect(await hint.textContent()).toBe('The link downloads once the check is done.')
      const copy = row(CLEAN_NAME).getByRole('button', { name: `Copy link to ${CLEAN_NAME}` })
      expect(await copy.getAttribute('aria-describedby')).toBe(await hint.getAttribute('id'))
      // Which is so: required mode (the default) holds the link with 409 scan_pending.
      const link = (await copy.getAttribute('data-link'))!
      const held = await fetch(`${t.url}${new URL(link).pathname}`)
      expect(held.status).toBe(409)
      expect(((await held.json()) as { error: { code: string } }).error.code).toBe('scan_pending')
      await axe()
      await screenshot(page, 'scanning-pending')
      // A phone's width: the badge and the hint fit the file's card, nothing runs off the screen.
      await page.setViewportSize({ width: 390, height: 844 })
      expect(await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth')).toBe(true)
      await screenshot(page, 'scanning-pending-phone')
      await page.setViewportSize({ width: 1366, height: 900 })
    } finally {
      await clamd.start()
    }
    // The page asks again by itself (every 2 s while in view): the row and the upload follow the verdict.
    await eventually(() => row(CLEAN_NAME).locator('.badge.scan').textContent()).toBe('Scanned')
    await eventually(() => uploadState(CLEAN_NAME).textContent()).toBe('Uploaded and scanned: no virus found.')
    expect(await row(CLEAN_NAME).locator('.scan-link-hint').count()).toBe(0)
    expect(
      await row(CLEAN_NAME)
        .getByRole('button', { name: `Copy link to ${CLEAN_NAME}` })
        .getAttribute('aria-describedby'),
    ).toBeNull()
    // After a reload too, from the list's records.
    await open('files')
    expect(await row(CLEAN_NAME).locator('.badge.scan').textContent()).toBe('Scanned')
    expect(await page.locator('#infected-notice').isHidden()).toBe(true)
    await axe()
  })

  it('an upload of EICAR: the row says it was removed, with the signature; the list and the notice agree', async () => {
    await upload(INFECTED_NAME, EICAR)
    const item = page.locator('#uploads li', { hasText: INFECTED_NAME })
    await eventually(() => item.locator('.upload-state').textContent()).toBe(`Removed: a virus was found (${EICAR_SIGNATURE})`)
    expect(await item.getAttribute('class')).toContain('failed')
    // Its link is dead: the row no longer offers it.
    expect(await item.locator('.upload-link').count()).toBe(0)
    expect(await item.getByRole('progressbar').getAttribute('aria-label')).toBe(`Upload of ${INFECTED_NAME} removed: a virus was found`)
    // Gone from the list; the clean file stays.
    await eventually(() => row(INFECTED_NAME).count()).toBe(0)
    expect(await row(CLEAN_NAME).count()).toBe(1)
    // The notice names it, its signature, as text.
    const notice = page.locator('#infected-notice')
    await eventually(() => notice.isVisible()).toBe(true)
    const line = notice.locator('li', { hasText: INFECTED_NAME })
    expect(await line.locator('.infected-name').textContent()).toBe(INFECTED_NAME)
    expect(await line.locator('.infected-what').textContent()).toMatch(
      new RegExp(`^68 B: ${EICAR_SIGNATURE.replaceAll('.', '\\.')} found, removed \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC\\.$`),
    )
    expect(await page.evaluate('window.pwned')).toBeUndefined()
    expect(await page.locator('img#x, #infected-notice img').count()).toBe(0)
    infectedId = Number(await line.getAttribute('data-file-id'))
    const record = await fromPage(`files/${infectedId}`)
    expect(record.status).toBe(200)
    expect(record.body.file).toMatchObject({ filename: INFECTED_NAME, scan: { status: 'infected', signature: EICAR_SIGNATURE } })
    await axe()
    await screenshot(page, 'scanning-infected')

    // A reload shows the notice again (from the audit log), not the file.
    await open('files')
    expect(await page.locator('#infected-notice li .infected-name').allTextContents()).toEqual([INFECTED_NAME])
    expect(await row(INFECTED_NAME).count()).toBe(0)
    expect(await page.locator('#page-info').textContent()).toBe('1 file')
  })

  it('the Activity page reads scan.infected in words: what, by whom, the file, its name, size and signature', async () => {
    await open('activity?action=scan.infected')
    const rows = page.locator('#events-body tr')
    await eventually(() => rows.count()).toBe(1)
    const cells = await rows.first().locator('td').allTextContents()
    expect(cells[1]).toBe('Virus found: file removed scan.infected')
    expect(cells[2]).toBe('The server (automatic)')
    expect(cells[4]).toBe(`file #${infectedId}`)
    expect(await rows.first().locator('td.details li').allTextContents()).toEqual([
      `file name: ${INFECTED_NAME}`,
      'size: 68 B',
      `signature: ${EICAR_SIGNATURE}`,
    ])
    // The filter offers it by name.
    expect(await page.locator('#filter-action option:checked').textContent()).toBe('Virus found: file removed')
    expect(await page.evaluate('window.pwned')).toBeUndefined()
    await axe()
  })

  it('Dismiss deletes the remembered record: the notice goes, and stays gone', async () => {
    await open('files')
    const notice = page.locator('#infected-notice')
    expect(await notice.isVisible()).toBe(true)
    await notice.getByRole('button', { name: `Dismiss ${INFECTED_NAME}` }).click()
    await eventually(() => notice.isHidden()).toBe(true)
    expect(await page.locator('#status').textContent()).toBe(`Dismissed ${INFECTED_NAME}.`)
    // Focus goes to the list's heading, not to the page's body.
    expect(await page.evaluate('document.activeElement.id')).toBe('list-title')
    expect((await fromPage(`files/${infectedId}`)).status).toBe(404)
    await open('files')
    expect(await notice.isHidden()).toBe(true)
    await axe()
    expect(problems).toEqual({ errors: [], foreignRequests: [] })
  })
})

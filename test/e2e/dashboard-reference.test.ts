import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { axeViolations, describeViolations } from '../helpers/axe.js'
import { chromiumAvailable, launchBrowser, screenshot, watchContext, type PageProblems } from '../helpers/browser.js'

const PUBLIC_HOST = 'files.example.test'
const PASSWORD = 'correct horse battery staple'
const BASE_URL = `http://${PUBLIC_HOST}/api/v1`
const dashboard = (page = '') => `http://${PUBLIC_HOST}/dashboard/${page}`

/**
 * The API reference (Swagger UI, made to pass axe-core) and the Get started page, in Chromium, on a
 * desktop and a phone screen: no accessibility violation, the operations rendered, Try it out
 * answering 401 without a key and 200 with one pasted into the page, the base URL in every example.
 */
describe.skipIf(!chromiumAvailable)('API reference and Get started pages in Chromium', () => {
  let t: TestApp
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let problems: PageProblems
  let apiKey: string

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}` })
    const email = `reference-${Date.now()}@example.test`
    const account = await t.createAccount('pro', email)
    apiKey = account.apiKey
    await t.app.services.accountHolders.setPassword(account.accountId, PASSWORD)
    browser = await launchBrowser({ [PUBLIC_HOST]: new URL(t.url).host })
    context = await browser.newContext({ viewport: { width: 1366, height: 900 } })
    problems = watchContext(context, [PUBLIC_HOST])
    page = await context.newPage()
    await page.goto(dashboard('sign-in'))
    await page.getByLabel('Email address').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(dashboard('files'))
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  async function open(target: Page, name: string) {
    await target.goto(dashboard(name))
    // Swagger UI renders the whole document before the page says it is ready: slow on a busy machine.
    await target.waitForSelector('body[data-ready="true"]', { timeout: 45_000 })
  }

  /** axe-core (test/helpers/axe.ts: served from the page's own origin, so the CSP stays as it is) finds nothing. */
  async function expectNoViolations(target: Page) {
    const violations = await axeViolations(target)
    expect(violations, describeViolations(violations)).toEqual([])
  }

  /** An operation's block: Swagger UI's id is `operations-<tag>-<operationId>`. */
  const operation = (id: string, target = page) => target.locator(`.opblock[id$="-${id}"]`)

  /** Try it out on GET /api/v1/stats: the status of the answer and the request the browser sent. The answer stays on screen. */
  async function tryStats() {
    const stats = operation('getStats')
    const summary = stats.locator('.opblock-summary-control')
    if ((await summary.getAttribute('aria-expanded')) !== 'true') await summary.click()
    // Swagger UI renders the body after the click returns: wait for its one try-out button, which
    // reads "Try it out" until pressed and "Cancel" after (checking visibility at once raced).
    const tryOut = stats.locator('.try-out__btn').first()
    await tryOut.waitFor()
    if (!(await tryOut.getAttribute('class'))?.includes('cancel')) await tryOut.click()
    const clear = stats.getByRole('button', { name: 'Clear' })
    if (await clear.isVisible()) await clear.click()
    const [request] = await Promise.all([
      page.waitForRequest((request) => request.url() === `${BASE_URL}/stats`),
      stats.getByRole('button', { name: 'Execute' }).click(),
    ])
    const status = stats.locator('.live-responses-table .response .response-col_status')
    await status.waitFor()
    const body = (await stats.locator('.live-responses-table .response .highlight-code code').first().textContent()) ?? ''
    return { status: (await status.textContent())?.trim(), headers: await request.allHeaders(), body }
  }

  it('the OpenAPI document points at nothing a user cannot open (no repository files)', async () => {
    const document = await (await fetch(`${t.url}/api/v1/openapi.json`)).text()
    expect(document).not.toMatch(/docs\/|\.md\b/)
  })

  it('API reference, desktop: renders every operation and passes axe-core', async () => {
    await open(page, 'reference')
    const operations = await page.locator('.opblock-summary-path').allTextContents()
    expect(operations).toEqual(
      expect.arrayContaining(['/api/v1/files/upload', '/api/v1/files', '/api/v1/files/{file_id}', '/api/v1/stats']),
    )
    expect(operations.some((path) => path.startsWith('/dashboard'))).toBe(false)
    // Grouped by the document's tags (src/http/plugins/openapi.ts), none left in "default".
    const groups = await page.locator('.opblock-tag-section h3 .nostyle span').allTextContents()
    expect(groups).toEqual([
      'Files',
      'Uploads',
      'Links',
      'Downloads',
      'Upload requests',
      'Webhooks',
      'Keys',
      'Audit',
      'Stats',
      'Health',
      'Document',
    ])
    expect(await operation('getStats').getAttribute('id')).toBe('operations-Stats-getStats')
    // The page sends users to things they can open: the document itself, keys, Get started.
    const links = await page.locator('main > p a, .try-key a').evaluateAll((anchors) => anchors.map((a) => a.getAttribute('href')))
    expect(links).toEqual(['../api/v1/openapi.json', 'get-started', 'settings#api'])
    await expectNoViolations(page)
    await screenshot(page, 'reference-desktop')
  }, 60_000)

  it('Try it out: 401 without a key (the session is not a key), 200 with a key pasted into the page, 401 once forgotten', async () => {
    const without = await tryStats()
    expect(without.status).toBe('401')
    expect(without.headers.authorization).toBeUndefined()
    expect(without.headers.cookie).toBeUndefined()

    // Not a key: refused in the page, nothing handed to Swagger UI.
    const field = page.getByLabel('API key', { exact: true })
    await field.fill('my-password')
    await page.getByRole('button', { name: 'Use this key' }).click()
    await expect.poll(() => page.locator('#key-error').textContent()).toMatch(/^That is not an API key/)

    await field.fill(apiKey)
    await page.getByRole('button', { name: 'Use this key' }).click()
    await expect
      .poll(() => page.locator('#status').textContent())
      .toBe(`Try it out now sends the key ${apiKey.slice(0, 8)}… as Authorization: Bearer.`)
    expect(await field.inputValue()).toBe('')
    // Kept in the tab's memory only.
    expect(await page.evaluate('JSON.stringify(localStorage) + JSON.stringify(sessionStorage)')).not.toContain(apiKey)

    const withKey = await tryStats()
    expect(withKey.status).toBe('200')
    expect(withKey.headers.authorization).toBe(`Bearer ${apiKey}`)
    expect(JSON.parse(withKey.body)).toMatchObject({ success: true, plan: 'pro' })

    // Expanded operations (a query, a form, an answer on screen) and Swagger UI's Authorize dialog pass axe-core too.
    await operation('listFiles').locator('.opblock-summary-control').click()
    await operation('uploadFile').locator('.opblock-summary-control').click()
    await operation('uploadFile').locator('.opblock-body').waitFor()
    await expectNoViolations(page)
    await screenshot(page, 'reference-try-it-out')
    await page.locator('.auth-wrapper .btn.authorize').click()
    await page.locator('.auth-container').first().waitFor()
    expect(await page.locator('.auth-container').first().textContent()).toContain('Authorized')
    await expectNoViolations(page)
    await page.getByRole('button', { name: 'Close the dialog' }).click()

    await page.getByRole('button', { name: 'Forget the key' }).click()
    await expect.poll(() => page.locator('#status').textContent()).toBe('The key is forgotten: Try it out sends no key.')
    expect((await tryStats()).status).toBe('401')
  }, 60_000)

  it('Get started, desktop: the base URL in every example, copy buttons, a link to create a key, passes axe-core', async () => {
    await open(page, 'get-started')
    expect(await page.locator('nav a[aria-current="page"]').textContent()).toBe('Get started')
    expect(await page.locator('#base-url').textContent()).toBe(BASE_URL)
    const examples = page.locator('code.uses-base-url')
    const ids = await examples.evaluateAll((codes) => codes.map((code) => code.id))
    expect(ids).toEqual(['curl-usage', 'js-usage', 'cli-usage', 'python-usage', 'php-usage', 'java-usage'])
    for (const text of await examples.allTextContents()) expect(text).toContain(BASE_URL)
    expect(await page.locator('.base-url-slot').evaluateAll((slots) => slots.every((slot) => slot.textContent !== ''))).toBe(true)
    const everything = (await page.locator('main').textContent()) ?? ''
    expect(everything).not.toMatch(/example\.com|localhost/)
    // Install lines of each official SDK.
    expect(await page.locator('#js-install').textContent()).toBe('npm install @fileshare/sdk')
    expect(await page.locator('#python-install').textContent()).toBe('pip install fileshare-sdk')
    expect(await page.locator('#php-install').textContent()).toBe('composer require fileshare/sdk')
    expect(await page.locator('#java-install').textContent()).toContain('<artifactId>fileshare-sdk</artifactId>')
    expect(await page.locator('#curl-usage').textContent()).toContain(`API=${BASE_URL}\n`)
    expect(await page.getByRole('link', { name: 'Account settings, API' }).getAttribute('href')).toBe('settings#api')

    expect(await page.getByRole('button', { name: /^Copy/ }).count()).toBe(11)
    // Answered at the button (the status line is out of view by the later snippets): "Copied" for a moment, and a live region.
    const copy = page.locator('button[data-copy="curl-usage"]')
    await copy.click()
    await expect.poll(() => page.locator('button[data-copy="curl-usage"] + .action-note').textContent()).toBe('Copied the curl commands.')
    expect(await copy.textContent()).toBe('Copied')
    await expect.poll(() => copy.textContent(), { timeout: 5_000 }).toBe('Copy the curl commands')
    expect(await copy.locator('.visually-hidden').count()).toBe(1)
    await expectNoViolations(page)
    await screenshot(page, 'get-started-desktop')
  })

  it('on a phone: both pages pass axe-core, and Get started does not scroll sideways', async () => {
    const phone = await context.newPage()
    await phone.setViewportSize({ width: 390, height: 844 })
    await open(phone, 'get-started')
    await expectNoViolations(phone)
    // Long lines of code scroll inside their own (focusable) box, not the page.
    expect(await phone.evaluate('document.documentElement.scrollWidth')).toBe(390)
    await screenshot(phone, 'get-started-phone')
    await open(phone, 'reference')
    expect(await phone.locator('.opblock-summary-path').count()).toBeGreaterThan(10)
    await expectNoViolations(phone)
    await screenshot(phone, 'reference-phone')

    // An operation open: its responses stack (they were four columns in 260 px: "OK." a letter a
    // line, the example cut, the headers past the card), nothing leaves the operation's box.
    const getFile = operation('getFile', phone)
    await getFile.locator('.opblock-summary-control').click()
    const ok = getFile.locator('tr.response[data-code="200"] .response-col_description__inner')
    await ok.waitFor()
    expect(await ok.textContent()).toBe('OK.')
    expect((await ok.boundingBox())!.height).toBeLessThan(40)
    const box = (await getFile.boundingBox())!
    for (const part of ['.highlight-code', 'table.headers', '.response-controls']) {
      const found = (await getFile.locator(`tr.response[data-code="200"] ${part}`).first().boundingBox())!
      expect(found.x + found.width, part).toBeLessThanOrEqual(box.x + box.width + 1)
      expect(found.width, part).toBeGreaterThan(150)
    }
    expect(await phone.evaluate('document.documentElement.scrollWidth')).toBe(390)
    // The example keeps its lines whole ("upload_date": "2026-11-22 09:30:00" on one line) and scrolls sideways in its box.
    const example = getFile.locator('tr.response[data-code="200"] .highlight-code > .microlight').first()
    expect(await example.getAttribute('tabindex')).toBe('0')
    const sizes = (await example.evaluate((element) => {
      const box = element as unknown as { scrollWidth: number; clientWidth: number }
      return { scroll: box.scrollWidth, client: box.clientWidth }
    })) as { scroll: number; client: number }
    expect(sizes.scroll).toBeGreaterThan(sizes.client)
    await expectNoViolations(phone)
    await screenshot(phone, 'reference-phone-operation-open')
    // The same in the dark theme: the reference keeps its light colours in a box of its own.
    await phone.emulateMedia({ colorScheme: 'dark' })
    expect(await phone.evaluate(`getComputedStyle(document.getElementById('swagger-ui')).backgroundColor`)).toBe('rgb(255, 255, 255)')
    expect(await phone.evaluate('getComputedStyle(document.documentElement).backgroundColor')).toBe('rgb(15, 19, 25)')
    await expectNoViolations(phone)
    await screenshot(phone, 'reference-phone-operation-open-dark')
    await phone.close()
  }, 90_000)

  it('no page raised an error, broke its CSP (script-src and style-src self), or asked any host but the service', () => {
    expect(problems).toEqual({ errors: [], foreignRequests: [] })
  })
})

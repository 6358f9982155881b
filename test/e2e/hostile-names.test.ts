import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'
import { chromiumAvailable, launchBrowser, screenshot, watchContext, type PageProblems } from '../helpers/browser.js'

const PUBLIC_HOST = 'files.example.test'
const DOWNLOAD_HOST = 'dl.example.test'
const PASSWORD = 'correct horse battery staple'

/**
 * File names that would run script if the page ever inserted them as HTML. (Slashes and backslashes
 * would be cut as paths, and FormData escapes double quotes, so the names do without them.)
 */
const HOSTILE_NAMES = [
  '<img src=x onerror=alert(1)>.html',
  '<svg onload=alert(2)>.svg',
  '<script src=data:,alert(3)><script>.js',
  '<b id=injected>bold<b>.txt',
  "{{constructor.constructor('alert(5)')()}}.html",
]

describe.skipIf(!chromiumAvailable)('hostile file names in the dashboard', () => {
  let t: TestApp
  let browser: Browser
  let page: Page
  let problems: PageProblems
  let dialogs: string[]

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}`, FILESHARE_DOWNLOAD_URL: `http://${DOWNLOAD_HOST}` })
    const server = new URL(t.url).host
    browser = await launchBrowser({ [PUBLIC_HOST]: server, [DOWNLOAD_HOST]: server })
    const context = await browser.newContext({ acceptDownloads: true })
    problems = watchContext(context, [PUBLIC_HOST, DOWNLOAD_HOST])
    page = await context.newPage()
    dialogs = []
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message())
      void dialog.dismiss()
    })
    const email = `hostile-${Date.now()}@example.test`
    const { accountId, apiKey } = await t.createAccount('pro', email)
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    for (const name of HOSTILE_NAMES) {
      const { response, body } = await uploadFile(t, apiKey, `content of ${name}`, name)
      expect(response.status).toBe(201)
      expect(body.filename).toBe(name)
    }
    await page.goto(`http://${PUBLIC_HOST}/dashboard/sign-in`)
    await page.getByLabel('Email address').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`http://${PUBLIC_HOST}/dashboard/files`)
    await page.waitForSelector('body[data-ready="true"]')
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  it('shows each name as plain text: no element, script or handler comes from it', async () => {
    expect(await page.locator('#files-body td.name').allTextContents()).toEqual([...HOSTILE_NAMES].reverse())
    // Each name is one text node in a span of its own, and nothing else. (The name's cell also holds the
    // row's checkbox and the page's own file-type icon, svg.file-icon, since issue 37.)
    const nameNodes = await page
      .locator('#files-body td.name .file-name')
      .evaluateAll((names: { childElementCount: number; childNodes: { length: number } }[]) =>
        names.map((name) => [name.childElementCount, name.childNodes.length]),
      )
    expect(nameNodes).toEqual(HOSTILE_NAMES.map(() => [0, 1]))
    expect(await page.locator('#files-body svg.file-icon').count()).toBe(HOSTILE_NAMES.length)
    expect(await page.locator('#files-body img, #files-body svg:not(.file-icon), #files-body script, #injected').count()).toBe(0)
    expect(await page.title()).toBe('Files · Fileshare')
    await screenshot(page, '10-hostile-names')
  })

  it('the delete dialog shows the name as text too', async () => {
    await page.getByRole('button', { name: `Delete ${HOSTILE_NAMES[0]}` }).click()
    expect(await page.locator('#confirm-delete-name').textContent()).toBe(HOSTILE_NAMES[0])
    expect(await page.locator('#confirm-delete-name').evaluate((element: { childElementCount: number }) => element.childElementCount)).toBe(
      0,
    )
    await page.keyboard.press('Escape')
  })

  it('its public link downloads the file instead of rendering it', async () => {
    const link = page.getByRole('link', { name: `Download ${HOSTILE_NAMES[0]}` })
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()])
    expect(download.suggestedFilename()).toMatch(/\.html$/)
    // The page stayed where it was; nothing of the file ran.
    expect(page.url()).toBe(`http://${PUBLIC_HOST}/dashboard/files`)
    expect(await page.title()).toBe('Files · Fileshare')
  })

  it('no dialog opened, no script error, no CSP violation, no foreign request', () => {
    expect(dialogs).toEqual([])
    expect(problems).toEqual({ errors: [], foreignRequests: [] })
  })
})

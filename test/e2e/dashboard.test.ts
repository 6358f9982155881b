import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCommand } from '../helpers/cli.js'
import { bearer, makeTempDir, startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'
import { chromiumAvailable, launchBrowser, screenshot, watchContext, type PageProblems } from '../helpers/browser.js'

const PUBLIC_HOST = 'files.example.test'
const DOWNLOAD_HOST = 'dl.example.test'
const PASSWORD = 'correct horse battery staple'
const dashboard = (page = '') => `http://${PUBLIC_HOST}/dashboard/${page}`

/** Polls until the assertion holds: the browser and the server (scrypt takes ~0.4 s) need their time. */
const eventually = <T>(probe: () => Promise<T>, timeout = 15_000) => expect.poll(probe, { timeout, interval: 50 })

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

/**
 * The account holder's whole journey in Debian's Chromium, against a real server: invitation,
 * sign-in, API keys, uploads with progress, downloads, deletion, usage, API reference, sign-out.
 * The tests run in order and share one browser session, as one person would.
 */
describe.skipIf(!chromiumAvailable)('dashboard in Chromium', () => {
  let t: TestApp
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let problems: PageProblems
  let scratch: string
  let holder: { accountId: number; email: string }

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}`, FILESHARE_DOWNLOAD_URL: `http://${DOWNLOAD_HOST}` })
    const server = new URL(t.url).host
    browser = await launchBrowser({ [PUBLIC_HOST]: server, [DOWNLOAD_HOST]: server })
    context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } })
    problems = watchContext(context, [PUBLIC_HOST, DOWNLOAD_HOST])
    page = await context.newPage()
    scratch = await makeTempDir('fileshare-e2e-')
    const email = `holder-${Date.now()}@example.test`
    holder = { accountId: (await t.createAccount('pro', email)).accountId, email }
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
    if (scratch) await fs.rm(scratch, { recursive: true, force: true })
  })

  /** Visits a page of the dashboard and waits until its script has loaded its data. */
  async function open(name: string) {
    await page.goto(dashboard(name))
    await page.waitForSelector('body[data-ready="true"]')
  }

  it('the operator invites the holder with the CLI; the link lets the holder choose a password and signs them in', async () => {
    const invited = await runCommand(['account', 'invite', String(holder.accountId), '--json'], {
      FILESHARE_DATA_DIR: t.dataDir,
      FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}`,
    })
    expect(invited).toMatchObject({ code: 0, stderr: '' })
    const link = (JSON.parse(invited.stdout) as { invite_url: string }).invite_url
    expect(link).toMatch(new RegExp(`^http://${PUBLIC_HOST}/dashboard/invite#[A-Za-z0-9_-]{43}$`))

    await page.goto(link)
    // The token leaves the address bar at once (it is in the fragment, which is never sent to a server).
    expect(page.url()).toBe(dashboard('invite'))
    await page.getByLabel('New password').fill(PASSWORD)
    await page.getByLabel('Repeat the password').fill('something else entirely')
    await page.getByRole('button', { name: 'Set password and sign in' }).click()
    await eventually(() => page.getByRole('alert').textContent()).toBe('The two passwords differ.')
    await page.getByLabel('Repeat the password').fill(PASSWORD)
    await screenshot(page, '01-invite')
    await page.getByRole('button', { name: 'Set password and sign in' }).click()
    await page.waitForURL(dashboard('files'))
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.locator('#account-email').textContent()).toBe(holder.email)

    // The link works once: opened again, the page says so and offers no password form (issue 37).
    const again = await context.newPage()
    await again.goto(link)
    await eventually(() => again.locator('#invite-unusable-message').textContent()).toMatch(/invalid, already used or expired/)
    expect(await again.getByLabel('New password').isVisible()).toBe(false)
    expect(await again.getByRole('link', { name: 'Sign in' }).isVisible()).toBe(true)
    await again.close()
  })

  it('signs out, refuses a wrong password with a generic message, and signs in with the keyboard alone', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    // common.js sends the browser to sign-in?signed-out; sign-in.js says so and drops the query.
    await page.waitForURL(/\/dashboard\/sign-in(\?signed-out)?$/)
    await eventually(() => page.locator('#signed-out').textContent()).toBe('You are signed out.')
    await page.goto(dashboard('files'))
    expect(page.url()).toBe(dashboard('sign-in'))

    await page.getByLabel('Email address').fill(holder.email)
    await page.getByLabel('Password').fill('not the password at all')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await eventually(() => page.getByRole('alert').textContent()).toBe('The email address or the password is wrong.')
    await screenshot(page, '02-sign-in')

    await page.goto(dashboard('sign-in'))
    await page.keyboard.press('Tab')
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content')
    // The header's colour theme choice, then the form.
    await page.keyboard.press('Tab')
    expect(await page.evaluate('document.activeElement.id')).toBe('theme-choice')
    await page.keyboard.press('Tab')
    await page.keyboard.type(holder.email.toUpperCase())
    await page.keyboard.press('Tab')
    await page.keyboard.type(PASSWORD)
    await page.keyboard.press('Enter')
    await page.waitForURL(dashboard('files'))
  })

  it('account settings, API section: creates a named key shown once, which works against the API until it is revoked', async () => {
    await open('settings')
    await eventually(() => page.locator('#api-access').textContent()).toMatch(/Your plan, pro, includes API access/)
    await page.getByLabel('Key name').fill('backup script')
    await page.getByRole('button', { name: 'Create key' }).click()
    const shown = page.getByLabel('New API key')
    await eventually(() => shown.inputValue()).toMatch(/^fsk_[A-Za-z0-9_-]{43}$/)
    const apiKey = await shown.inputValue()

    // Copying puts the whole key on the clipboard (plain http: the page falls back to a selection).
    await page.evaluate(`document.addEventListener('copy', () => { window.copied = String(getSelection()) }, { once: true })`)
    await page.getByRole('button', { name: 'Copy key' }).click()
    expect(await page.evaluate('window.copied')).toBe(apiKey)
    // Said at the button (settings.js, copyFieldAt), not in the status line far above it.
    await eventually(() => page.locator('#copy-key + .action-note').textContent()).toBe('Copied the key.')
    await screenshot(page, '03-settings-api-new-key')

    const row = page.locator('#keys-body tr', { hasText: 'backup script' })
    expect(await row.locator('td').allTextContents()).toEqual([
      'backup script',
      `${apiKey.slice(0, 10)}…`,
      // A key made without choosing scopes or addresses holds every scope, from anywhere.
      'Full access',
      'Anywhere',
      expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/),
      'never',
      'Active',
      'Revoke',
    ])

    const stats = await fetch(`${t.api}/stats`, { headers: bearer(apiKey) })
    expect(stats.status).toBe(200)
    expect(await stats.json()).toMatchObject({ success: true, plan: 'pro' })
    // After a reload the key is listed by its prefix only, with its last use and the address it came from.
    await open('settings')
    expect(await page.locator('body').textContent()).not.toContain(apiKey)
    await eventually(() => row.locator('td').nth(5).textContent()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} from 127\.0\.0\.0$/)

    await row.getByRole('button', { name: 'Revoke key backup script' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click()
    await eventually(() => row.locator('td').nth(6).textContent()).toMatch(/^Revoked /)
    // Focus stays in the table (the Revoke button that took this one's place), never falls to <body>.
    await eventually(() => page.evaluate("document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.tagName")).toMatch(
      /^Revoke key /,
    )
    const refused = await fetch(`${t.api}/stats`, { headers: bearer(apiKey) })
    expect(refused.status).toBe(401)
  })

  it('uploads a large file with a real progress bar, and downloads it through its public link', async () => {
    const content = Buffer.alloc(48 * 1024 * 1024, 'fileshare ')
    const file = path.join(scratch, 'large file.bin')
    await fs.writeFile(file, content)
    await open('files')
    // Slow the browser's uploads down, so that progress events come in many steps.
    const cdp = await context.newCDPSession(page)
    await cdp.send('Network.enable')
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 48 * 1024 * 1024,
    })
    await page.evaluate(`
      window.progressSeen = []
      new MutationObserver((records) => {
        for (const record of records) if (record.target instanceof HTMLProgressElement) window.progressSeen.push([record.target.value, record.target.max])
      }).observe(document.getElementById('uploads'), { subtree: true, attributes: true, attributeFilter: ['value'] })
    `)
    await page.getByLabel('Choose files').setInputFiles(file)
    const item = page.locator('#uploads li', { hasText: 'large file.bin' })
    await eventually(() => item.locator('.upload-state').textContent(), 25_000).toBe('Uploaded.')
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })
    await screenshot(page, '04-files-uploaded')

    const seen = (await page.evaluate('window.progressSeen')) as [number, number][]
    const partial = seen.filter(([value, max]) => max >= content.length && value > 0 && value < max)
    expect(partial.length, JSON.stringify(seen)).toBeGreaterThan(1)
    expect(seen.map(([value]) => value)).toEqual([...seen.map(([value]) => value)].sort((a, b) => a - b))
    expect(await item.locator('progress').evaluate((bar: { value: number; max: number }) => bar.value === bar.max)).toBe(true)

    const row = page.locator('#files-body tr', { hasText: 'large file.bin' })
    expect(await row.locator('td').nth(1).textContent()).toBe('48 MiB')
    const link = row.getByRole('link', { name: 'Download large file.bin' })
    expect(await link.getAttribute('href')).toMatch(new RegExp(`^http://${DOWNLOAD_HOST}/download/[A-Za-z0-9_-]+$`))
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()])
    expect(download.suggestedFilename()).toBe('large file.bin')
    expect(sha256(await fs.readFile((await download.path())!))).toBe(sha256(content))
  })

  it('uploads by drag and drop, copies a public link, pages through the list newest first', async () => {
    await open('files')
    await page.evaluate(`
      window.dropped = new DataTransfer()
      window.dropped.items.add(new File(['dropped bytes'], 'dropped.txt', { type: 'text/plain' }))
    `)
    const dataTransfer = await page.evaluateHandle('window.dropped')
    await page.dispatchEvent('#dropzone', 'drop', { dataTransfer })
    const item = page.locator('#uploads li', { hasText: 'dropped.txt' })
    await eventually(() => item.locator('.upload-state').textContent()).toBe('Uploaded.')
    await eventually(() => page.locator('#files-body tr td.name').allTextContents()).toEqual(['dropped.txt', 'large file.bin'])

    const row = page.locator('#files-body tr', { hasText: 'dropped.txt' })
    // By its place: while it says "Copied", its name says so too.
    const copy = row.locator('td.link button')
    expect(await copy.getAttribute('aria-label')).toBe('Copy link to dropped.txt')
    await page.evaluate(`document.addEventListener('copy', () => { window.copied = String(getSelection()) }, { once: true })`)
    await copy.click()
    const publicLink = (await page.evaluate('window.copied')) as string
    expect(publicLink).toBe(await copy.getAttribute('data-link'))
    // Said at the button, not in the status line above the list: its label for a moment, and a live region beside it.
    expect(await copy.textContent()).toBe('Copied')
    await eventually(() => copy.locator('xpath=following-sibling::*[1]').textContent()).toBe('Copied the public link of dropped.txt.')
    expect(await copy.locator('xpath=following-sibling::*[1]').getAttribute('role')).toBe('status')
    expect(await page.locator('#status').textContent()).toBe('')
    await eventually(() => copy.textContent(), 5_000).toBe('Copy link')
    const downloaded = await fetch(`${t.url}${new URL(publicLink).pathname}`)
    expect(await downloaded.text()).toBe('dropped bytes')

    // 21 more files through the API: the list shows 20 a page, newest first, as the API does.
    const { apiKey } = await t.app.services.apiKeys.create(holder.accountId, 'paging').then((created) => ({ apiKey: created.apiKey }))
    for (let i = 1; i <= 21; i++)
      expect((await uploadFile(t, apiKey, `file ${i}`, `paged-${String(i).padStart(2, '0')}.txt`)).response.status).toBe(201)
    await open('files')
    const names = await page.locator('#files-body td.name').allTextContents()
    expect(names).toHaveLength(20)
    expect(names[0]).toBe('paged-21.txt')
    expect(await page.locator('#page-info').textContent()).toBe('Page 1 of 2 (23 files)')
    await page.getByRole('link', { name: 'Next page' }).click()
    await eventually(() => page.locator('#files-body td.name').allTextContents()).toEqual(['paged-01.txt', 'dropped.txt', 'large file.bin'])
    expect(await page.getByRole('link', { name: 'Next page' }).isVisible()).toBe(false)
  })

  it('deletes a file only after confirmation; its public link stops working', async () => {
    await open('files')
    await page.getByRole('link', { name: 'Next page' }).click()
    const row = page.locator('#files-body tr', { hasText: 'dropped.txt' })
    await eventually(() => row.count()).toBe(1)
    const link = (await row.getByRole('button', { name: /Copy link to/ }).getAttribute('data-link'))!

    await row.getByRole('button', { name: 'Delete dropped.txt' }).click()
    const dialog = page.getByRole('dialog')
    expect(await dialog.textContent()).toContain('dropped.txt will be deleted')
    await screenshot(page, '05-files-delete-dialog')
    await page.keyboard.press('Escape')
    expect(await row.count()).toBe(1)
    expect((await fetch(`${t.url}${new URL(link).pathname}`)).status).toBe(200)

    await row.getByRole('button', { name: 'Delete dropped.txt' }).click()
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await eventually(() => page.locator('#status').textContent()).toBe('Deleted dropped.txt.')
    // The page says so first, then reloads the list (public/dashboard/assets/files.js): the row goes a moment later.
    await eventually(() => row.count()).toBe(0)
    expect((await fetch(`${t.url}${new URL(link).pathname}`)).status).toBe(404)
    // Another page of the list: what was said about this one goes (it said "Deleted …" on page 2 before).
    await page.getByRole('link', { name: 'Previous page' }).click()
    await eventually(() => page.locator('#page-info').textContent()).toBe('Page 1 of 2 (22 files)')
    expect(await page.locator('#status').textContent()).toBe('')
  })

  it('usage: files, total size, uploads today and API requests today, drawn as bars', async () => {
    const stats = (await (
      await fetch(`${t.api}/stats`, { headers: bearer((await t.app.services.apiKeys.create(holder.accountId)).apiKey) })
    ).json()) as {
      stats: { total_files: number; uploads_today: number }
    }
    await open('usage')
    expect(await page.locator('#total-files').textContent()).toBe(String(stats.stats.total_files))
    expect(await page.locator('#total-size').textContent()).toBe('48 MiB')
    const uploads = page.getByRole('meter', { name: 'Uploads today' })
    expect(await uploads.getAttribute('aria-valuenow')).toBe(String(stats.stats.uploads_today))
    expect(await uploads.getAttribute('aria-valuemax')).toBe('500')
    expect(await page.locator('#uploads-text').textContent()).toBe(
      `${stats.stats.uploads_today} of 500 (${Math.round((stats.stats.uploads_today / 500) * 100)}%)`,
    )
    const requests = page.getByRole('meter', { name: 'API requests today' })
    // The API calls made with this account's keys in this file: a /stats with the new key, 21 uploads, the /stats
    // above. The revoked key's refusal does not count, and neither do the dashboard's own calls.
    expect(Number(await requests.getAttribute('aria-valuenow'))).toBe(23)
    expect(await requests.getAttribute('aria-valuemax')).toBe('5000')
    const fill = await uploads.locator('.fill').evaluate((element: { style: { width: string } }) => element.style.width)
    expect(fill).toBe(`${((stats.stats.uploads_today / 500) * 100).toFixed(1)}%`)
    await screenshot(page, '06-usage')
  })

  it('API reference: rendered from the OpenAPI document, by assets this service serves', async () => {
    await page.goto(dashboard('reference'))
    await page.waitForSelector('body[data-ready="true"]', { timeout: 20_000 })
    const operations = await page.locator('.opblock-summary-path').allTextContents()
    expect(operations).toEqual(
      expect.arrayContaining(['/api/v1/files/upload', '/api/v1/files', '/api/v1/files/{file_id}', '/api/v1/stats']),
    )
    expect(operations.some((operation) => operation.startsWith('/dashboard'))).toBe(false)
    await screenshot(page, '07-api-reference')
  })

  it('fits a phone screen without sideways scrolling', async () => {
    const phone = await context.newPage()
    await phone.setViewportSize({ width: 390, height: 844 })
    for (const name of ['files', 'settings', 'usage']) {
      await phone.goto(dashboard(name))
      await phone.waitForSelector('body[data-ready="true"]')
      // Tables turn into stacked cards; nothing sticks out of the screen.
      await screenshot(phone, `08-phone-${name}`)
      const tooWide = `[...document.querySelectorAll('body *')]
        // The header's page links scroll sideways inside their own strip (the nav), which must fit.
        .filter((element) => !element.closest('thead, .visually-hidden') && !element.parentElement.closest('.top nav') && element.checkVisibility())
        .filter((element) => element.getBoundingClientRect().right > document.documentElement.clientWidth)
        .map((element) => element.tagName + '.' + element.className)`
      expect(await phone.evaluate(tooWide), name).toEqual([])
      expect(await phone.evaluate('document.documentElement.scrollWidth'), name).toBe(390)
    }
    await phone.close()
  })

  it('a free plan sees why the API refuses it and which plans include it', async () => {
    const { accountId } = await t.createAccount('free', `free-${Date.now()}@example.test`)
    const account = await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    const other = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const freeProblems = watchContext(other, [PUBLIC_HOST])
    const freePage = await other.newPage()
    await freePage.goto(dashboard('sign-in'))
    await freePage.getByLabel('Email address').fill(account.email)
    await freePage.getByLabel('Password').fill(PASSWORD)
    await freePage.getByRole('button', { name: 'Sign in' }).click()
    await freePage.waitForURL(dashboard('files'))
    await freePage.goto(dashboard('settings'))
    await freePage.waitForSelector('body[data-ready="true"]')
    const notice = freePage.locator('#api-access')
    expect(await notice.locator('p').textContent()).toMatch(/Your plan, free, does not include API access: .*403 plan_not_supported/)
    expect(await notice.locator('li').allTextContents()).toEqual([
      expect.stringMatching(/^pro: 50 requests a minute, 5,000 a day, files up to 5\.0 GiB, 500 uploads a day$/),
      expect.stringMatching(/^business: /),
      expect.stringMatching(/^enterprise: /),
    ])
    await screenshot(freePage, '09-settings-free-plan')
    await other.close()
    expect(freeProblems).toEqual({ errors: [], foreignRequests: [] })
  })

  it('signs out: the session ends on the server, not only in the browser', async () => {
    await open('files')
    const [cookie] = await context.cookies(dashboard())
    expect(cookie).toMatchObject({ name: 'fileshare_session', httpOnly: true, sameSite: 'Strict', path: '/dashboard' })
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(/\/dashboard\/sign-in(\?signed-out)?$/)
    expect(await context.cookies(dashboard())).toEqual([])
    const replayed = await fetch(`${t.url}/dashboard/api/session`, { headers: { cookie: `fileshare_session=${cookie!.value}` } })
    expect(replayed.status).toBe(401)
  })

  it('no page raised an error, broke its CSP, or asked any host but the service', () => {
    expect(problems).toEqual({ errors: [], foreignRequests: [] })
  })
})

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
const DAY = 86_400_000
/** A key name a spreadsheet would run as a formula, with a comma and quotes for RFC 4180 to quote. */
const FORMULA_NAME = '=HYPERLINK("http://evil.example/","click"), @me'
/** What the page shows for a time: `YYYY-MM-DD HH:MM`, UTC. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/

const eventually = <T>(probe: () => Promise<T>, timeout = 15_000) => expect.poll(probe, { timeout, interval: 50 })

/** The page's globals, for functions that run in it (this project's TypeScript has no DOM types). */
interface InPage {
  document: {
    documentElement: { scrollWidth: number; clientWidth: number }
    activeElement: { getAttribute(name: string): string | null } | null
    getElementById(id: string): { textContent: string | null } | null
  }
}

/** RFC 4180: records of fields, quoted fields with doubled quotes, CRLF between records. */
function parseCsv(text: string): string[][] {
  const records: string[][] = []
  let record: string[] = []
  let field = ''
  let quoted = false
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"'
        index++
      } else if (char === '"') quoted = false
      else field += char
    } else if (char === '"' && field === '') quoted = true
    else if (char === ',') {
      record.push(field)
      field = ''
    } else if (char === '\r' && text[index + 1] === '\n') {
      record.push(field)
      records.push(record)
      record = []
      field = ''
      index++
    } else field += char
  }
  if (field !== '' || record.length > 0) throw new Error('the CSV does not end with CRLF')
  return records
}

/**
 * Issue 32 in the dashboard, in Chromium on a desktop (1366x900) and a phone (390x844, touch):
 * creating scoped keys through the form (presets, allowed addresses, expiry), the keys table
 * (scopes, allowed addresses, last use and its address), the form's field errors for an empty
 * scope list, a malformed CIDR and a bad number of days (before any request) and the server's
 * message beside the form; the Activity page (an upload by a key and a delete in the dashboard with
 * their actors, filters by action and date, Older and Newer, details as text only) and its CSV
 * export (every page, RFC 4180, formulas defused), read through Chromium's download. axe-core on
 * both pages in both viewports. Screenshots: test-artifacts/screenshots/keys-activity-*.png.
 */
describe.skipIf(!chromiumAvailable)('scoped keys and the Activity page in the dashboard', () => {
  let t: TestApp
  let browser: Browser
  let accountId: number
  let email: string
  let desktop: Page
  let phone: Page
  const problems: PageProblems[] = []
  /** The read-only key made through the form, and the upload-only one. */
  let readKey: string
  let uploadKey: string

  async function newPage(kind: 'desktop' | 'phone'): Promise<Page> {
    const context = await browser.newContext({
      acceptDownloads: true,
      ...(kind === 'desktop' ? { viewport: DESKTOP } : { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }),
    })
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

  /** Desktop: the whole page. Phone: what the screen shows (a full-page capture drops the touch emulation). */
  async function shot(page: Page, name: string) {
    if (page.viewportSize()!.width > PHONE.width) return fullPageScreenshot(page, `keys-activity-${name}`)
    await fs.mkdir(SCREENSHOT_DIR, { recursive: true })
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `keys-activity-${name}.png`) })
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

  /** A field's accessible description: the texts of the elements its aria-describedby names. */
  const description = (field: Locator) =>
    field.evaluate((element) => {
      const ids: string[] = String(element.getAttribute('aria-describedby') ?? '')
        .split(' ')
        .filter(Boolean)
      const { document } = globalThis as unknown as InPage
      return ids.map((id) => document.getElementById(id)?.textContent ?? '').join(' ')
    })

  /** The keys table's row of the key named `name`, cell by cell, by column. */
  async function keyRow(page: Page, name: string): Promise<Record<string, string>> {
    const row = page.locator('#keys-body tr', { has: page.locator('td[data-label="Name"]', { hasText: name }) })
    // The table reloads after the new key is shown: under load it may come a moment later.
    await expect.poll(() => row.count()).toBe(1)
    return row.evaluate((element) =>
      Object.fromEntries(
        [...element.querySelectorAll('td')].map((cell) => [
          (cell as unknown as { dataset: { label: string } }).dataset.label,
          cell.textContent!,
        ]),
      ),
    )
  }

  /** The Activity table, row by row: the event's action (its code), actor, address, target and detail lines. */
  const eventRows = (page: Page) =>
    page.locator('#events-body tr').evaluateAll((rows) =>
      rows.map((row) => {
        const text = (label: string) => row.querySelector(`td[data-label="${label}"]`)!.textContent!
        return {
          at: text('Time (UTC)'),
          action: row.querySelector('td[data-label="Action"] code')!.textContent!,
          actor: text('Actor'),
          address: text('Address'),
          target: text('Target'),
          details: [...row.querySelectorAll('td[data-label="Details"] li')].map((item) => item.textContent!),
        }
      }),
    )

  /** Calls the API with a key, from this process (127.0.0.1, as the server sees it). */
  const withKey = (key: string, pathName: string, init: RequestInit = {}) =>
    fetch(`${t.api}${pathName}`, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } })

  async function uploadWith(key: string, name: string, body = 'some bytes'): Promise<{ file_id: number }> {
    const form = new FormData()
    form.append('file', new Blob([body]), name)
    const answer = await withKey(key, '/files/upload', { method: 'POST', body: form })
    expect(answer.status).toBe(201)
    return (await answer.json()) as { file_id: number }
  }

  /** Fills the create form and submits it; returns the new key as the page shows it. */
  async function createKey(
    page: Page,
    name: string,
    { preset, addresses, expiry }: { preset: string; addresses?: string; expiry?: string },
  ) {
    await page.getByLabel('Key name').fill(name)
    await page.getByRole('radio', { name: preset }).check()
    if (addresses !== undefined) await page.getByLabel('Allowed addresses').fill(addresses)
    if (expiry !== undefined) await page.getByLabel('Key expires').selectOption({ label: expiry })
    await page.getByRole('button', { name: 'Create key' }).click()
    await eventually(() => page.locator('#status').textContent()).toBe(`Created the key ${name}. Copy it now: it is not shown again.`)
    return page.getByLabel('New API key').inputValue()
  }

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}` })
    browser = await launchBrowser({ [PUBLIC_HOST]: new URL(t.url).host })
    email = `keys-activity-${Date.now()}@example.test`
    ;({ accountId } = await t.createAccount('pro', email))
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    ;[desktop, phone] = await Promise.all([newPage('desktop'), newPage('phone')])
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  it('creates a read-only key with allowed addresses and an expiry; the table shows its scopes, addresses and last use with its address', async () => {
    await open(desktop, 'settings')
    // The form starts at Full access: every scope ticked.
    expect(await desktop.getByRole('radio', { name: 'Full access' }).isChecked()).toBe(true)
    const boxes = desktop.locator('#key-scopes input[type=checkbox]')
    expect(await boxes.count()).toBe(9)
    expect(await boxes.evaluateAll((all) => all.every((box) => (box as unknown as { checked: boolean }).checked))).toBe(true)

    // A preset ticks its scopes; a tick by hand makes the choice "Custom", and back again.
    await desktop.getByRole('radio', { name: 'Read only' }).check()
    const ticked = () =>
      boxes.evaluateAll((all) =>
        all.filter((box) => (box as unknown as { checked: boolean }).checked).map((box) => (box as unknown as { value: string }).value),
      )
    expect(await ticked()).toEqual(['files:read', 'links:read', 'stats:read'])
    await desktop.getByLabel('files:delete').check()
    expect(await desktop.getByRole('radio', { name: 'Custom' }).isChecked()).toBe(true)
    await desktop.getByLabel('files:delete').uncheck()
    expect(await desktop.getByRole('radio', { name: 'Read only' }).isChecked()).toBe(true)
    await desktop.getByRole('radio', { name: 'Upload only' }).check()
    expect(await ticked()).toEqual(['files:write'])

    // "Custom number of days" shows its field only when chosen.
    expect(await desktop.getByLabel('Days until it expires').isVisible()).toBe(false)
    await desktop.getByLabel('Key expires').selectOption({ label: 'After a number of days…' })
    expect(await desktop.getByLabel('Days until it expires').isVisible()).toBe(true)

    const sent: unknown[] = []
    desktop.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/dashboard/api/keys')) sent.push(request.postDataJSON())
    })
    readKey = await createKey(desktop, 'backup job', {
      preset: 'Read only',
      addresses: '127.0.0.1\n10.0.0.0/8, 2001:db8::/32',
      expiry: 'After 30 days',
    })
    expect(readKey).toMatch(/^fsk_/)
    expect(sent).toEqual([
      {
        name: 'backup job',
        scopes: ['files:read', 'links:read', 'stats:read'],
        allowed_ips: ['127.0.0.1', '10.0.0.0/8', '2001:db8::/32'],
        expires_in_days: 30,
      },
    ])
    // The form is ready for the next key: Full access, no addresses, never expires.
    expect(await desktop.getByRole('radio', { name: 'Full access' }).isChecked()).toBe(true)
    expect(await desktop.getByLabel('Allowed addresses').inputValue()).toBe('')
    expect(await desktop.getByLabel('Days until it expires').isVisible()).toBe(false)

    expect(await keyRow(desktop, 'backup job')).toEqual({
      Name: 'backup job',
      Prefix: `${readKey.slice(0, 10)}…`,
      Scopes: 'files:read, links:read, stats:read',
      'Allowed from': '127.0.0.1, 10.0.0.0/8, 2001:db8::/32',
      'Created (UTC)': expect.stringMatching(DATE_TIME),
      'Last used (UTC)': 'never',
      State: 'Active',
      '': 'Revoke',
    })
    // The server holds what the form asked for, with the expiry 30 days on.
    const listed = (await desktop.evaluate(async () => (await fetch('api/keys')).json())) as {
      keys: { name: string; scopes: string[]; allowed_ips: string[]; expires_at: string; created_at: string }[]
    }
    const stored = listed.keys.find((key) => key.name === 'backup job')!
    expect(stored.scopes).toEqual(['files:read', 'links:read', 'stats:read'])
    expect(Date.parse(stored.expires_at) - Date.parse(stored.created_at)).toBe(30 * DAY)

    // The key reads but cannot upload (403 insufficient_scope); its last use shows with the address.
    expect((await withKey(readKey, '/files')).status).toBe(200)
    const refused = await withKey(readKey, '/files/upload', { method: 'POST', body: new FormData() })
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_scope')
    await open(desktop, 'settings')
    const used = await keyRow(desktop, 'backup job')
    expect(used['Last used (UTC)']).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} from 127\.0\.0\.0$/)

    // Full access reads as such; an upload-only key lists its one scope.
    uploadKey = await createKey(desktop, 'upload form', { preset: 'Upload only' })
    await createKey(desktop, 'everything', { preset: 'Full access' })
    expect(sent.at(-1)).toEqual({ name: 'everything', expires_in_days: null })
    expect(await keyRow(desktop, 'upload form')).toMatchObject({ Scopes: 'files:write', 'Allowed from': 'Anywhere' })
    expect(await keyRow(desktop, 'everything')).toMatchObject({ Scopes: 'Full access', 'Allowed from': 'Anywhere' })

    await fitsSideways(desktop, 'settings, desktop')
    await desktop.locator('#create-key-form').scrollIntoViewIfNeeded()
    await shot(desktop, 'desktop-settings-keys')
    await axeClean(desktop, 'settings with scoped keys, desktop')
  })

  it('marks an empty scope list, a malformed CIDR and a bad number of days at their fields, before asking the server', async () => {
    await open(desktop, 'settings')
    let posts = 0
    const count = (request: { method(): string; url(): string }) => {
      if (request.method() === 'POST' && request.url().endsWith('/dashboard/api/keys')) posts++
    }
    desktop.on('request', count)
    await desktop.getByLabel('Key name').fill('broken')
    await desktop.getByRole('radio', { name: 'Upload only' }).check()
    await desktop.getByLabel('files:write').uncheck()
    expect(await desktop.getByRole('radio', { name: 'Custom' }).isChecked()).toBe(true)
    const addresses = desktop.getByLabel('Allowed addresses')
    await addresses.fill('192.0.2.7, 10.0.0.0/33\nfe80::1::2')
    await desktop.getByLabel('Key expires').selectOption({ label: 'After a number of days…' })
    await desktop.getByLabel('Days until it expires').fill('0')
    await desktop.getByRole('button', { name: 'Create key' }).click()

    // Each field at fault: aria-invalid, its message through aria-describedby; focus on the first.
    const firstScope = desktop.getByLabel('files:read')
    await eventually(() => firstScope.getAttribute('aria-invalid')).toBe('true')
    expect(await desktop.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.getAttribute('value'))).toBe('files:read')
    expect(await description(firstScope)).toBe('Tick at least one scope, or choose a preset.')
    expect(await desktop.locator('#key-scopes input[aria-invalid="true"]').count()).toBe(9)
    expect(await description(desktop.locator('#key-scopes'))).toContain('Tick at least one scope, or choose a preset.')
    expect(await addresses.getAttribute('aria-invalid')).toBe('true')
    expect(await description(addresses)).toContain(
      '"10.0.0.0/33", "fe80::1::2" are not IP addresses or CIDR ranges (such as 10.0.0.0/8 or 2001:db8::/32).',
    )
    const days = desktop.getByLabel('Days until it expires')
    expect(await days.getAttribute('aria-invalid')).toBe('true')
    expect(await description(days)).toContain('Give a whole number of days from 1 to 3650.')
    expect(await desktop.getByLabel('Key name').getAttribute('aria-invalid')).toBeNull()
    await desktop.locator('#create-key-form').scrollIntoViewIfNeeded()
    await shot(desktop, 'desktop-settings-field-errors')
    await axeClean(desktop, 'settings with field errors, desktop')

    // Mended one by one: a preset clears the scopes' error; the rest go at the next try.
    await desktop.getByRole('radio', { name: 'Read only' }).check()
    expect(await firstScope.getAttribute('aria-invalid')).toBeNull()
    expect(await description(firstScope)).toBe('')
    await addresses.fill('10.0.0.0/33')
    await days.fill('3651')
    await desktop.getByRole('button', { name: 'Create key' }).click()
    await eventually(() => description(addresses)).toContain('"10.0.0.0/33" is not an IP address or a CIDR range')
    expect(await description(days)).toContain('from 1 to 3650')
    expect(posts).toBe(0)

    // What only the server knows (a tab in the name, here) comes back as its message, next to the form.
    await addresses.fill('::ffff:10.1.2.3, 2001:db8::7/128')
    await days.fill('3650')
    await desktop.getByLabel('Key name').fill('tab\there')
    await desktop.getByRole('button', { name: 'Create key' }).click()
    await eventually(() => desktop.locator('#form-error').textContent()).toBe(
      'The key name must not contain control characters (such as a newline, tab or escape).',
    )
    expect(posts).toBe(1)
    expect(await addresses.getAttribute('aria-invalid')).toBeNull()
    expect(await days.getAttribute('aria-invalid')).toBeNull()
    desktop.off('request', count)
  })

  it('the keys form and table on a phone: presets and scopes stacked, nothing sideways, axe clean', async () => {
    await open(phone, 'settings')
    await phone.getByLabel('Key name').fill('phone key')
    await phone.getByRole('radio', { name: 'Read only' }).check()
    await phone.getByLabel('Allowed addresses').fill('2001:db8:1234:5678::/64')
    await phone.getByRole('button', { name: 'Create key' }).click()
    await eventually(() => phone.getByLabel('New API key').inputValue()).toMatch(/^fsk_/)
    expect(await keyRow(phone, 'phone key')).toMatchObject({
      Scopes: 'files:read, links:read, stats:read',
      'Allowed from': '2001:db8:1234:5678::/64',
    })
    // The used key's card: its last use and address on the screen.
    const row = phone.locator('#keys-body tr', { hasText: 'backup job' })
    await row.scrollIntoViewIfNeeded()
    const lastUse = (await row.locator('td[data-label="Last used (UTC)"]').boundingBox())!
    expect(lastUse.x + lastUse.width).toBeLessThanOrEqual(PHONE.width)
    await fitsSideways(phone, 'settings, phone')
    await shot(phone, 'phone-settings-keys')
    await phone.locator('#key-scopes').scrollIntoViewIfNeeded()
    await shot(phone, 'phone-settings-scopes')
    await axeClean(phone, 'settings with scoped keys, phone')
  })

  it('an upload by a key and a delete in the dashboard show on the Activity page, with their actors', async () => {
    const file = await uploadWith(uploadKey, 'minutes.txt', 'minutes of the meeting')
    // Delete it on the files page, as a holder would.
    await open(desktop, 'files')
    await desktop.getByRole('button', { name: 'Delete minutes.txt' }).click()
    await desktop.getByRole('dialog').getByRole('button', { name: 'Delete' }).click()
    await eventually(() => desktop.locator('#files-body tr', { hasText: 'minutes.txt' }).count()).toBe(0)

    await desktop.getByRole('link', { name: 'Activity' }).click()
    await desktop.waitForURL(dashboard('activity'))
    await desktop.waitForSelector('body[data-ready="true"]')
    expect(await desktop.locator('nav a[aria-current="page"]').textContent()).toBe('Activity')
    const rows = await eventRows(desktop)
    expect(rows.slice(0, 2)).toEqual([
      {
        at: expect.stringMatching(DATE_TIME),
        action: 'file.deleted',
        actor: `Dashboard: ${email}`,
        address: '127.0.0.0',
        target: `file #${file.file_id}`,
        details: ['file name: minutes.txt', 'size: 22 B'],
      },
      {
        at: expect.stringMatching(DATE_TIME),
        action: 'file.uploaded',
        actor: expect.stringMatching(/^API key “upload form” #\d+$/),
        address: '127.0.0.0',
        target: `file #${file.file_id}`,
        details: ['file name: minutes.txt', 'size: 22 B', 'via: multipart'],
      },
    ])
    // The keys made through the form (and the one the operator made), the sign-ins too, newest first.
    const byHolder = rows.filter((row) => row.action === 'key.created' && row.actor === `Dashboard: ${email}`)
    expect(byHolder.map((row) => row.details[0])).toEqual(['name: phone key', 'name: everything', 'name: upload form', 'name: backup job'])
    // A sign-in's actor is the account, named by its email as the other dashboard events.
    expect(rows.filter((row) => row.action === 'session.signed_in' && row.actor === `Dashboard: ${email}`)).toHaveLength(2)
    const ids = await desktop
      .locator('#events-body tr')
      .evaluateAll((all) => all.map((row) => Number((row as unknown as { dataset: { eventId: string } }).dataset.eventId)))
    expect(ids).toEqual([...ids].sort((a, b) => b - a))
    const created = rows.find((row) => row.action === 'key.created' && row.details.includes('name: backup job'))!
    expect(created.actor).toBe(`Dashboard: ${email}`)
    expect(created.details).toEqual(
      expect.arrayContaining(['scopes: files:read, links:read, stats:read', 'allowed ips: 127.0.0.1, 10.0.0.0/8, 2001:db8::/32']),
    )
    expect(await desktop.locator('#events-body tr').first().locator('td[data-label="Action"]').textContent()).toBe(
      'File deleted file.deleted',
    )
    await fitsSideways(desktop, 'activity, desktop')
    await shot(desktop, 'desktop-activity')
    await axeClean(desktop, 'activity, desktop')
  })

  it('filters by action and from a date, keeps the filters in the address, and pages with Older and Newer', async () => {
    await open(desktop, 'activity')
    const action = desktop.getByLabel('Action')
    // Every action the server records has its words, the account's protection and upload requests too (issue 37).
    expect(await action.locator('optgroup').evaluateAll((groups) => groups.map((group) => group.getAttribute('label')))).toEqual(
      expect.arrayContaining(['Two-factor sign-in', 'Email address', 'Upload requests']),
    )
    expect(await action.locator('option').allTextContents()).toEqual(
      expect.arrayContaining(['Every two-factor event', 'Wrong two-factor code', 'Email changed', 'Upload request closed']),
    )
    await action.selectOption({ label: 'File uploaded' })
    await desktop.getByRole('button', { name: 'Show events' }).click()
    await eventually(async () => (await eventRows(desktop)).map((row) => row.action)).toEqual(['file.uploaded'])
    expect(new URL(desktop.url()).search).toBe('?action=file.uploaded')

    await action.selectOption({ label: 'Every file event' })
    await desktop.getByRole('button', { name: 'Show events' }).click()
    await eventually(async () => (await eventRows(desktop)).map((row) => row.action)).toEqual(['file.deleted', 'file.uploaded'])

    // From tomorrow (UTC): nothing yet; from today: the same two. A reload keeps the filters.
    const today = new Date().toISOString().slice(0, 10)
    const tomorrow = new Date(Date.now() + DAY).toISOString().slice(0, 10)
    await desktop.getByLabel('From (UTC date)').fill(tomorrow)
    await desktop.getByRole('button', { name: 'Show events' }).click()
    await eventually(() => desktop.locator('#no-events').isVisible()).toBe(true)
    expect(await desktop.locator('#no-events').textContent()).toBe('No events match these filters.')
    expect(await desktop.locator('#events-table').isVisible()).toBe(false)
    await desktop.getByLabel('From (UTC date)').fill(today)
    await desktop.getByRole('button', { name: 'Show events' }).click()
    await eventually(async () => (await eventRows(desktop)).length).toBe(2)
    expect(new URL(desktop.url()).searchParams.get('since')).toBe(today)
    await open(desktop, `activity?action=file.*&since=${today}`)
    expect(await action.inputValue()).toBe('file.*')
    expect(await desktop.getByLabel('From (UTC date)').inputValue()).toBe(today)
    expect((await eventRows(desktop)).map((row) => row.action)).toEqual(['file.deleted', 'file.uploaded'])

    // 25 more uploads: two pages of file events, 20 and 7.
    for (let index = 1; index <= 25; index++) await uploadWith(uploadKey, `batch-${String(index).padStart(2, '0')}.txt`)
    await open(desktop, 'activity?action=file.*')
    expect((await eventRows(desktop))[0]!.details[0]).toBe('file name: batch-25.txt')
    expect(await desktop.locator('#events-body tr').count()).toBe(20)
    expect(await desktop.locator('#page-number').textContent()).toBe('Page 1')
    expect(await desktop.getByRole('button', { name: 'Newer events' }).isDisabled()).toBe(true)
    await desktop.getByRole('button', { name: 'Older events' }).click()
    await eventually(() => desktop.locator('#page-number').textContent()).toBe('Page 2')
    const second = await eventRows(desktop)
    expect(second.map((row) => row.details[0])).toEqual([
      'file name: batch-05.txt',
      'file name: batch-04.txt',
      'file name: batch-03.txt',
      'file name: batch-02.txt',
      'file name: batch-01.txt',
      'file name: minutes.txt',
      'file name: minutes.txt',
    ])
    expect(await desktop.getByRole('button', { name: 'Older events' }).isDisabled()).toBe(true)
    // Focus goes to the list's heading, so that a screen reader starts at the new page.
    expect(await desktop.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.getAttribute('id'))).toBe('events-title')
    await desktop.getByRole('button', { name: 'Newer events' }).click()
    await eventually(() => desktop.locator('#page-number').textContent()).toBe('Page 1')
    expect((await eventRows(desktop))[0]!.details[0]).toBe('file name: batch-25.txt')

    // Clearing the filters shows everything again.
    await desktop.getByRole('button', { name: 'Clear filters' }).click()
    await eventually(async () => desktop.url()).toBe(dashboard('activity'))
    expect(await action.inputValue()).toBe('')
    await eventually(async () => (await eventRows(desktop)).length).toBe(20)
  })

  it('exports the events that match the filters as CSV: every page, RFC 4180 quoting, formulas defused', async () => {
    // A key whose name a spreadsheet would run, used for an upload, and 110 older events: three API pages.
    await open(desktop, 'settings')
    const formulaKey = await createKey(desktop, FORMULA_NAME, { preset: 'Upload only' })
    const file = await uploadWith(formulaKey, '-1+2.txt', 'x')
    await open(desktop, 'activity?action=file.uploaded')
    const [download] = await Promise.all([desktop.waitForEvent('download'), desktop.getByRole('button', { name: 'Export CSV' }).click()])
    expect(download.suggestedFilename()).toBe(`fileshare-activity-${new Date().toISOString().slice(0, 10)}.csv`)
    const text = await fs.readFile((await download.path())!, 'utf8')
    expect(text.startsWith('\ufeff')).toBe(true)
    const records = parseCsv(text.slice(1))
    expect(records[0]).toEqual([
      'event_id',
      'at_utc',
      'action',
      'actor_type',
      'actor_id',
      'actor_name',
      'ip',
      'user_agent',
      'target_type',
      'target_id',
      'details',
    ])
    // The upload of the minutes, 25 of the batch and the formula key's.
    expect(records).toHaveLength(1 + 27)
    const first = records[1]!
    expect(first).toEqual([
      expect.stringMatching(/^\d+$/),
      expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      'file.uploaded',
      'key',
      expect.stringMatching(/^\d+$/),
      `'${FORMULA_NAME}`,
      '127.0.0.0',
      // Node's fetch sends "node" as its user agent.
      'node',
      'file',
      String(file.file_id),
      JSON.stringify({ filename: '-1+2.txt', size: 1, via: 'multipart' }),
    ])
    // The raw line: the name quoted (a comma and quotes in it), its quotes doubled, after the apostrophe.
    expect(text).toContain(`,"'=HYPERLINK(""http://evil.example/"",""click""), @me",`)
    expect(records.every((record) => record.length === 11)).toBe(true)
    expect(records.slice(1).every((record) => record[2] === 'file.uploaded')).toBe(true)
    await eventually(() => desktop.locator('#status').textContent()).toBe('Exported 27 events (File uploaded).')

    // Every page of an unfiltered export: 110 more events take it past one API page (100).
    for (let index = 0; index < 110; index++) {
      await t.app.services.auditLog.record(
        'link.password_failed',
        { type: 'public', id: null, ip: '198.51.100.23', userAgent: '@curl/8' },
        { accountId, target: { type: 'link', id: 9000 + index }, details: { file_id: file.file_id } },
      )
    }
    await open(desktop, 'activity')
    const requests: string[] = []
    desktop.on('request', (request) => {
      if (request.url().includes('/api/audit-events')) requests.push(new URL(request.url()).searchParams.get('before_id') ?? 'first')
    })
    const [all] = await Promise.all([desktop.waitForEvent('download'), desktop.getByRole('button', { name: 'Export CSV' }).click()])
    const everything = parseCsv((await fs.readFile((await all.path())!, 'utf8')).slice(1))
    const apiEvents = await t.app.services.auditLog.list(accountId, { limit: 100 })
    expect(everything.length - 1).toBeGreaterThan(140)
    expect(requests.length).toBeGreaterThanOrEqual(2)
    expect(everything[1]![0]).toBe(String(apiEvents.events[0]!.event_id))
    const ids = everything.slice(1).map((record) => Number(record[0]))
    expect(ids).toEqual([...ids].sort((a, b) => b - a))
    expect(new Set(ids).size).toBe(ids.length)
    // A public visitor's user agent that starts with @ is defused too.
    const failed = everything.find((record) => record[2] === 'link.password_failed')!
    expect(failed.slice(3, 8)).toEqual(['public', '', '', '198.51.100.0', "'@curl/8"])
  })

  it('the Activity page on a phone: stacked cards, filters, nothing sideways, axe clean; details stay text', async () => {
    // A detail that looks like markup is shown as its text, never as HTML.
    await t.app.services.auditLog.record(
      'file.updated',
      { type: 'system', id: null },
      { accountId, target: { type: 'file', id: 1 }, details: { filename: '<img src=x onerror=alert(1)>.txt', changed: ['expires_at'] } },
    )
    for (const page of [phone, desktop]) {
      await open(page, 'activity')
      const top = (await eventRows(page))[0]!
      expect(top).toMatchObject({
        action: 'file.updated',
        actor: 'The server (automatic)',
        address: 'not recorded',
        details: ['file name: <img src=x onerror=alert(1)>.txt', 'changed: expires_at'],
      })
      expect(await page.locator('#events-body img').count()).toBe(0)
      await fitsSideways(page, `activity, ${page === phone ? 'phone' : 'desktop'}`)
      await axeClean(page, `activity, ${page === phone ? 'phone' : 'desktop'}`)
    }
    await phone.getByLabel('Action').selectOption({ label: 'Every key event' })
    await phone.getByRole('button', { name: 'Show events' }).click()
    await eventually(async () => new Set((await eventRows(phone)).map((row) => row.action))).toEqual(new Set(['key.created']))
    await shot(phone, 'phone-activity-keys')
    await phone.locator('#events-body tr').first().scrollIntoViewIfNeeded()
    await shot(phone, 'phone-activity-card')
    await fitsSideways(phone, 'activity filtered, phone')
    await axeClean(phone, 'activity filtered, phone')
  })

  it('no page raised an error, broke its CSP, or asked any host but the service', () => {
    for (const found of problems) expect(found).toEqual({ errors: [], foreignRequests: [] })
  })
})

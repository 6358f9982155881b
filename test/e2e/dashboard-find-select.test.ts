import fs from 'node:fs/promises'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
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
import { readZip } from '../helpers/zip-reader.js'

const PUBLIC_HOST = 'files.example.test'
const DOWNLOAD_HOST = 'dl.example.test'
const PASSWORD = 'correct horse battery staple'
const DESKTOP = { width: 1366, height: 900 }
const PHONE = { width: 390, height: 844 }
const dashboard = (page = '') => `http://${PUBLIC_HOST}/dashboard/${page}`

const eventually = <T>(probe: () => Promise<T>, timeout = 15_000) => expect.poll(probe, { timeout, interval: 50 })

/** An element's data attributes, in functions that run in the page (this project's TypeScript has no DOM types). */
interface WithData {
  dataset: Record<string, string | undefined>
}
/** What the list's file records hold, as far as these tests read them. */
interface Listed {
  file_id: number
  filename: string
  public_link: string
}

/**
 * Issue 37 on the Files page, in Chromium on a desktop (1366x900) and a phone (390x844, touch):
 * choosing several files (a checkbox per row, "Select all on this page", keyboard and touch), the
 * bar with the count, deleting them with one confirmation (which were deleted, which were not
 * found, where focus goes), downloading them as one ZIP (its entries' names and bytes read from the
 * file the browser saved from a plain form post, the page holding no Blob of it), and the selection emptied by a page change. axe-core on every new state, in the
 * light and the dark theme. Screenshots: test-artifacts/screenshots/find-select-*.png.
 */
describe.skipIf(!chromiumAvailable)('finding and acting on many files in the dashboard', () => {
  let t: TestApp
  let browser: Browser
  const problems: PageProblems[] = []
  let desktop: Page
  let phone: Page

  async function newContext(kind: 'desktop' | 'phone'): Promise<Page> {
    const context: BrowserContext = await browser.newContext({
      acceptDownloads: true,
      ...(kind === 'desktop' ? { viewport: DESKTOP } : { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }),
    })
    context.setDefaultTimeout(10_000)
    problems.push(watchContext(context, [PUBLIC_HOST, DOWNLOAD_HOST]))
    return context.newPage()
  }

  /** Signs `email` in, the session of an earlier holder of these tests gone first. */
  async function signIn(page: Page, email: string) {
    await page.context().clearCookies()
    await page.goto(dashboard('sign-in'))
    await page.getByLabel('Email address').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(dashboard('files'))
    await page.waitForSelector('body[data-ready="true"]')
  }

  async function open(page: Page, address = 'files') {
    await page.goto(dashboard(address))
    await page.waitForSelector('body[data-ready="true"]')
  }

  /** Desktop: the whole page. Phone: what the screen shows (a full-page capture drops the touch emulation). */
  async function screenshot(page: Page, name: string) {
    if (page.viewportSize()!.width > PHONE.width) return fullPageScreenshot(page, `find-select-${name}`)
    await fs.mkdir(SCREENSHOT_DIR, { recursive: true })
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `find-select-${name}.png`) })
  }

  /** axe-core on the page as it is, in the light theme and then the dark one (the system's), with a screenshot of each. */
  async function axeBothThemes(page: Page, name: string) {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme })
      const violations = await axeViolations(page)
      expect(violations, `${name}, ${colorScheme}: ${describeViolations(violations)}`).toEqual([])
      await screenshot(page, `${name}-${colorScheme}`)
    }
    await page.emulateMedia({ colorScheme: 'light' })
  }

  /**
   * A new holder with `files` uploaded in that order (the last is the newest), through the dashboard's
   * own endpoint; `expiresIn`: the file's lifetime in seconds.
   */
  async function holderWith(files: { name: string; bytes: string; expiresIn?: number }[]): Promise<string> {
    const email = `find-select-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.test`
    const { accountId } = await t.createAccount('pro', email)
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    await signIn(desktop, email)
    await desktop.evaluate(async (list) => {
      const session = (await (await fetch('api/session')).json()) as { csrf_token: string }
      for (const { name, bytes, expiresIn } of list) {
        const form = new FormData()
        form.append('file', new Blob([bytes]), name)
        const headers: Record<string, string> = { 'x-csrf-token': session.csrf_token }
        if (expiresIn) headers['fileshare-expires-in'] = String(expiresIn)
        const answer = await fetch('api/files/upload', { method: 'POST', headers, body: form })
        if (answer.status !== 201) throw new Error(`upload of ${name}: ${answer.status}`)
      }
    }, files)
    return email
  }

  /** The holder's files as the dashboard's API lists them (all of them, newest first). */
  const listed = (page: Page) =>
    page.evaluate(async () => ((await (await fetch('api/files?limit=100')).json()) as { files: Listed[] }).files)
  /** The names of the rows shown, in order. */
  const shownNames = (page: Page) =>
    page.locator('#files-body tr.file').evaluateAll((rows) => rows.map((row) => (row as unknown as WithData).dataset.name))
  const checkbox = (page: Page, name: string) => page.getByRole('checkbox', { name: `Select ${name}`, exact: true })
  const selectAll = (page: Page) => page.getByRole('checkbox', { name: 'Select all on this page' })
  const bar = (page: Page) => page.getByRole('group', { name: /selected$/ })
  /** What has focus: its name, and the name of the file whose row holds it. */
  const focused = (page: Page) =>
    page.evaluate(`(() => {
      const element = document.activeElement
      return { label: element.getAttribute('aria-label') ?? element.textContent, row: element.closest('tr.file')?.dataset.name }
    })()`)
  const focusedId = (page: Page) => page.evaluate('document.activeElement?.id')
  const mixed = (page: Page) => selectAll(page).evaluate((box) => (box as unknown as { indeterminate: boolean }).indeterminate)

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}`, FILESHARE_DOWNLOAD_URL: `http://${DOWNLOAD_HOST}` })
    const server = new URL(t.url).host
    browser = await launchBrowser({ [PUBLIC_HOST]: server, [DOWNLOAD_HOST]: server })
    ;[desktop, phone] = await Promise.all([newContext('desktop'), newContext('phone')])
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  it('a checkbox per row and "Select all on this page", by keyboard; the bar counts; a page change and Back empty the selection', async () => {
    const names = Array.from({ length: 25 }, (_, i) => `pick-${String(i + 1).padStart(2, '0')}.txt`)
    await holderWith(names.map((name) => ({ name, bytes: `bytes of ${name}` })))
    await open(desktop)
    // Newest first: pick-25 … pick-06 on page 1.
    expect(await shownNames(desktop)).toEqual(names.slice(5).reverse())
    expect(await bar(desktop).isVisible()).toBe(false)
    expect(
      await desktop.getByText('The selection is of this page: another page, a search, a filter or another order clears it.').isVisible(),
    ).toBe(true)

    // The keyboard: Tab from the select-all box reaches the first row's box; Space checks it.
    await selectAll(desktop).focus()
    await desktop.keyboard.press('Tab')
    expect(await focused(desktop)).toEqual({ label: 'Select pick-25.txt', row: 'pick-25.txt' })
    await desktop.keyboard.press('Space')
    await checkbox(desktop, 'pick-20.txt').check()
    expect(await bar(desktop).isVisible()).toBe(true)
    expect(await desktop.locator('#selection-count').textContent()).toBe('2 files selected')
    await eventually(() => desktop.locator('#selection-said').textContent()).toBe('2 files of 20 selected.')
    // Some chosen: "Select all" is mixed.
    expect(await mixed(desktop)).toBe(true)
    await axeBothThemes(desktop, 'desktop-two-selected')

    // Select all on this page: the 20 rows, nothing of page 2.
    await selectAll(desktop).focus()
    await desktop.keyboard.press('Space')
    expect(await desktop.locator('#files-body input.select-file:checked').count()).toBe(20)
    expect(await desktop.locator('#selection-count').textContent()).toBe('20 files selected')
    expect(await mixed(desktop)).toBe(false)
    await desktop.keyboard.press('Space')
    expect(await desktop.locator('#files-body input.select-file:checked').count()).toBe(0)
    expect(await bar(desktop).isVisible()).toBe(false)

    // "Clear selection" empties it; focus goes back to "Select all".
    await checkbox(desktop, 'pick-10.txt').check()
    await bar(desktop).getByRole('button', { name: 'Clear selection' }).click()
    expect(await desktop.locator('#files-body input.select-file:checked').count()).toBe(0)
    expect(await focusedId(desktop)).toBe('select-page')

    // A page change empties the selection, and Back does not bring it back.
    await checkbox(desktop, 'pick-06.txt').check()
    await desktop.getByRole('navigation', { name: 'Pages of files' }).getByRole('link', { name: 'Page 2' }).click()
    await desktop.waitForURL(dashboard('files?page=2'))
    await eventually(() => shownNames(desktop)).toEqual(names.slice(0, 5).reverse())
    expect(await bar(desktop).isVisible()).toBe(false)
    await checkbox(desktop, 'pick-01.txt').check()
    await desktop.goBack()
    await desktop.waitForURL(dashboard('files'))
    await eventually(() => shownNames(desktop)).toEqual(names.slice(5).reverse())
    expect(await desktop.locator('#files-body input.select-file:checked').count()).toBe(0)
    expect(await bar(desktop).isVisible()).toBe(false)
  }, 60_000)

  it('deletes the chosen files with one confirmation: which were deleted, which were not found, focus on the row that took their place', async () => {
    const names = ['keep-1.txt', 'gone-a.txt', 'gone-b.txt', 'gone-c.txt', 'keep-2.txt']
    await holderWith(names.map((name) => ({ name, bytes: name })))
    await open(desktop)
    expect(await shownNames(desktop)).toEqual([...names].reverse())
    for (const name of ['gone-a.txt', 'gone-b.txt', 'gone-c.txt']) await checkbox(desktop, name).check()
    // One of them is deleted elsewhere (another tab, the API) before the holder confirms.
    const before = await listed(desktop)
    const elsewhere = before.find((file) => file.filename === 'gone-b.txt')!
    const deletedElsewhere = await desktop.evaluate(async (id) => {
      const session = (await (await fetch('api/session')).json()) as { csrf_token: string }
      return (await fetch(`api/files/${id}`, { method: 'DELETE', headers: { 'x-csrf-token': session.csrf_token } })).status
    }, elsewhere.file_id)
    expect(deletedElsewhere).toBe(200)

    // Cancel first: nothing is deleted, focus is back on the bar's Delete.
    const deleteButton = bar(desktop).getByRole('button', { name: 'Delete', exact: true })
    await deleteButton.click()
    const dialog = desktop.getByRole('dialog', { name: 'Delete 3 files?' })
    expect(await dialog.isVisible()).toBe(true)
    expect(await dialog.textContent()).toContain('They will be deleted, and their public links stop working at once.')
    await axeBothThemes(desktop, 'desktop-delete-confirm')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    expect((await listed(desktop)).length).toBe(4)
    expect(await desktop.evaluate('document.activeElement?.textContent')).toBe('Delete')

    const calls: string[] = []
    desktop.on('request', (request) => {
      if (request.url().includes('/dashboard/api/files/delete')) calls.push(`${request.method()} ${request.postData()}`)
    })
    await deleteButton.click()
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await eventually(() => desktop.locator('#status').textContent()).toBe(
      'Deleted 2 files: gone-c.txt, gone-a.txt. 1 file was not found (deleted or expired meanwhile): gone-b.txt.',
    )
    // One call for the three, in the list's order.
    const ids = ['gone-c.txt', 'gone-b.txt', 'gone-a.txt'].map((name) => before.find((file) => file.filename === name)!.file_id)
    expect(calls).toEqual([`POST ${JSON.stringify({ ids })}`])
    expect((await listed(desktop)).map((file) => file.filename)).toEqual(['keep-2.txt', 'keep-1.txt'])
    await eventually(() => shownNames(desktop)).toEqual(['keep-2.txt', 'keep-1.txt'])
    // Focus on the row that took the first deleted one's place (as after one delete), never the page's body.
    await eventually(() => focused(desktop)).toEqual({ label: 'Download keep-1.txt', row: 'keep-1.txt' })
    expect(await bar(desktop).isVisible()).toBe(false)
    await axeBothThemes(desktop, 'desktop-deleted')
  }, 60_000)

  it('downloads the chosen files as one ZIP: its name, and every entry, named and in order, with its bytes', async () => {
    const files = [
      { name: 'notes.txt', bytes: 'first notes' },
      { name: 'photo.jpg', bytes: 'not really a JPEG' },
      { name: 'Notes.txt', bytes: 'the same name, another case' },
      { name: 'left out.txt', bytes: 'not chosen' },
      { name: 'résumé 2026.pdf', bytes: '%PDF-1.7 a résumé' },
    ]
    await holderWith(files)
    await open(desktop)
    for (const name of ['notes.txt', 'Notes.txt', 'résumé 2026.pdf']) await checkbox(desktop, name).check()
    const archiveRequests: string[] = []
    desktop.on('request', (request) => {
      const path = new URL(request.url()).pathname
      if (path.startsWith('/dashboard/api/files/archive')) archiveRequests.push(`${request.method()} ${path} ${request.postData() ?? ''}`)
    })
    // The page must not hold the ZIP: it makes no Blob URL (the spy counts them), and stays where it is
    // (the spy, gone with a new document, is still there afterwards).
    const pageUrl = desktop.url()
    await desktop.evaluate(() => {
      const spied = globalThis as unknown as { blobUrls: number }
      spied.blobUrls = 0
      const original = URL.createObjectURL.bind(URL)
      URL.createObjectURL = (object) => {
        spied.blobUrls++
        return original(object)
      }
    })
    const [download] = await Promise.all([
      desktop.waitForEvent('download'),
      bar(desktop).getByRole('button', { name: 'Download as ZIP' }).click(),
    ])
    expect(download.suggestedFilename()).toMatch(/^files-\d{8}-\d{6}\.zip$/)
    const zip = await readZip(await fs.readFile((await download.path())!))
    // The list's order (newest first); the second "notes.txt" (its case aside) gets " (2)".
    expect(zip.entries.map((entry) => [entry.name, entry.data.toString('utf8')])).toEqual([
      ['résumé 2026.pdf', '%PDF-1.7 a résumé'],
      ['Notes.txt', 'the same name, another case'],
      ['notes (2).txt', 'first notes'],
    ])
    // First the JSON route, whose answer's body the page cancels once the status is known (a refusal
    // is said in the page), then the plain form the browser saves from, with the session's token in a field.
    const ids = (await listed(desktop))
      .filter((file) => ['résumé 2026.pdf', 'Notes.txt', 'notes.txt'].includes(file.filename))
      .map((file) => file.file_id)
    const { csrf_token: token } = await desktop.evaluate(async () => (await fetch('api/session')).json() as Promise<{ csrf_token: string }>)
    expect(archiveRequests).toEqual([
      `POST /dashboard/api/files/archive ${JSON.stringify({ ids })}`,
      `POST /dashboard/api/files/archive-download ${new URLSearchParams({ csrf_token: token, ids: ids.join(',') }).toString()}`,
    ])
    expect(await desktop.evaluate(() => (globalThis as unknown as { blobUrls: number }).blobUrls)).toBe(0)
    expect(desktop.url()).toBe(pageUrl)
    // The button says the download started (heard), and is itself again.
    const button = bar(desktop).getByRole('button', { name: 'Download as ZIP' })
    await eventually(() => desktop.locator('#selection-bar .action-note').textContent()).toBe(
      'Downloading 3 files as one ZIP: your browser saves it.',
    )
    expect(await button.getAttribute('aria-busy')).toBeNull()
    // The selection stays: the files are still there to act on.
    expect(await desktop.locator('#selection-count').textContent()).toBe('3 files selected')

    // A file gone meanwhile: the server refuses the whole archive, and the bar says so at the button.
    const gone = (await listed(desktop)).find((file) => file.filename === 'Notes.txt')!
    await desktop.evaluate(async (id) => {
      const session = (await (await fetch('api/session')).json()) as { csrf_token: string }
      await fetch(`api/files/${id}`, { method: 'DELETE', headers: { 'x-csrf-token': session.csrf_token } })
    }, gone.file_id)
    await button.click()
    const note = desktop.locator('#selection-bar .action-note.failed')
    await eventually(() => note.textContent()).toMatch(/^Could not download the ZIP: .+/)
    expect(await note.isVisible()).toBe(true)
    await axeBothThemes(desktop, 'desktop-zip-failed')
  }, 60_000)

  it('on a phone, by touch: the boxes, the bar in view, delete after one confirmation; axe-core in both themes', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `phone-${i + 1} with a longer name than most.txt`)
    const email = await holderWith(names.map((name) => ({ name, bytes: name })))
    await signIn(phone, email)
    await open(phone)
    await axeBothThemes(phone, 'phone-list')
    const box = checkbox(phone, names[7]!)
    // A finger's size: the box's label is at least 44 px square.
    const target = (await phone.locator('#files-body tr.file').first().locator('.select-box').boundingBox())!
    expect(target.width).toBeGreaterThanOrEqual(44)
    expect(target.height).toBeGreaterThanOrEqual(44)
    await box.tap()
    expect(await box.isChecked()).toBe(true)
    await checkbox(phone, names[3]!).tap()
    expect(await phone.locator('#selection-count').textContent()).toBe('2 files selected')
    // The bar's three buttons on one line.
    const buttonTops = await bar(phone)
      .getByRole('button')
      .evaluateAll((buttons) => buttons.map((button) => Math.round(button.getBoundingClientRect().top)))
    expect(new Set(buttonTops).size, String(buttonTops)).toBe(1)
    // The card keeps its first line: box, name and Links.
    const row = phone.locator('#files-body tr.file').first()
    const centre = async (selector: string) => {
      const box = (await row.locator(selector).first().boundingBox())!
      return box.y + box.height / 2
    }
    // The box in the middle of the name's first line (24 px), beside it; Links on that line too.
    const [boxCentre, nameTop, linksCentre] = await Promise.all([
      centre('input.select-file'),
      row.locator('.name-text').boundingBox(),
      centre('td.more button'),
    ])
    expect(Math.abs(boxCentre - (nameTop!.y + 12))).toBeLessThan(4)
    expect(Math.abs(linksCentre - (nameTop!.y + 12))).toBeLessThan(8)
    // Scrolled to the bottom of the list, the bar is still in view.
    await phone.locator('#files-body tr.file').last().scrollIntoViewIfNeeded()
    const barBox = (await bar(phone).boundingBox())!
    expect(barBox.y).toBeGreaterThanOrEqual(0)
    expect(barBox.y + barBox.height).toBeLessThanOrEqual(PHONE.height)
    await axeBothThemes(phone, 'phone-two-selected')

    await bar(phone).getByRole('button', { name: 'Delete', exact: true }).tap()
    const dialog = phone.getByRole('dialog', { name: 'Delete 2 files?' })
    await axeBothThemes(phone, 'phone-delete-confirm')
    await dialog.getByRole('button', { name: 'Delete' }).tap()
    await eventually(() => phone.locator('#status').textContent()).toBe(`Deleted 2 files: ${names[7]}, ${names[3]}.`)
    await eventually(() => shownNames(phone)).toEqual(names.filter((_, i) => i !== 7 && i !== 3).reverse())
    await eventually(() => focused(phone)).toEqual({ label: `Download ${names[6]}`, row: names[6] })
    await axeBothThemes(phone, 'phone-deleted')
  }, 90_000)

  it('finds by name, sorts, sets the page size: all of it in the address, kept by a reload and Back, done by the API', async () => {
    const named = [
      { name: 'Report 2026.pdf', size: 300 },
      { name: 'report-draft.txt', size: 100 },
      { name: 'photo.jpg', size: 500 },
      { name: 'archive.zip', size: 50 },
      { name: 'notes.md', size: 200 },
      { name: 'Budget.xlsx', size: 400 },
    ]
    const fillers = Array.from({ length: 12 }, (_, i) => ({ name: `filler-${String(i + 1).padStart(2, '0')}.txt`, size: 11 + i }))
    // In upload order: the named ones, then the fillers (the newest last).
    const files = [...named, ...fillers]
    const email = await holderWith(files.map(({ name, size }) => ({ name, bytes: 'x'.repeat(size) })))
    const all = await listed(desktop)
    // Downloads through the public links: photo.jpg 3 times, notes.md once.
    for (const [name, times] of [
      ['photo.jpg', 3],
      ['notes.md', 1],
    ] as const) {
      const link = all.find((file) => file.filename === name)!.public_link
      for (let i = 0; i < times; i++) expect((await fetch(`${t.url}${new URL(link).pathname}`)).status).toBe(200)
    }
    const uploadOrder = files.map((file) => file.name)
    const newest = [...uploadOrder].reverse()
    const sizeOf = new Map(files.map((file) => [file.name, file.size]))
    /** The API's name order: A to Z folded, then by code point. */
    const fold = (name: string) => name.replace(/[A-Z]/g, (letter) => letter.toLowerCase())
    const byName = [...uploadOrder].sort((a, b) => (fold(a) < fold(b) ? -1 : fold(a) > fold(b) ? 1 : a < b ? -1 : 1))
    const address = async () => decodeURIComponent(new URL(desktop.url()).search)
    const fields = () =>
      Promise.all([
        desktop.getByLabel('Search by name').inputValue(),
        desktop.getByLabel('Sort').inputValue(),
        desktop.getByLabel('Per page').inputValue(),
      ])
    const listCalls: string[] = []
    desktop.on('request', (request) => {
      const url = new URL(request.url())
      if (url.pathname.endsWith('/dashboard/api/files')) listCalls.push(decodeURIComponent(url.search))
    })

    await open(desktop)
    expect(await fields()).toEqual(['', 'newest', '20'])
    expect(await desktop.getByRole('search', { name: 'Find files' }).isVisible()).toBe(true)

    // Typing: the list follows after a pause, with one entry in the history for the whole word; the API searches.
    const search = desktop.getByLabel('Search by name')
    await search.pressSequentially('report')
    await desktop.waitForURL(dashboard('files?q=report'))
    await eventually(() => shownNames(desktop)).toEqual(['report-draft.txt', 'Report 2026.pdf'])
    expect(listCalls.at(-1)).toBe('?page=1&limit=20&q=report')
    expect(await desktop.locator('#page-info').textContent()).toBe('2 files matching “report”')
    expect(await desktop.locator('#files-caption').textContent()).toBe('Your files, newest first, matching “report”')
    expect(await focusedId(desktop)).toBe('find-q')
    // A chosen file is of this view only: a new view empties the selection.
    await checkbox(desktop, 'report-draft.txt').check()

    await desktop.getByLabel('Sort').selectOption({ label: 'Largest first' })
    await desktop.waitForURL(dashboard('files?q=report&sort=largest'))
    await eventually(() => shownNames(desktop)).toEqual(['Report 2026.pdf', 'report-draft.txt'])
    expect(listCalls.at(-1)).toBe('?page=1&limit=20&q=report&sort=size&order=desc')
    expect(await bar(desktop).isVisible()).toBe(false)
    await axeBothThemes(desktop, 'desktop-search')

    // The search emptied (Enter), the order kept.
    await search.fill('')
    await search.press('Enter')
    await desktop.waitForURL(dashboard('files?sort=largest'))
    const largest = [...uploadOrder].sort((a, b) => sizeOf.get(b)! - sizeOf.get(a)!)
    await eventually(() => shownNames(desktop)).toEqual(largest)

    // 10 a page, then page 2: the pager keeps the view in its links.
    await desktop.getByLabel('Per page').selectOption('10')
    await desktop.waitForURL(dashboard('files?sort=largest&limit=10'))
    await eventually(() => shownNames(desktop)).toEqual(largest.slice(0, 10))
    expect(await desktop.locator('#page-info').textContent()).toBe('Page 1 of 2 (18 files)')
    const pager = desktop.getByRole('navigation', { name: 'Pages of files' })
    expect(await pager.getByRole('link', { name: 'Page 2' }).getAttribute('href')).toBe('/dashboard/files?sort=largest&limit=10&page=2')
    await pager.getByRole('link', { name: 'Page 2' }).click()
    await desktop.waitForURL(dashboard('files?sort=largest&limit=10&page=2'))
    await eventually(() => shownNames(desktop)).toEqual(largest.slice(10))

    // A reload keeps all of it.
    await desktop.reload()
    await desktop.waitForSelector('body[data-ready="true"]')
    expect(await fields()).toEqual(['', 'largest', '10'])
    expect(await shownNames(desktop)).toEqual(largest.slice(10))
    expect(await desktop.locator('#page-info').textContent()).toBe('Page 2 of 2 (18 files)')

    // Back, step by step, to each view before, its fields set again.
    const back = async (search: string, names: string[], expected: string[]) => {
      await desktop.goBack()
      await eventually(address).toBe(search)
      await eventually(() => shownNames(desktop)).toEqual(names)
      expect(await fields()).toEqual(expected)
    }
    // The pager's way back to page 1 keeps the view too (page 1's address has no number).
    await pager.getByRole('link', { name: 'Previous page' }).click()
    await eventually(address).toBe('?sort=largest&limit=10')
    await eventually(() => shownNames(desktop)).toEqual(largest.slice(0, 10))

    await back('?sort=largest&limit=10&page=2', largest.slice(10), ['', 'largest', '10'])
    await back('?sort=largest&limit=10', largest.slice(0, 10), ['', 'largest', '10'])
    await back('?sort=largest', largest, ['', 'largest', '20'])
    await back('?q=report&sort=largest', ['Report 2026.pdf', 'report-draft.txt'], ['report', 'largest', '20'])
    await back('?q=report', ['report-draft.txt', 'Report 2026.pdf'], ['report', 'newest', '20'])
    await back('', newest, ['', 'newest', '20'])

    // Every order, as the API gives it (ties: newest first in a descending order, oldest first in an ascending one).
    const downloaded = ['photo.jpg', 'notes.md', ...newest.filter((name) => name !== 'photo.jpg' && name !== 'notes.md')]
    const orders: [string, string, string, string[]][] = [
      ['Oldest first', 'oldest', 'oldest first', uploadOrder],
      ['Name, A to Z', 'name', 'by name, A to Z', byName],
      ['Name, Z to A', 'name-desc', 'by name, Z to A', [...byName].reverse()],
      ['Smallest first', 'smallest', 'smallest first', [...largest].reverse()],
      ['Most downloaded', 'downloads', 'most downloaded first', downloaded],
      ['Newest first', 'newest', 'newest first', newest],
    ]
    for (const [label, value, words, names] of orders) {
      await desktop.getByLabel('Sort').selectOption({ label })
      await eventually(address).toBe(value === 'newest' ? '' : `?sort=${value}`)
      await eventually(() => shownNames(desktop), 5_000).toEqual(names)
      expect(await desktop.locator('#files-caption').textContent()).toBe(`Your files, ${words}`)
    }

    // A search that finds nothing says so, and offers a way out; focus goes back to the box.
    await search.fill('zzz')
    await search.press('Enter')
    await desktop.waitForURL(dashboard('files?q=zzz'))
    const noMatch = desktop.locator('#no-match')
    await eventually(() => noMatch.isVisible()).toBe(true)
    expect(await noMatch.textContent()).toContain('No file matching “zzz”.')
    expect(await desktop.locator('#empty').isVisible()).toBe(false)
    expect(await desktop.locator('#files-table').isVisible()).toBe(false)
    await axeBothThemes(desktop, 'desktop-no-match')
    await noMatch.getByRole('button', { name: 'Clear the search and filters' }).click()
    await desktop.waitForURL(dashboard('files'))
    await eventually(() => shownNames(desktop)).toEqual(newest)
    expect(await focusedId(desktop)).toBe('find-q')

    // The address is read with care: a value the page does not offer is its default, never a 400.
    await open(desktop, 'files?sort=nonsense&limit=7&q=filler-1')
    expect(await fields()).toEqual(['filler-1', 'newest', '20'])
    expect(await shownNames(desktop)).toEqual(['filler-12.txt', 'filler-11.txt', 'filler-10.txt'])

    // On a phone: the search box on its line, order and page size side by side under it; axe-core in both themes.
    await signIn(phone, email)
    await open(phone, 'files?q=filler&sort=largest&limit=10')
    expect(await phone.getByLabel('Per page').inputValue()).toBe('10')
    expect(await shownNames(phone)).toEqual(
      fillers
        .map((file) => file.name)
        .reverse()
        .slice(0, 10),
    )
    const boxOf = async (field: string) => (await phone.locator(field).boundingBox())!
    const [box, sort, size] = await Promise.all([boxOf('#find-q'), boxOf('#find-sort'), boxOf('#find-limit')])
    expect(box.width).toBeGreaterThan(PHONE.width - 80)
    expect(sort.y).toBeGreaterThan(box.y + box.height)
    expect(Math.abs(sort.y - size.y)).toBeLessThan(2)
    expect(await phone.evaluate('document.documentElement.scrollWidth')).toBe(PHONE.width)
    await phone.locator('#find').scrollIntoViewIfNeeded()
    await axeBothThemes(phone, 'phone-search')
  }, 120_000)

  it('filters by type and by state through the API, combined with the search, in the address; no match offers to clear them', async () => {
    const email = `find-filters-${Date.now()}@example.test`
    const { accountId, apiKey } = await t.createAccount('pro', email)
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    const api = (method: string, pathName: string, init: RequestInit = {}) =>
      fetch(`${t.api}${pathName}`, {
        ...init,
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(init.headers as Record<string, string>) },
      })
    const upload = async (name: string, headers: Record<string, string> = {}) => {
      const form = new FormData()
      form.append('file', new Blob([`bytes of ${name}`]), name)
      const answer = await api('POST', '/files/upload', { body: form, headers })
      expect(answer.status).toBe(201)
      return ((await answer.json()) as { file_id: number }).file_id
    }
    for (const name of ['photo.png', 'clip.mp4']) await upload(name)
    const report = await upload('report.pdf')
    for (const name of ['sheet.csv', 'bundle.zip']) await upload(name)
    await upload('notes.txt', { 'fileshare-expires-in': '86400' })
    // report.pdf: a link with one download, taken: an exhausted link.
    const link = await api('POST', `/files/${report}/links`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ max_downloads: 1 }),
    })
    expect(link.status).toBe(201)
    const { link: made } = (await link.json()) as { link: { url: string } }
    // Its one download, as curl would take it (a link with a policy hands out a grant, then the bytes).
    const taken = await fetch(`${t.url}${new URL(made.url).pathname}`, { method: 'POST', body: new URLSearchParams(), redirect: 'manual' })
    expect(taken.status).toBe(303)
    // A guest's file, through an upload request.
    const request = await api('POST', '/upload-requests', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'scans', expires_in: 3600 }),
    })
    expect(request.status).toBe(201)
    const { upload_request: asked } = (await request.json()) as { upload_request: { url: string } }
    const token = asked.url.split('/').pop()!
    const guest = await fetch(`${t.api}/uploads`, {
      method: 'POST',
      headers: {
        'tus-resumable': '1.0.0',
        authorization: `UploadRequest ${token}`,
        'upload-length': '10',
        'upload-metadata': `filename ${Buffer.from('guest file.pdf').toString('base64')}`,
        'content-type': 'application/offset+octet-stream',
      },
      body: 'guest file',
    })
    expect(guest.status).toBe(201)

    await signIn(desktop, email)
    await open(desktop)
    const address = async () => decodeURIComponent(new URL(desktop.url()).search)
    const listCalls: string[] = []
    desktop.on('request', (sent) => {
      const url = new URL(sent.url())
      if (url.pathname.endsWith('/dashboard/api/files')) listCalls.push(decodeURIComponent(url.search))
    })
    const choose = async (label: 'Type' | 'State', option: string, search: string, names: string[]) => {
      await desktop.getByLabel(label, { exact: true }).selectOption({ label: option })
      await eventually(address).toBe(search)
      await eventually(() => shownNames(desktop)).toEqual(names)
    }
    await choose('Type', 'PDF', '?type=pdf', ['guest file.pdf', 'report.pdf'])
    expect(listCalls.at(-1)).toBe('?page=1&limit=20&type=application/pdf')
    await choose('State', 'From an upload request', '?type=pdf&state=requested', ['guest file.pdf'])
    expect(listCalls.at(-1)).toBe('?page=1&limit=20&type=application/pdf&state=from_upload_request')
    expect(await desktop.locator('#files-caption').textContent()).toBe('Your files, newest first, PDF, from an upload request')
    expect(await desktop.locator('#page-info').textContent()).toBe('1 file, PDF, from an upload request')
    await choose('Type', 'All types', '?state=requested', ['guest file.pdf'])
    await choose('State', 'With expired links', '?state=expired-links', ['report.pdf'])
    await choose('State', 'Expiring', '?state=expiring', ['notes.txt'])
    await choose('State', 'Any state', '', [
      'guest file.pdf',
      'notes.txt',
      'bundle.zip',
      'sheet.csv',
      'report.pdf',
      'clip.mp4',
      'photo.png',
    ])
    // A kind that is several content types: the API gets each.
    await choose('Type', 'Spreadsheets', '?type=spreadsheets', ['sheet.csv'])
    expect(listCalls.at(-1)).toContain('&type=text/csv')
    await choose('Type', 'Images', '?type=images', ['photo.png'])
    expect(listCalls.at(-1)).toBe('?page=1&limit=20&type=image')
    await axeBothThemes(desktop, 'desktop-filtered')

    // A reload keeps the filter; with a search too, nothing matches: the page says what was asked, and clears it all.
    await desktop.reload()
    await desktop.waitForSelector('body[data-ready="true"]')
    expect(await desktop.getByLabel('Type', { exact: true }).inputValue()).toBe('images')
    expect(await shownNames(desktop)).toEqual(['photo.png'])
    const search = desktop.getByLabel('Search by name')
    await search.fill('clip')
    await search.press('Enter')
    await eventually(address).toBe('?q=clip&type=images')
    const noMatch = desktop.locator('#no-match')
    await eventually(() => noMatch.isVisible()).toBe(true)
    expect(await noMatch.textContent()).toContain('No file matching “clip”, images.')
    await noMatch.getByRole('button', { name: 'Clear the search and filters' }).click()
    await eventually(address).toBe('')
    await eventually(() => shownNames(desktop)).toHaveLength(7)
    expect(await desktop.getByLabel('Type', { exact: true }).inputValue()).toBe('')
    // Back: the search with the filter again, then the filter alone.
    await desktop.goBack()
    await eventually(address).toBe('?q=clip&type=images')
    await desktop.goBack()
    await eventually(address).toBe('?type=images')
    await eventually(() => shownNames(desktop)).toEqual(['photo.png'])
    expect(await search.inputValue()).toBe('')
  }, 90_000)

  it('an icon of its kind before every name: by content type, else by extension; drawn in the page, hidden from screen readers', async () => {
    const kinds: [string, string][] = [
      ['photo.jpg', 'image'],
      ['drawing.svg', 'image'],
      ['clip.mp4', 'video'],
      ['song.mp3', 'audio'],
      ['Report.pdf', 'pdf'],
      ['Budget.xlsx', 'spreadsheet'],
      ['data.csv', 'spreadsheet'],
      ['slides.pptx', 'presentation'],
      ['letter.docx', 'document'],
      ['book.epub', 'document'],
      ['backup.tar.gz', 'archive'],
      ['bundle.zip', 'archive'],
      ['config.json', 'code'],
      ['script.py', 'code'],
      ['notes.md', 'text'],
      ['data.bin', 'file'],
      ['no extension', 'file'],
    ]
    // The last (the first row) expires: what is said under the name goes under the icon too.
    const email = await holderWith(
      kinds.map(([name], index) => ({ name, bytes: `bytes of ${name}`, expiresIn: index === kinds.length - 1 ? 86_400 : undefined })),
    )
    await open(desktop)
    const icons = () =>
      desktop.locator('#files-body tr.file').evaluateAll((rows) =>
        rows.map((row) => {
          const icon = row.querySelector('td.name svg.file-icon')!
          return [(row as unknown as WithData).dataset.name, icon.getAttribute('data-kind'), icon.getAttribute('aria-hidden')]
        }),
      )
    expect(await icons()).toEqual([...kinds].reverse().map(([name, kind]) => [name, kind, 'true']))
    // The name's text is the name alone: the icon adds nothing a screen reader reads, and has no <title>.
    expect(await desktop.locator('#files-body td.name .file-name').allTextContents()).toEqual([...kinds].reverse().map(([name]) => name))
    expect(await desktop.locator('#files-body td.name').first().textContent()).toMatch(
      /^no extensionExpires \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/,
    )
    expect(await desktop.locator('#files-body svg.file-icon title').count()).toBe(0)
    // Beside the name, on its first line, as large as a letter or so.
    const row = desktop.locator('#files-body tr.file', { hasText: 'Report.pdf' })
    const [icon, text] = await Promise.all([row.locator('svg.file-icon').boundingBox(), row.locator('.file-name').boundingBox()])
    expect(icon!.width).toBeGreaterThanOrEqual(18)
    expect(icon!.width).toBeLessThanOrEqual(24)
    expect(icon!.x + icon!.width).toBeLessThanOrEqual(text!.x)
    expect(Math.abs(icon!.y + icon!.height / 2 - (text!.y + 12))).toBeLessThan(4)
    const expiring = desktop.locator('#files-body tr.file').first()
    const [expiringIcon, expiry] = await Promise.all([
      expiring.locator('svg.file-icon').boundingBox(),
      expiring.locator('.file-expiry').boundingBox(),
    ])
    expect(expiry!.y).toBeGreaterThan(expiringIcon!.y + expiringIcon!.height - 2)
    expect(Math.abs(expiry!.x - expiringIcon!.x)).toBeLessThan(1)
    // The checkbox and the icon widen nothing that needs sideways scrolling on a desktop.
    expect(await desktop.locator('#files-list').evaluate((wrap) => wrap.scrollWidth - wrap.clientWidth)).toBe(0)
    await axeBothThemes(desktop, 'desktop-icons')

    await signIn(phone, email)
    await open(phone)
    expect(await phone.locator('#files-body svg.file-icon').evaluateAll((found) => found.length)).toBe(kinds.length)
    await phone.locator('#files-body tr.file').first().scrollIntoViewIfNeeded()
    await axeBothThemes(phone, 'phone-icons')
  }, 60_000)

  it('no page logged an error or a CSP violation, or asked any other host', () => {
    for (const { errors, foreignRequests } of problems) {
      expect(errors).toEqual([])
      expect(foreignRequests).toEqual([])
    }
  })
})

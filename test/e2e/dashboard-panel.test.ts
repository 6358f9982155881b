import { existsSync } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import zlib from 'node:zlib'
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core'
import { encode } from 'uqr'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'
import { chromiumAvailable, launchBrowser, SCREENSHOT_DIR, watchContext, type PageProblems } from '../helpers/browser.js'
import {
  axeBothThemes as axeLightAndDark,
  dashboardScreenshot,
  DESKTOP,
  isPhone,
  openDashboardPage,
  PHONE,
  signInOnPage,
} from '../helpers/dashboard-browser.js'

const PUBLIC_HOST = 'files.example.test'
const DOWNLOAD_HOST = 'dl.example.test'
const PASSWORD = 'correct horse battery staple'
const dashboard = (page = '') => `http://${PUBLIC_HOST}/dashboard/${page}`

const eventually = <T>(probe: () => Promise<T>, timeout = 15_000) => expect.poll(probe, { timeout, interval: 50 })

/** A real PNG of `width` x `height` in one colour, which the browser decodes. */
function png(width: number, height: number, rgb: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
    const head = Buffer.alloc(4)
    head.writeUInt32BE(data.length)
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(zlib.crc32(body))
    return Buffer.concat([head, body, crc])
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header[8] = 8 // bits per channel
  header[9] = 2 // RGB
  const line = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())])
  const pixels = zlib.deflateSync(Buffer.concat(Array.from({ length: height }, () => line)))
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', header),
    chunk('IDAT', pixels),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

/**
 * Debian's full Chromium (`apt-get install chromium`), whose PDF viewer the headless shell lacks (it
 * saves a PDF instead): where it is installed, a test opens a PDF preview in it.
 */
const FULL_CHROMIUM_PATH = process.env.FILESHARE_FULL_CHROMIUM_PATH ?? '/usr/lib/chromium/chromium'
const fullChromiumAvailable = existsSync(FULL_CHROMIUM_PATH)

/** A one-page PDF that says `text` in black on a pure red page, with a correct cross-reference table. */
function pdf(text: string): Buffer {
  const content = `1 0 0 rg 0 0 300 144 re f 0 g BT /F1 24 Tf 20 60 Td (${text}) Tj ET`
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ]
  let out = '%PDF-1.4\n'
  const offsets = objects.map((body, i) => {
    const at = out.length
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
    return at
  })
  const xref = out.length
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((at) => `${String(at).padStart(10, '0')} 00000 n \n`).join('')}`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(out, 'latin1')
}

const PHOTO = 'beach photo.png'
const REPORT = 'annual report.pdf'
const NOTES = 'notes.txt'
/** HTML under an image's name: the page offers a preview (the name says PNG), the server refuses it (the bytes do not). */
const DISGUISED = 'not really.png'

/**
 * A file's panel (issue 37, "See" and "Share") in Chromium on a desktop (1366x900) and a phone
 * (390x844, touch): a QR code for each active link (an SVG named for screen readers, the URL
 * beside it, a disclosure that keeps the focus), renaming the file (mistakes on the field with
 * aria-invalid and aria-describedby; the row takes the new name), and previews (an image shown in
 * the panel, a PDF opened in a new tab, a refusal said). axe-core on every new state in the light
 * and the dark theme. Screenshots: test-artifacts/screenshots/panel-*.png.
 */
describe.skipIf(!chromiumAvailable)("a file's panel: QR codes, rename, previews", () => {
  let t: TestApp
  let browser: Browser
  const problems: PageProblems[] = []
  let desktop: Page
  let phone: Page
  const ids: Record<string, number> = {}
  let holderEmail: string

  async function newContext(kind: 'desktop' | 'phone'): Promise<Page> {
    const context: BrowserContext = await browser.newContext(
      kind === 'desktop' ? { viewport: DESKTOP } : { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
    )
    context.setDefaultTimeout(10_000)
    problems.push(watchContext(context, [PUBLIC_HOST, DOWNLOAD_HOST]))
    return context.newPage()
  }

  const signIn = (page: Page, email: string) =>
    signInOnPage(page, { signIn: dashboard('sign-in'), files: dashboard('files') }, email, PASSWORD)
  const open = (page: Page) => openDashboardPage(page, dashboard('files'))
  const screenshot = (page: Page, name: string) => dashboardScreenshot(page, `panel-${name}`)
  /** axe-core in the light theme and the dark one, named with the screen's size. */
  const axeBothThemes = (page: Page, name: string) => axeLightAndDark(page, `${name}-${isPhone(page) ? 'phone' : 'desktop'}`, screenshot)

  /** Opens the panel under the file named `name` (the disclosure under its row). */
  async function openPanel(page: Page, name: string): Promise<Locator> {
    const toggle = page.getByRole('button', { name: `Links of ${name}` })
    if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click()
    const panel = page.locator(`#${(await toggle.getAttribute('aria-controls'))!}`)
    await eventually(() => panel.locator('.links-loading').isHidden()).toBe(true)
    return panel
  }

  /** Nothing wider than the screen: the page does not scroll sideways. */
  const noSidewaysScroll = (page: Page) =>
    page.evaluate('document.scrollingElement.scrollWidth <= document.scrollingElement.clientWidth').then(Boolean)

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}`, FILESHARE_DOWNLOAD_URL: `http://${DOWNLOAD_HOST}` })
    const server = new URL(t.url).host
    browser = await launchBrowser({ [PUBLIC_HOST]: server, [DOWNLOAD_HOST]: server })
    holderEmail = `panel-${Date.now()}@example.test`
    const { accountId, apiKey } = await t.createAccount('pro', holderEmail)
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    const files: [string, string | Buffer][] = [
      [NOTES, 'plain words'],
      [DISGUISED, '<!doctype html><title>x</title><script>document.title = "ran"</script>'],
      [REPORT, pdf('Annual report')],
      [PHOTO, png(320, 200, [30, 120, 200])],
    ]
    for (const [name, bytes] of files) {
      const { response, body } = await uploadFile(t, apiKey, bytes, name)
      expect(response.status).toBe(201)
      ids[name] = body.file_id
    }
    ;[desktop, phone] = await Promise.all([newContext('desktop'), newContext('phone')])
    await Promise.all([signIn(desktop, holderEmail), signIn(phone, holderEmail)])
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  for (const kind of ['desktop', 'phone'] as const) {
    it(`${kind}: a QR code for each active link, as an SVG named for screen readers, with the URL beside it`, async () => {
      const page = kind === 'desktop' ? desktop : phone
      await open(page)
      const panel = await openPanel(page, PHOTO)
      const item = panel.locator('li.link-item').first()
      const url = (await item.locator('.link-url').textContent())!
      const toggle = item.getByRole('button', { name: `QR code of the default link of ${PHOTO}` })
      expect(await toggle.textContent()).toBe('QR code')
      expect(await toggle.getAttribute('aria-expanded')).toBe('false')
      const code = page.locator(`#${(await toggle.getAttribute('aria-controls'))!}`)
      expect(await code.isHidden()).toBe(true)

      // By keyboard on the desktop, by touch on the phone; the focus stays on the button.
      if (kind === 'desktop') {
        await toggle.focus()
        await page.keyboard.press('Enter')
      } else {
        await toggle.tap()
      }
      await eventually(() => toggle.getAttribute('aria-expanded')).toBe('true')
      expect(await code.isVisible()).toBe(true)
      if (kind === 'desktop') expect(await toggle.evaluate((element) => element === element.ownerDocument.activeElement)).toBe(true)
      const image = code.getByRole('img', { name: `QR code of the default link of ${PHOTO}` })
      expect(await image.count()).toBe(1)
      expect(await code.locator('figcaption code').textContent()).toBe(url)
      expect(await code.locator('figcaption').textContent()).toBe(`Scan it with a phone to open this URL: ${url}`)

      // The squares drawn are uqr's encoding of the URL, with a four-module quiet zone.
      const drawn = await image.evaluate((svg) => ({
        viewBox: svg.getAttribute('viewBox'),
        squares: svg.querySelector('path')!.getAttribute('d'),
        width: svg.getBoundingClientRect().width,
      }))
      const { size, data } = encode(url, { ecc: 'M', border: 4 })
      expect(drawn.viewBox).toBe(`0 0 ${size} ${size}`)
      const expected = data.flatMap((line, y) => line.flatMap((dark, x) => (dark ? [`M${x} ${y}h1v1h-1z`] : []))).join('')
      expect(drawn.squares).toBe(expected)
      // Large enough to scan, never wider than the phone.
      expect(drawn.width).toBeGreaterThanOrEqual(150)
      expect(await noSidewaysScroll(page)).toBe(true)
      await axeBothThemes(page, 'qr-code')

      // Hidden again.
      await (kind === 'desktop' ? page.keyboard.press('Enter') : toggle.tap())
      await eventually(() => toggle.getAttribute('aria-expanded')).toBe('false')
      expect(await code.isHidden()).toBe(true)
    })
  }

  it('desktop: every active link has its QR code; a revoked one has none', async () => {
    await open(desktop)
    const panel = await openPanel(desktop, PHOTO)
    await panel.getByLabel('Label (optional)').fill('for the printer')
    await panel.getByRole('button', { name: 'Create link' }).click()
    const labelled = panel.locator('li.link-item', { hasText: 'for the printer' })
    await eventually(() => labelled.count()).toBe(1)
    const toggle = labelled.getByRole('button', { name: `QR code of the link “for the printer” of ${PHOTO}` })
    await toggle.click()
    const url = (await labelled.locator('.link-url').textContent())!
    await eventually(() => labelled.locator('figcaption code').textContent()).toBe(url)
    expect(await labelled.locator('figcaption').textContent()).toBe(`Scan it with a phone to open this URL: ${url}`)

    await labelled.getByRole('button', { name: /^Revoke/ }).click()
    await desktop.locator('#confirm-link-action').click()
    const revoked = panel.locator('li.link-item.revoked')
    await eventually(() => revoked.count()).toBe(1)
    expect(await revoked.getByRole('button', { name: /^QR code/ }).count()).toBe(0)
  })

  it('desktop: renaming refuses mistakes on the field (aria-invalid, aria-describedby, focus), then renames; the row follows', async () => {
    await open(desktop)
    const panel = await openPanel(desktop, NOTES)
    expect(await panel.getByRole('heading', { level: 3, name: `Name of ${NOTES}` }).count()).toBe(1)
    const field = panel.getByLabel('File name')
    expect(await field.inputValue()).toBe(NOTES)
    const rename = panel.getByRole('button', { name: 'Rename' })
    const error = panel.locator('.rename-error')
    const errorId = (await error.getAttribute('id'))!
    const hintId = (await panel.locator('.rename-form .hint').getAttribute('id'))!
    const marked = async () => ({
      message: await error.textContent(),
      invalid: await field.getAttribute('aria-invalid'),
      describedBy: await field.getAttribute('aria-describedby'),
      focused: await field.evaluate((element) => element === element.ownerDocument.activeElement),
    })

    const mistakes: [string, string][] = [
      ['   ', 'Type a name for the file.'],
      ['reports/2026.txt', 'A file name cannot contain / or \\.'],
      ['é'.repeat(128) + '.txt', 'The name is too long: at most 255 bytes of UTF-8, and this one has 260.'],
    ]
    for (const [typed, message] of mistakes) {
      await field.fill(typed)
      await rename.click()
      expect(await marked(), typed).toEqual({ message, invalid: 'true', describedBy: `${hintId} ${errorId}`, focused: true })
    }
    await axeBothThemes(desktop, 'rename-mistake')

    // What the server refuses is shown on the field the same way (a refusal made here, since the page checks first).
    await desktop.route('**/dashboard/api/files/*', (route) =>
      route.request().method() === 'PATCH'
        ? route.fulfill({
            status: 400,
            contentType: 'application/json',
            body: JSON.stringify({ success: false, error: { code: 'invalid_parameter', message: 'filename: refused by the server.' } }),
          })
        : route.continue(),
    )
    await field.fill('refused.txt')
    await rename.click()
    await eventually(() => error.textContent()).toBe('filename: refused by the server.')
    expect(await marked()).toEqual({
      message: 'filename: refused by the server.',
      invalid: 'true',
      describedBy: `${hintId} ${errorId}`,
      focused: true,
    })
    await desktop.unroute('**/dashboard/api/files/*')

    // A good name: the marks go, the file is renamed, the list and the panel say its new name.
    await field.fill('  meeting notes 2026.txt ')
    await rename.click()
    const status = panel.locator('.rename-status')
    await eventually(() => status.textContent()).toBe('Renamed to meeting notes 2026.txt.')
    expect(await field.getAttribute('aria-invalid')).toBeNull()
    expect(await field.getAttribute('aria-describedby')).toBe(hintId)
    expect(await field.inputValue()).toBe('meeting notes 2026.txt')
    expect(await desktop.locator('#files-body tr.file', { hasText: 'meeting notes 2026.txt' }).count()).toBe(1)
    expect(await desktop.getByRole('button', { name: 'Links of meeting notes 2026.txt' }).getAttribute('aria-expanded')).toBe('true')
    expect(await panel.getByRole('heading', { level: 3, name: 'Name of meeting notes 2026.txt' }).count()).toBe(1)
    // The links' buttons name the file by its new name.
    expect(await panel.getByRole('button', { name: 'Copy URL of the default link of meeting notes 2026.txt' }).count()).toBe(1)
    // The focus stayed in the form while the list redrew the row.
    expect(await panel.evaluate((element) => element.contains(element.ownerDocument.activeElement))).toBe(true)
    const details = await desktop.evaluate(
      async (id) => (await (await fetch(`api/files/${id}`)).json()) as { file: { filename: string } },
      ids[NOTES],
    )
    expect(details.file.filename).toBe('meeting notes 2026.txt')
    await axeBothThemes(desktop, 'renamed')
  })

  it('phone: renaming from the panel', async () => {
    await open(phone)
    const panel = await openPanel(phone, PHOTO)
    const field = panel.getByLabel('File name')
    await field.fill('')
    await panel.getByRole('button', { name: 'Rename' }).tap()
    expect(await field.getAttribute('aria-invalid')).toBe('true')
    expect(await noSidewaysScroll(phone)).toBe(true)
    await axeBothThemes(phone, 'rename-mistake')
    await field.fill('beach.png')
    await panel.getByRole('button', { name: 'Rename' }).tap()
    await eventually(() => panel.locator('.rename-status').textContent()).toBe('Renamed to beach.png.')
    expect(await phone.getByRole('button', { name: 'Links of beach.png' }).count()).toBe(1)
    // Back, for the tests that follow.
    await field.fill(PHOTO)
    await panel.getByRole('button', { name: 'Rename' }).tap()
    await eventually(() => panel.locator('.rename-status').textContent()).toBe(`Renamed to ${PHOTO}.`)
  })

  for (const kind of ['desktop', 'phone'] as const) {
    it(`${kind}: an image's preview is shown in the panel when asked for, as the server typed it from its bytes`, async () => {
      const page = kind === 'desktop' ? desktop : phone
      await open(page)
      const panel = await openPanel(page, PHOTO)
      expect(await panel.getByRole('heading', { level: 3, name: `Preview of ${PHOTO}` }).count()).toBe(1)
      const show = panel.getByRole('button', { name: 'Show preview' })
      expect(await show.getAttribute('aria-expanded')).toBe('false')
      // Nothing is fetched before the holder asks.
      expect(await panel.locator('.preview-box img').count()).toBe(0)
      await (kind === 'desktop' ? show.click() : show.tap())
      const image = panel.getByRole('img', { name: `Preview of ${PHOTO}` })
      await eventually(() => image.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth)).toBe(320)
      const toggle = panel.locator('.show-preview')
      expect(await toggle.textContent()).toBe('Hide preview')
      expect(await toggle.getAttribute('aria-expanded')).toBe('true')
      const box = await image.boundingBox()
      expect(box!.x + box!.width).toBeLessThanOrEqual(page.viewportSize()!.width)
      expect(await noSidewaysScroll(page)).toBe(true)
      await axeBothThemes(page, 'preview-image')
      await (kind === 'desktop' ? toggle.click() : toggle.tap())
      expect(await panel.locator('.preview-box img').count()).toBe(0)
      expect(await toggle.getAttribute('aria-expanded')).toBe('false')
    })
  }

  it('desktop: a PDF opens in a new tab from the preview route, sandboxed; the link says so', async () => {
    await open(desktop)
    const panel = await openPanel(desktop, REPORT)
    expect(await panel.locator('.preview-hint').textContent()).toBe(
      'The PDF opens in a new tab, in a sandbox: it cannot reach the dashboard or your session.',
    )
    await panel.getByRole('button', { name: 'Show preview' }).click()
    const link = panel.getByRole('link', { name: `Open ${REPORT} in a new tab` })
    await eventually(() => link.count()).toBe(1)
    expect(await link.evaluate((element) => [element.getAttribute('target'), element.getAttribute('rel')])).toEqual([
      '_blank',
      'noopener noreferrer',
    ])
    const href = (await link.getAttribute('href'))!
    expect(href).toBe(`api/files/${ids[REPORT]}/preview`)
    // What the tab gets (the headless shell has no PDF viewer: it would save the file instead).
    const served = await desktop.evaluate(async (address) => {
      const answer = await fetch(address)
      return {
        type: answer.headers.get('content-type'),
        policy: answer.headers.get('content-security-policy'),
        disposition: answer.headers.get('content-disposition'),
        start: (await answer.text()).slice(0, 8),
      }
    }, href)
    expect(served).toEqual({ type: 'application/pdf', policy: 'sandbox', disposition: 'inline', start: '%PDF-1.4' })
    await axeBothThemes(desktop, 'preview-pdf')
  })

  it('desktop: a file whose bytes are not what its name says gets no preview, and the page says why; other types are not offered one', async () => {
    await open(desktop)
    const panel = await openPanel(desktop, DISGUISED)
    await panel.getByRole('button', { name: 'Show preview' }).click()
    const status = panel.locator('.preview-status')
    await eventually(() => status.textContent()).toBe(`No preview of ${DISGUISED}: it is not a PNG, JPEG, GIF, WebP or PDF file.`)
    expect(await panel.locator('.preview-box').isHidden()).toBe(true)
    expect(await panel.locator('.show-preview').getAttribute('aria-expanded')).toBe('false')
    await axeBothThemes(desktop, 'preview-refused')

    const notes = await openPanel(desktop, 'meeting notes 2026.txt')
    expect(await notes.locator('.preview-section').isHidden()).toBe(true)
    expect(await notes.getByRole('button', { name: 'Show preview' }).count()).toBe(0)
  })

  it.skipIf(!fullChromiumAvailable)(
    'full Chromium: the PDF renders in its new tab, under the sandbox, in the PDF viewer',
    async () => {
      const server = new URL(t.url).host
      const full = await chromium.launch({
        executablePath: FULL_CHROMIUM_PATH,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-background-networking',
          '--no-first-run',
          `--host-resolver-rules=MAP ${PUBLIC_HOST} ${server}`,
        ],
      })
      try {
        const page = await (await full.newContext({ viewport: DESKTOP })).newPage()
        await signIn(page, holderEmail)
        const panel = await openPanel(page, REPORT)
        await panel.getByRole('button', { name: 'Show preview' }).click()
        const [tab] = await Promise.all([
          page.context().waitForEvent('page'),
          panel.getByRole('link', { name: `Open ${REPORT} in a new tab` }).click(),
        ])
        await tab.waitForLoadState('load')
        /** How many pixels of the tab are the PDF page's pure red: none where the viewer refused (a grey error page). */
        const redPixels = async () => {
          const shot = (await tab.screenshot()).toString('base64')
          // In the page's own Chromium: the PNG decoded with createImageBitmap (a string: this file has no DOM types).
          return page.evaluate(`(async (base64) => {
            const bitmap = await createImageBitmap(new Blob([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], { type: 'image/png' }))
            const canvas = new OffscreenCanvas(bitmap.width, bitmap.height)
            const context = canvas.getContext('2d')
            context.drawImage(bitmap, 0, 0)
            const { data } = context.getImageData(0, 0, bitmap.width, bitmap.height)
            let red = 0
            for (let i = 0; i < data.length; i += 4) if (data[i] > 240 && data[i + 1] < 16 && data[i + 2] < 16) red++
            return red
          })(${JSON.stringify(shot)})`) as Promise<number>
        }
        // The page is 300x144 points, drawn at least at that size in pixels.
        await eventually(redPixels, 20_000).toBeGreaterThan(20_000)
        expect(tab.url()).toBe(dashboard(`api/files/${ids[REPORT]}/preview`))
        await fs.mkdir(SCREENSHOT_DIR, { recursive: true })
        await tab.screenshot({ path: path.join(SCREENSHOT_DIR, 'panel-pdf-tab-full-chromium.png') })
      } finally {
        await full.close()
      }
    },
    60_000,
  )

  it('no page raised an error, broke its CSP or asked any host but the service', () => {
    for (const found of problems) expect(found).toEqual({ errors: [], foreignRequests: [] })
  })
})

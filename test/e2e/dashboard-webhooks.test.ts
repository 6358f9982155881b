import fs from 'node:fs/promises'
import path from 'node:path'
import type { Browser, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { startWebhookReceiver, verifiesStandardWebhook } from '../helpers/webhook-receiver.js'
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
/** What the page shows for a time to the minute: `YYYY-MM-DD HH:MM UTC`. */
const CREATED = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/
/** A delivery's times, to the second: `YYYY-MM-DD HH:MM:SS` (UTC). */
const SECOND = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/
const SECRET = /^whsec_[A-Za-z0-9+/]+=*$/
const MESSAGE_ID = /^msg_\S+$/
/** The schedule's first retry: 5 s, +-10%. */
const FIRST_RETRY_MS = 5_000

const eventually = <T>(probe: () => Promise<T>, timeout = 15_000) => expect.poll(probe, { timeout, interval: 50 })

/** The page's globals, for functions that run in it (this project's TypeScript has no DOM types). */
interface InPage {
  document: {
    documentElement: { scrollWidth: number; clientWidth: number }
    activeElement: { getAttribute(name: string): string | null; textContent: string | null; tagName: string } | null
    getElementById(id: string): { textContent: string | null } | null
    body: { innerHTML: string }
  }
}

/** A receiver on 127.0.0.1: records every message, answers `answer` (200 unless a test changes it). */
async function startReceiver() {
  const state = { answer: 200 }
  const { base, received, close } = await startWebhookReceiver(() => state.answer)
  return {
    base,
    received,
    state,
    /** The messages of one type, in the order they came. */
    ofType: (type: string) => received.filter((message) => (JSON.parse(message.body) as { type: string }).type === type),
    close,
  }
}

/** A `YYYY-MM-DD HH:MM:SS` UTC time as milliseconds. */
const utcMs = (text: string) => Date.parse(`${text.replace(' ', 'T')}Z`)

/**
 * Issue 33 in the dashboard, in Chromium on a desktop (1366x900) and a phone (390x844, touch): the
 * Webhooks page against a real server that delivers to a node:http receiver on 127.0.0.1
 * (FILESHARE_WEBHOOKS_ALLOW_PRIVATE and _ALLOW_HTTP, the dispatcher polling every 20 ms). Adding an
 * endpoint through the form (event choices, All events), its secret shown once with a copy button,
 * and that secret verifying what the receiver gets; Send test and its delivery; a receiver that
 * answers 500 (pending, its status, the next attempt), the schedule's next try (the server's clock
 * moved), and Retry; disable and enable; rotate (both secrets sign for a day); a 410 that turns the
 * endpoint off; deliveries paged; delete; the form's field errors (the page's and the server's) and
 * the 20-endpoint limit. axe-core in both viewports. Screenshots: test-artifacts/screenshots/webhooks-*.png.
 */
describe.skipIf(!chromiumAvailable)('the Webhooks page of the dashboard', () => {
  let t: TestApp
  let browser: Browser
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let accountId: number
  let apiKey: string
  let email: string
  let desktop: Page
  let phone: Page
  const problems: PageProblems[] = []
  /** The first endpoint, made through the form, and its secret as the page showed it. */
  let firstUrl: string
  let firstSecret: string

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
    await page.goto(dashboard('webhooks'))
    await page.waitForSelector('body[data-ready="true"]')
  }

  /** Desktop: the whole page. Phone: what the screen shows (a full-page capture drops the touch emulation). */
  async function shot(page: Page, name: string) {
    if (page.viewportSize()!.width > PHONE.width) return fullPageScreenshot(page, `webhooks-${name}`)
    await fs.mkdir(SCREENSHOT_DIR, { recursive: true })
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `webhooks-${name}.png`) })
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

  /** The card of the endpoint with this URL. */
  const card = (page: Page, url: string) =>
    page.locator('li.webhook').filter({ has: page.getByRole('heading', { name: url, exact: true }) })

  /** A card as the page shows it: its state, reason, description, facts and buttons. */
  const cardText = (item: Locator) =>
    item.evaluate((element) => {
      const text = (selector: string) => {
        const found = element.querySelector(selector) as unknown as { textContent: string; hidden: boolean } | null
        return found && !found.hidden ? found.textContent : null
      }
      return {
        state: text('.webhook-state'),
        reason: text('.webhook-reason'),
        description: text('.webhook-description'),
        events: text('.webhook-events'),
        created: text('.webhook-created'),
        buttons: [...element.querySelectorAll('.webhook-actions button')]
          .filter((button) => !(button as unknown as { hidden: boolean }).hidden)
          .map((button) => button.textContent),
      }
    })

  /** The deliveries table of a card, row by row, cell by cell by column. */
  const deliveryRows = (item: Locator) =>
    item
      .locator('.deliveries-table tbody tr')
      .evaluateAll((rows) =>
        rows.map((row) =>
          Object.fromEntries(
            [...row.querySelectorAll('td')].map((cell) => [
              (cell as unknown as { dataset: { label: string } }).dataset.label,
              cell.textContent!,
            ]),
          ),
        ),
      )

  /** The API, with the account's key, from this process. */
  const withKey = (pathName: string, init: RequestInit = {}) =>
    fetch(`${t.api}${pathName}`, { ...init, headers: { authorization: `Bearer ${apiKey}`, ...init.headers } })

  async function uploadWithKey(name: string) {
    const form = new FormData()
    form.append('file', new Blob(['some bytes']), name)
    const answer = await withKey('/files/upload', { method: 'POST', body: form })
    expect(answer.status).toBe(201)
  }

  async function deliveriesOf(webhookId: number) {
    const answer = await withKey(`/webhooks/${webhookId}/deliveries?limit=100`)
    return ((await answer.json()) as { deliveries: { delivery_id: number; state: string; attempts: number }[] }).deliveries
  }

  const webhookIdOf = async (item: Locator) => Number(await item.getAttribute('data-webhook-id'))

  /** Fills the add form and submits it; the POST's body goes into `sent` when given. */
  async function addEndpoint(page: Page, url: string, events: string[] | 'all', words = '') {
    await page.getByLabel('Endpoint URL').fill(url)
    if (events === 'all') await page.getByLabel('All events').check()
    else for (const type of events) await page.getByLabel(type, { exact: false }).check()
    await page.getByLabel('Description').fill(words)
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await eventually(() => page.locator('#status').textContent()).toBe(
      `Added the endpoint ${url}. Copy its secret now: it is shown only once.`,
    )
    return page.getByRole('textbox', { name: 'Signing secret of the new endpoint' }).inputValue()
  }

  beforeAll(async () => {
    t = await startTestApp(
      { FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}`, FILESHARE_WEBHOOKS_ALLOW_PRIVATE: 'true', FILESHARE_WEBHOOKS_ALLOW_HTTP: 'true' },
      { webhookDispatch: { pollMs: 20 } },
    )
    receiver = await startReceiver()
    browser = await launchBrowser({ [PUBLIC_HOST]: new URL(t.url).host })
    email = `webhooks-${Date.now()}@example.test`
    ;({ accountId, apiKey } = await t.createAccount('pro', email))
    await t.app.services.accounts.setLimits(accountId, { requests_per_minute: 100_000, requests_per_day: 100_000 })
    await t.app.services.accountHolders.setPassword(accountId, PASSWORD)
    ;[desktop, phone] = await Promise.all([newPage('desktop'), newPage('phone')])
    firstUrl = `${receiver.base}/hooks/first`
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
    await receiver?.close()
  })

  it('adds an endpoint with chosen events; its secret is shown once, copies, and signs what the receiver gets', async () => {
    await desktop.getByRole('link', { name: 'Webhooks' }).click()
    await desktop.waitForURL(dashboard('webhooks'))
    await desktop.waitForSelector('body[data-ready="true"]')
    expect(await desktop.locator('nav a[aria-current="page"]').textContent()).toBe('Webhooks')
    expect(await desktop.locator('#no-webhooks').isVisible()).toBe(true)
    expect(await desktop.getByRole('textbox', { name: 'Signing secret of the new endpoint' }).isVisible()).toBe(false)

    // "All events" ticks every type; a type unticked unticks it; every type ticked by hand ticks it again.
    const boxes = desktop.locator('input[name=event]')
    expect(await boxes.count()).toBe(9)
    const allTicked = () => boxes.evaluateAll((all) => all.every((box) => (box as unknown as { checked: boolean }).checked))
    await desktop.getByLabel('All events').check()
    expect(await allTicked()).toBe(true)
    await desktop.getByLabel('link.revoked').uncheck()
    expect(await desktop.getByLabel('All events').isChecked()).toBe(false)
    await desktop.getByLabel('link.revoked').check()
    expect(await desktop.getByLabel('All events').isChecked()).toBe(true)
    await desktop.getByLabel('All events').uncheck()
    expect(await boxes.evaluateAll((all) => all.some((box) => (box as unknown as { checked: boolean }).checked))).toBe(false)

    const sent: unknown[] = []
    const tokens: string[] = []
    desktop.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/dashboard/api/webhooks')) {
        sent.push(request.postDataJSON())
        tokens.push(request.headers()['x-csrf-token'] ?? '')
      }
    })
    firstSecret = await addEndpoint(desktop, firstUrl, ['file.uploaded', 'link.created'], 'CI receiver')
    expect(firstSecret).toMatch(SECRET)
    expect(sent).toEqual([{ url: firstUrl, events: ['file.uploaded', 'link.created'], description: 'CI receiver' }])
    // The change carries the session's CSRF token.
    expect(tokens).toEqual([expect.stringMatching(/^\S{16,}$/)])
    // The secret's box has focus and says it is shown once; the form is empty again.
    const box = desktop.getByRole('region', { name: 'Signing secret of the new endpoint' })
    expect(
      await box.evaluate(
        (element) => element === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement,
      ),
    ).toBe(true)
    expect(await box.textContent()).toContain('Shown once: copy it now')
    expect(await box.textContent()).toContain(firstUrl)
    expect(await desktop.getByLabel('Endpoint URL').inputValue()).toBe('')
    expect(await desktop.getByLabel('file.uploaded').isChecked()).toBe(false)

    // Copy (plain http: the page falls back to a selection); the message is next to the box.
    await desktop.evaluate(`document.addEventListener('copy', () => { window.copied = String(getSelection()) }, { once: true })`)
    await box.getByRole('button', { name: 'Copy secret' }).click()
    expect(await desktop.evaluate('window.copied')).toBe(firstSecret)
    await eventually(() => box.locator('.action-note[role=status]').textContent()).toBe('Copied the secret.')
    expect(await desktop.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.textContent)).toBe('Copied')

    const item = card(desktop, firstUrl)
    expect(await cardText(item)).toEqual({
      state: 'Active',
      reason: null,
      description: 'CI receiver',
      events: 'file.uploaded, link.created',
      created: expect.stringMatching(CREATED),
      buttons: ['Deliveries', 'Send test', 'Disable', 'Rotate secret', 'Delete'],
    })
    expect(await desktop.locator('#endpoints-summary').textContent()).toBe('1 of 20 endpoints an account may have.')
    await fitsSideways(desktop, 'webhooks with a new secret, desktop')
    await shot(desktop, 'desktop-added')
    await axeClean(desktop, 'webhooks with a new secret, desktop')

    // The secret is the one that signs: an upload reaches the receiver, and it verifies.
    await uploadWithKey('hooked.txt')
    await eventually(async () => receiver.ofType('file.uploaded').length).toBe(1)
    const [message] = receiver.ofType('file.uploaded')
    expect(verifiesStandardWebhook(firstSecret, message!)).toBe(true)
    expect(JSON.parse(message!.body)).toMatchObject({ type: 'file.uploaded', data: { filename: 'hooked.txt' } })

    // Shown once: the list has no secret, and after a reload the page holds it nowhere.
    const listed = (await desktop.evaluate(async () => (await fetch('api/webhooks')).json())) as { webhooks: Record<string, unknown>[] }
    expect(listed.webhooks).toHaveLength(1)
    expect(listed.webhooks[0]!.secret).toBeUndefined()
    await open(desktop)
    expect(await box.isVisible()).toBe(false)
    expect(await desktop.evaluate(() => (globalThis as unknown as InPage).document.body.innerHTML)).not.toContain(firstSecret)
  })

  it('sends a test: the receiver gets it, and its delivery shows succeeded with the answer', async () => {
    await open(desktop)
    const item = card(desktop, firstUrl)
    const before = receiver.received.length
    await item.getByRole('button', { name: `Send test to ${firstUrl}` }).click()
    await eventually(() => item.locator('.webhook-status').textContent()).toBe('The test message was delivered: the endpoint answered 200.')
    expect(receiver.received.length).toBe(before + 1)
    const [test] = receiver.ofType('webhook.test')
    const webhookId = await webhookIdOf(item)
    expect(JSON.parse(test!.body)).toMatchObject({ type: 'webhook.test', data: { webhook_id: webhookId } })
    expect(verifiesStandardWebhook(firstSecret, test!)).toBe(true)

    // The deliveries opened by themselves: the test first (newest), then the upload's.
    expect(await item.getByRole('button', { name: `Deliveries of ${firstUrl}` }).getAttribute('aria-expanded')).toBe('true')
    const rows = await deliveryRows(item)
    expect(rows).toEqual([
      {
        'Created (UTC)': expect.stringMatching(SECOND),
        Event: `webhook.test ${String(test!.headers['webhook-id'])}`,
        State: 'Succeeded',
        Attempts: '1',
        'Last answer': 'HTTP 200',
        'Next attempt (UTC)': '—',
        '': '',
      },
      {
        'Created (UTC)': expect.stringMatching(SECOND),
        Event: expect.stringMatching(/^file\.uploaded msg_/),
        State: 'Succeeded',
        Attempts: '1',
        'Last answer': 'HTTP 200',
        'Next attempt (UTC)': '—',
        '': '',
      },
    ])
    expect(await item.locator('.deliveries-table').getByRole('button').count()).toBe(0)
    await axeClean(desktop, 'deliveries open, desktop')
  })

  it('a receiver answering 500: the delivery is pending with its status and next attempt; the schedule tries again; Retry sends it now', async () => {
    await open(desktop)
    const item = card(desktop, firstUrl)
    receiver.state.answer = 500
    const sentAt = Date.now()
    await item.getByRole('button', { name: `Send test to ${firstUrl}` }).click()
    await eventually(() => item.locator('.webhook-status').textContent()).toMatch(
      /^The test message was not accepted: HTTP 500\. The next attempt is at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC; Retry sends it now\.$/,
    )
    const [pending] = await deliveryRows(item)
    expect(pending).toMatchObject({
      State: 'Pending',
      Attempts: '1',
      'Last answer': 'HTTP 500',
      'Next attempt (UTC)': expect.stringMatching(SECOND),
    })
    const messageId = pending!.Event!.split(' ')[1]!
    expect(messageId).toMatch(MESSAGE_ID)
    // 5 s (+-10%) after the attempt, to the second.
    const next = utcMs(pending!['Next attempt (UTC)']!)
    expect(next).toBeGreaterThanOrEqual(Math.floor(sentAt / 1000) * 1000 + FIRST_RETRY_MS * 0.9 - 1000)
    expect(next).toBeLessThanOrEqual(Date.now() + FIRST_RETRY_MS * 1.1)
    expect(await cardText(item)).toMatchObject({ state: 'Active' })

    // The schedule's second attempt (the server's clock moves on instead of the test sleeping), 500 again.
    t.advanceClock(6_000)
    await eventually(
      async () => receiver.ofType('webhook.test').filter((message) => message.headers['webhook-id'] === messageId).length,
    ).toBe(2)
    await item.getByRole('button', { name: 'Refresh' }).click()
    await eventually(async () => (await deliveryRows(item))[0]?.Attempts).toBe('2')
    const second = (await deliveryRows(item))[0]!
    expect(second).toMatchObject({ State: 'Pending', 'Last answer': 'HTTP 500' })
    // Next: 5 min (+-10%) on.
    const later = utcMs(second['Next attempt (UTC)']!) - (Date.now() + 6_000)
    expect(later).toBeGreaterThan(4 * 60_000)
    expect(later).toBeLessThan(6 * 60_000)
    await shot(desktop, 'desktop-pending')
    await axeClean(desktop, 'a pending delivery, desktop')

    // The receiver is fixed; Retry sends the same message now, and it succeeds at the third attempt.
    receiver.state.answer = 200
    const retry = item.getByRole('button', { name: `Retry delivery of webhook.test ${messageId}` })
    await retry.click()
    await eventually(() => item.locator('.webhook-status').textContent()).toBe(
      `The webhook.test message ${messageId} was delivered: the endpoint answered 200.`,
    )
    const sameMessage = receiver.ofType('webhook.test').filter((message) => message.headers['webhook-id'] === messageId)
    expect(sameMessage).toHaveLength(3)
    expect((await deliveryRows(item))[0]).toMatchObject({
      State: 'Succeeded',
      Attempts: '3',
      'Last answer': 'HTTP 200',
      'Next attempt (UTC)': '—',
    })
    // Its Retry button went with its success: focus is on the deliveries' heading.
    expect(await desktop.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.textContent)).toBe('Deliveries')
  })

  it('disables and enables an endpoint: nothing is sent while it is off, and the card says why', async () => {
    await open(desktop)
    const item = card(desktop, firstUrl)
    const webhookId = await webhookIdOf(item)
    const patches: unknown[] = []
    desktop.on('request', (request) => {
      if (request.method() === 'PATCH' && request.url().endsWith(`/dashboard/api/webhooks/${webhookId}`)) {
        patches.push({ ...(request.postDataJSON() as object), csrf: Boolean(request.headers()['x-csrf-token']) })
      }
    })
    const toggle = item.getByRole('button', { name: `Disable ${firstUrl}` })
    await toggle.click()
    await eventually(async () => (await cardText(item)).state).toBe('Disabled')
    expect(await cardText(item)).toMatchObject({
      reason: 'Turned off by you. It gets no messages, and events that happen meanwhile are not sent to it later.',
      buttons: ['Deliveries', 'Enable', 'Rotate secret', 'Delete'],
    })
    expect(await item.locator('.webhook-status').textContent()).toBe(
      'Disabled: it gets no messages until you enable it; events meanwhile are not sent to it later.',
    )
    // Focus stays on the button, which now enables.
    expect(await desktop.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.getAttribute('aria-label'))).toBe(
      `Enable ${firstUrl}`,
    )
    const deliveries = (await deliveriesOf(webhookId)).length
    await uploadWithKey('while-off.txt')
    expect((await deliveriesOf(webhookId)).length).toBe(deliveries)
    await shot(desktop, 'desktop-disabled')
    await axeClean(desktop, 'a disabled endpoint, desktop')

    await item.getByRole('button', { name: `Enable ${firstUrl}` }).click()
    await eventually(async () => (await cardText(item)).state).toBe('Active')
    expect(await cardText(item)).toMatchObject({ reason: null, buttons: ['Deliveries', 'Send test', 'Disable', 'Rotate secret', 'Delete'] })
    expect(patches).toEqual([
      { enabled: false, csrf: true },
      { enabled: true, csrf: true },
    ])
    await uploadWithKey('while-on.txt')
    await eventually(async () =>
      receiver.ofType('file.uploaded').map((message) => (JSON.parse(message.body) as { data: { filename: string } }).data.filename),
    ).toEqual(['hooked.txt', 'while-on.txt'])
  })

  it('rotates the secret after a confirmation: the new one is shown once, and both sign for 24 hours', async () => {
    await open(desktop)
    const item = card(desktop, firstUrl)
    const rotate = item.getByRole('button', { name: `Rotate secret of ${firstUrl}` })
    // Escape cancels: nothing is asked of the server.
    let rotations = 0
    desktop.on('request', (request) => {
      if (request.url().endsWith('/rotate-secret')) rotations++
    })
    await rotate.click()
    const dialog = desktop.getByRole('dialog', { name: 'Rotate the signing secret?' })
    expect(await dialog.textContent()).toContain(firstUrl)
    expect(await dialog.textContent()).toContain('The old one keeps signing too for 24 hours')
    await desktop.keyboard.press('Escape')
    expect(await dialog.isVisible()).toBe(false)
    expect(rotations).toBe(0)

    await rotate.click()
    await dialog.getByRole('button', { name: 'Rotate secret' }).click()
    const box = item.getByRole('region', { name: `New signing secret of ${firstUrl}` })
    await eventually(() => box.isVisible()).toBe(true)
    const secret = await box.getByRole('textbox').inputValue()
    expect(secret).toMatch(SECRET)
    expect(secret).not.toBe(firstSecret)
    expect(await box.textContent()).toContain('Shown once: copy it now')
    expect(await box.textContent()).toContain('The old secret keeps signing too for 24 hours')
    expect(await item.locator('.webhook-status').textContent()).toBe(
      'Rotated the secret. Copy the new one now: it is not shown again. The old one keeps signing for 24 hours.',
    )
    expect(rotations).toBe(1)
    await desktop.evaluate(`document.addEventListener('copy', () => { window.copied = String(getSelection()) }, { once: true })`)
    await box.getByRole('button', { name: 'Copy secret' }).click()
    expect(await desktop.evaluate('window.copied')).toBe(secret)
    await axeClean(desktop, 'a rotated secret, desktop')

    // A test now carries two signatures: the new secret and the old one both verify it.
    const before = receiver.ofType('webhook.test').length
    await item.getByRole('button', { name: `Send test to ${firstUrl}` }).click()
    await eventually(() => item.locator('.webhook-status').textContent()).toBe('The test message was delivered: the endpoint answered 200.')
    const message = receiver.ofType('webhook.test')[before]!
    expect(String(message.headers['webhook-signature']).split(' ')).toHaveLength(2)
    expect(verifiesStandardWebhook(secret, message)).toBe(true)
    expect(verifiesStandardWebhook(firstSecret, message)).toBe(true)
  })

  it('a 410 answer turns the endpoint off, and the card says so in words', async () => {
    const goneUrl = `${receiver.base}/hooks/gone`
    await open(desktop)
    await addEndpoint(desktop, goneUrl, 'all')
    const item = card(desktop, goneUrl)
    expect(await cardText(item)).toMatchObject({ events: 'All events', description: null })
    receiver.state.answer = 410
    try {
      await item.getByRole('button', { name: `Send test to ${goneUrl}` }).click()
      await eventually(() => item.locator('.webhook-status').textContent()).toBe(
        'The test message was refused with HTTP 410 Gone, so the server turned the endpoint off. Enable it once it accepts messages again.',
      )
    } finally {
      receiver.state.answer = 200
    }
    expect(await cardText(item)).toMatchObject({
      state: 'Disabled',
      reason: 'Turned off by the server: the endpoint answered 410 Gone. Enable it once it accepts messages again.',
      buttons: ['Deliveries', 'Enable', 'Rotate secret', 'Delete'],
    })
    // Send test went away with it: focus moved to Enable.
    expect(await desktop.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.getAttribute('aria-label'))).toBe(
      `Enable ${goneUrl}`,
    )
    expect((await deliveryRows(item))[0]).toMatchObject({ State: 'Failed', Attempts: '1', 'Last answer': 'HTTP 410' })
    await open(desktop)
    expect((await cardText(card(desktop, goneUrl))).reason).toBe(
      'Turned off by the server: the endpoint answered 410 Gone. Enable it once it accepts messages again.',
    )
    // Newest first.
    expect(await desktop.locator('li.webhook h3').allTextContents()).toEqual([goneUrl, firstUrl])
  })

  it('pages through deliveries, 10 at a time, newest first, with Older and Newer', async () => {
    await open(desktop)
    const item = card(desktop, firstUrl)
    const webhookId = await webhookIdOf(item)
    for (let index = 0; index < 8; index++) await t.app.services.webhooks.test(accountId, webhookId)
    const all = await deliveriesOf(webhookId)
    expect(all.length).toBeGreaterThan(10)
    await item.getByRole('button', { name: `Deliveries of ${firstUrl}` }).click()
    await eventually(async () => (await deliveryRows(item)).length).toBe(10)
    const ids = () =>
      item
        .locator('.deliveries-table tbody tr')
        .evaluateAll((rows) => rows.map((row) => Number((row as unknown as { dataset: { deliveryId: string } }).dataset.deliveryId)))
    expect(await ids()).toEqual(all.slice(0, 10).map((delivery) => delivery.delivery_id))
    const pager = item.getByRole('group', { name: `Pages of deliveries to ${firstUrl}` })
    expect(await pager.locator('.page-number').textContent()).toBe('Page 1')
    expect(await pager.getByRole('button', { name: 'Newer deliveries' }).isDisabled()).toBe(true)
    await pager.getByRole('button', { name: 'Older deliveries' }).click()
    await eventually(() => pager.locator('.page-number').textContent()).toBe('Page 2')
    expect(await ids()).toEqual(all.slice(10, 20).map((delivery) => delivery.delivery_id))
    expect(await desktop.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.textContent)).toBe('Deliveries')
    await pager.getByRole('button', { name: 'Newer deliveries' }).click()
    await eventually(() => pager.locator('.page-number').textContent()).toBe('Page 1')
    expect(await ids()).toEqual(all.slice(0, 10).map((delivery) => delivery.delivery_id))
    // Closing the list hides it.
    await item.getByRole('button', { name: `Deliveries of ${firstUrl}` }).click()
    expect(await item.locator('.deliveries').isVisible()).toBe(false)
  })

  it("marks a missing or malformed URL and no events at their fields before asking the server, and the server's refusals too", async () => {
    await open(desktop)
    let posts = 0
    const count = (request: { method(): string; url(): string }) => {
      if (request.method() === 'POST' && request.url().endsWith('/dashboard/api/webhooks')) posts++
    }
    desktop.on('request', count)
    const url = desktop.getByLabel('Endpoint URL')
    const all = desktop.getByLabel('All events')
    const submit = desktop.getByRole('button', { name: 'Add endpoint' })
    const focusedId = () => desktop.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.getAttribute('id'))

    // Nothing filled in: both fields marked, focus on the first.
    await submit.click()
    expect(await url.getAttribute('aria-invalid')).toBe('true')
    expect(await description(url)).toContain('Give the URL that receives the messages, such as https://example.com/webhooks.')
    expect(await all.getAttribute('aria-invalid')).toBe('true')
    expect(await desktop.getByLabel('file.uploaded').getAttribute('aria-invalid')).toBe('true')
    expect(await description(all)).toContain('Tick at least one event type, or All events.')
    expect(await description(desktop.locator('#webhook-events'))).toContain('Tick at least one event type, or All events.')
    expect(await focusedId()).toBe('webhook-url')
    await shot(desktop, 'desktop-field-errors')
    await axeClean(desktop, 'field errors, desktop')

    // Not a URL; then a scheme that is never allowed; then credentials in it.
    await desktop.getByLabel('link.created').check()
    expect(await all.getAttribute('aria-invalid')).toBeNull()
    for (const [typed, message] of [
      ['example.com/hooks', 'This is not a whole URL: give one such as https://example.com/webhooks.'],
      ['ftp://example.com/hooks', 'The URL must start with https:// (or http:// where the operator allows it).'],
      ['https://user:secret@example.com/hooks', 'Take the user name and password out of the URL: the signature proves who sends.'],
    ]) {
      await url.fill(typed!)
      await submit.click()
      await eventually(() => description(url)).toContain(message)
      expect(await url.getAttribute('aria-invalid')).toBe('true')
      expect(await all.getAttribute('aria-invalid')).toBeNull()
      expect(await focusedId()).toBe('webhook-url')
    }
    // A good URL and no events: only the events are marked, and focus goes to All events.
    await url.fill(`${receiver.base}/hooks/later`)
    await desktop.getByLabel('link.created').uncheck()
    await submit.click()
    expect(await url.getAttribute('aria-invalid')).toBeNull()
    expect(await description(url)).not.toContain('URL')
    expect(await all.getAttribute('aria-invalid')).toBe('true')
    expect(await focusedId()).toBe('all-events')
    expect(posts).toBe(0)

    // What only the server judges (a tab in the description) comes back at its field, in its words.
    await desktop.getByLabel('link.created').check()
    const words = desktop.getByLabel('Description')
    await words.fill('tab\there')
    await submit.click()
    await eventually(() => description(words)).toContain('description must be one line of text, without control characters.')
    expect(await words.getAttribute('aria-invalid')).toBe('true')
    expect(await focusedId()).toBe('webhook-description')
    expect(posts).toBe(1)
    expect(await desktop.locator('#form-error').textContent()).toBe('')
    desktop.off('request', count)
  })

  it("shows server data as text, stops at 20 endpoints with the server's words, and deletes after a confirmation", async () => {
    const markup = '<img src=x onerror=alert(1)>'
    await open(desktop)
    await addEndpoint(desktop, `${receiver.base}/hooks/markup`, ['file.deleted'], markup)
    const marked = card(desktop, `${receiver.base}/hooks/markup`)
    expect((await cardText(marked)).description).toBe(markup)
    expect(await desktop.locator('li.webhook img').count()).toBe(0)

    // 17 more through the API: 20 in all, and the form's next is refused with the server's message.
    for (let index = 0; index < 17; index++) {
      const answer = await withKey('/webhooks', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${receiver.base}/hooks/bulk-${index}`, events: ['upload.expired'] }),
      })
      expect(answer.status).toBe(201)
    }
    await open(desktop)
    expect(await desktop.locator('li.webhook').count()).toBe(20)
    expect(await desktop.locator('#endpoints-summary').textContent()).toBe(
      '20 of 20 endpoints an account may have: delete one to add another.',
    )
    await desktop.getByLabel('Endpoint URL').fill(`${receiver.base}/hooks/one-too-many`)
    await desktop.getByLabel('All events').check()
    await desktop.getByRole('button', { name: 'Add endpoint' }).click()
    await eventually(() => desktop.locator('#form-error').textContent()).toBe(
      'Could not add the endpoint: An account may have at most 20 webhook endpoints; delete one first.',
    )

    // Delete: Cancel keeps it; Delete removes it, focus goes to the Delete button that took its place.
    const doomedUrl = `${receiver.base}/hooks/markup`
    const doomed = card(desktop, doomedUrl)
    const doomedId = await webhookIdOf(doomed)
    // Newest first: the bulk ones, this one, the one that answered 410, the first.
    const nextUrl = `${receiver.base}/hooks/gone`
    await doomed.getByRole('button', { name: `Delete ${doomedUrl}` }).click()
    const dialog = desktop.getByRole('dialog', { name: 'Delete this endpoint?' })
    expect(await dialog.textContent()).toContain('its pending deliveries are dropped')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    expect(await doomed.count()).toBe(1)
    await doomed.getByRole('button', { name: `Delete ${doomedUrl}` }).click()
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await eventually(() => doomed.count()).toBe(0)
    expect(await desktop.locator('#status').textContent()).toBe(`Deleted the endpoint ${doomedUrl}; its pending deliveries were dropped.`)
    expect(await desktop.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.getAttribute('aria-label'))).toBe(
      `Delete ${nextUrl}`,
    )
    expect((await withKey(`/webhooks/${doomedId}`)).status).toBe(404)
    expect(await desktop.locator('#endpoints-summary').textContent()).toBe('19 of 20 endpoints an account may have.')
    await fitsSideways(desktop, 'webhooks, desktop, 19 endpoints')
    await axeClean(desktop, 'webhooks, desktop, 19 endpoints')
  })

  it("the Activity page names the endpoints' changes, the server's turning one off among them", async () => {
    const rowsOf = async (filter: string) => {
      await desktop.goto(dashboard(`activity?action=${filter}`))
      await desktop.waitForSelector('body[data-ready="true"]')
      return desktop.locator('#events-body tr').evaluateAll((all) =>
        all.map((row) => {
          const text = (label: string) => row.querySelector(`td[data-label="${label}"]`)!.textContent!
          const details = [...row.querySelectorAll('td[data-label="Details"] li')].map((item) => item.textContent!)
          return { action: text('Action'), actor: text('Actor'), details }
        }),
      )
    }
    const host = new URL(receiver.base).host
    expect(await rowsOf('webhook.disabled')).toEqual([
      {
        action: 'Webhook endpoint turned off by the server webhook.disabled',
        actor: 'The server (automatic)',
        details: [`host: ${host}`, 'reason: gone'],
      },
    ])
    const updated = await rowsOf('webhook.updated')
    expect(updated.map((row) => row.details[2])).toEqual(['changed: secret', 'changed: enabled', 'changed: enabled'])
    expect(updated.every((row) => row.action === 'Webhook endpoint changed webhook.updated' && row.actor === `Dashboard: ${email}`)).toBe(
      true,
    )
    const all = await rowsOf('webhook.*')
    expect(await desktop.locator('#filter-action option:checked').textContent()).toBe('Every webhook event')
    expect(all.slice(0, 2)).toEqual([
      {
        action: 'Webhook endpoint deleted webhook.deleted',
        actor: `Dashboard: ${email}`,
        details: [`host: ${host}`, 'events: file.deleted'],
      },
      {
        action: 'Webhook endpoint added webhook.created',
        actor: expect.stringMatching(/^API key/),
        details: [`host: ${host}`, 'events: upload.expired'],
      },
    ])
    await axeClean(desktop, 'activity of webhooks, desktop')
  })

  it('on a phone: the form, the cards and a delivery fit the screen, axe clean', async () => {
    await open(phone)
    const item = card(phone, firstUrl)
    await item.scrollIntoViewIfNeeded()
    await item.getByRole('button', { name: `Send test to ${firstUrl}` }).click()
    await eventually(() => item.locator('.webhook-status').textContent()).toBe('The test message was delivered: the endpoint answered 200.')
    const row = item.locator('.deliveries-table tbody tr').first()
    const answer = (await row.locator('td[data-label="Last answer"]').boundingBox())!
    expect(answer.x + answer.width).toBeLessThanOrEqual(PHONE.width)
    await fitsSideways(phone, 'webhooks, phone')
    await row.scrollIntoViewIfNeeded()
    await shot(phone, 'phone-deliveries')
    await axeClean(phone, 'webhooks with deliveries, phone')

    await phone.getByRole('button', { name: 'Add endpoint' }).scrollIntoViewIfNeeded()
    await phone.getByRole('button', { name: 'Add endpoint' }).click()
    expect(await phone.getByLabel('Endpoint URL').getAttribute('aria-invalid')).toBe('true')
    await phone.locator('#webhook-events').scrollIntoViewIfNeeded()
    await shot(phone, 'phone-form')
    await fitsSideways(phone, 'webhooks form, phone')
    await axeClean(phone, 'webhooks form with errors, phone')

    await item.getByRole('button', { name: `Rotate secret of ${firstUrl}` }).click()
    await phone.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click()
    const box = item.getByRole('region', { name: `New signing secret of ${firstUrl}` })
    await eventually(() => box.isVisible()).toBe(true)
    const secret = (await box.getByRole('textbox').boundingBox())!
    expect(secret.x + secret.width).toBeLessThanOrEqual(PHONE.width)
    await shot(phone, 'phone-rotated')
    await fitsSideways(phone, 'a rotated secret, phone')
    await axeClean(phone, 'a rotated secret, phone')
  })

  it('no page raised an error, broke its CSP, or asked any host but the service', () => {
    for (const found of problems) expect(found).toEqual({ errors: [], foreignRequests: [] })
  })
})

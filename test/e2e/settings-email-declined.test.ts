import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { axeViolations, describeViolations } from '../helpers/axe.js'
import { chromiumAvailable, launchBrowser, screenshot, watchContext } from '../helpers/browser.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { HOLDER_PASSWORD } from '../helpers/two-factor.js'

/**
 * An email change to an address another account has (review R7), in Chromium at both sizes: the
 * holder is told nothing when asking (the same answer as for a free address), and once the
 * operator's `confirm-email` has declined it, Account settings says why; axe in light and dark.
 * Screenshots: test-artifacts/screenshots/email-declined-*.
 */
const PUBLIC_HOST = 'files.example.test'
const dashboard = (page = '') => `http://${PUBLIC_HOST}/dashboard/${page}`
const DEVICES = {
  desktop: { viewport: { width: 1366, height: 900 }, isMobile: false, hasTouch: false },
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
} as const

describe.skipIf(!chromiumAvailable)('an email change the operator could not make, in Chromium', () => {
  let t: TestApp
  let browser: Browser

  beforeAll(async () => {
    t = await startTestApp({ FILESHARE_PUBLIC_URL: `http://${PUBLIC_HOST}` })
    browser = await launchBrowser({ [PUBLIC_HOST]: new URL(t.url).host })
  })
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  async function noViolations(page: Page) {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme })
      const violations = await axeViolations(page)
      expect(violations, `${colorScheme}: ${describeViolations(violations)}`).toEqual([])
    }
    await page.emulateMedia({ colorScheme: 'light' })
  }

  for (const [name, device] of Object.entries(DEVICES)) {
    it(`${name}: asked like any address, declined by the operator, told in Settings until asked again`, async () => {
      const stamp = `${name}-${Date.now()}`
      const email = `asker-${stamp}@example.test`
      const takenEmail = `holder-${stamp}@example.test`
      const { accountId } = await t.createAccount('pro', email)
      await t.app.services.accountHolders.setPassword(accountId, HOLDER_PASSWORD)
      await t.createAccount('pro', takenEmail)
      const context = await browser.newContext(device)
      const problems = watchContext(context, [PUBLIC_HOST])
      const page = await context.newPage()
      await page.goto(dashboard('sign-in'))
      await page.getByLabel('Email address').fill(email)
      await page.getByLabel('Password').fill(HOLDER_PASSWORD)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.waitForURL(dashboard('files'))

      await page.goto(dashboard('settings'))
      await page.waitForSelector('body[data-ready="true"]')
      expect(await page.locator('#email-declined').isVisible()).toBe(false)
      await page.getByLabel('New email address').fill(takenEmail)
      await page.locator('#email-password').fill(HOLDER_PASSWORD)
      await page.getByRole('button', { name: 'Ask for the change' }).click()
      // Pending, as any address would be: nothing says it is taken.
      await page.waitForSelector('#email-pending:not([hidden])')
      expect(await page.locator('#email-pending-address').textContent()).toBe(takenEmail)
      expect(await page.locator('#email-error').textContent()).toBe('')

      await expect(t.app.services.emailChanges.confirm(accountId)).rejects.toMatchObject({ code: 'invalid_parameter' })
      await page.reload()
      await page.waitForSelector('body[data-ready="true"]')
      await page.waitForSelector('#email-declined:not([hidden])')
      expect(await page.locator('#email-pending').isVisible()).toBe(false)
      const notice = await page.locator('#email-declined').textContent()
      expect(notice).toMatch(
        new RegExp(
          `^The operator could not make ${takenEmail} your address \\(\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC\\): another account has it\\.`,
        ),
      )
      expect(await page.locator('#email').textContent()).toBe(email)
      await noViolations(page)
      await screenshot(page, `email-declined-${name}`)

      // Asking again replaces the notice with the new pending change.
      await page.getByLabel('New email address').fill(`other-${stamp}@example.test`)
      await page.locator('#email-password').fill(HOLDER_PASSWORD)
      await page.getByRole('button', { name: 'Ask for the change' }).click()
      await page.waitForSelector('#email-pending:not([hidden])')
      expect(await page.locator('#email-declined').isVisible()).toBe(false)
      expect(problems).toEqual({ errors: [], foreignRequests: [] })
      await context.close()
    })
  }
})

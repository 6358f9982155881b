import fs from 'node:fs/promises'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { expect } from 'vitest'
import { axeViolations, describeViolations } from './axe.js'
import { screenshot as fullPageScreenshot, SCREENSHOT_DIR } from './browser.js'

/** The two screens every dashboard page is tried on: a desktop and a phone (touch, in the contexts that use it). */
export const DESKTOP = { width: 1366, height: 900 }
export const PHONE = { width: 390, height: 844 }

/** Where the phone's screen is: narrower pages are phone-sized. */
export const isPhone = (page: Page) => page.viewportSize()!.width <= PHONE.width

/**
 * A screenshot into test-artifacts/screenshots/<prefix><name>.png: the whole page on a desktop; what
 * the screen shows on a phone (a full-page capture drops the touch emulation).
 */
export async function dashboardScreenshot(page: Page, name: string): Promise<void> {
  if (!isPhone(page)) return fullPageScreenshot(page, name)
  await fs.mkdir(SCREENSHOT_DIR, { recursive: true })
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) })
}

/** axe-core on the page as it is, in the light theme and then the dark one, with a screenshot of each (`<name>-<theme>`). */
export async function axeBothThemes(page: Page, name: string, shoot = dashboardScreenshot): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    const violations = await axeViolations(page)
    expect(violations, `${name}, ${colorScheme}: ${describeViolations(violations)}`).toEqual([])
    await shoot(page, `${name}-${colorScheme}`)
  }
  await page.emulateMedia({ colorScheme: 'light' })
}

/** Opens `url` (a dashboard page) and waits until its script has drawn it. */
export async function openDashboardPage(page: Page, url: string, timeout?: number): Promise<void> {
  await page.goto(url)
  await page.waitForSelector('body[data-ready="true"]', { timeout })
}

/**
 * Signs in on the sign-in page at `signInUrl` (or on the page shown, `onThePage`) and waits for the
 * Files page it leads to (`filesUrl`) to be drawn.
 */
export async function signInOnPage(
  page: Page,
  urls: { signIn: string; files: string },
  email: string,
  password: string,
  { onThePage = false } = {},
): Promise<void> {
  if (!onThePage) await page.goto(urls.signIn)
  await page.getByLabel('Email address').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(urls.files)
  await page.waitForSelector('body[data-ready="true"]')
}

import fs from 'node:fs'
import path from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { ROOT } from './server-process.js'

/**
 * Debian's Chromium headless shell (`apt-get install chromium-headless-shell`; .ci/run installs it
 * when missing): the same Blink and V8 as `chromium`, without the desktop browser around them, as
 * Playwright itself runs for headless tests. The browser tests took 125 s of CPU in the full
 * browser and 83 s in the shell, with the same results (docs/development.md).
 */
export const CHROMIUM_PATH = process.env.FILESHARE_CHROMIUM_PATH ?? '/usr/bin/chromium-headless-shell'
export const chromiumAvailable = fs.existsSync(CHROMIUM_PATH)
if (!chromiumAvailable) {
  console.warn(
    `\n!! No Chromium at ${CHROMIUM_PATH}: the browser tests in test/e2e are SKIPPED (apt-get install chromium-headless-shell).\n`,
  )
}

export const SCREENSHOT_DIR = path.join(ROOT, 'test-artifacts', 'screenshots')

/**
 * Starts headless Chromium. `hosts` maps host names to the test server's `127.0.0.1:port`, so that
 * the browser visits the service under its configured public URL (and download URL) as a user would.
 * Background networking is off: this machine has no network beyond loopback.
 */
export async function launchBrowser(hosts: Record<string, string>): Promise<Browser> {
  const rules = Object.entries(hosts)
    .map(([host, target]) => `MAP ${host} ${target}`)
    .join(', ')
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      `--host-resolver-rules=${rules}`,
    ],
  })
}

/** What a page did that a careful page never does: script errors, CSP violations, requests off the service. */
export interface PageProblems {
  errors: string[]
  foreignRequests: string[]
}

/** Records console errors, uncaught exceptions and requests to hosts other than `allowedHosts`, for every page of the context. */
export function watchContext(context: BrowserContext, allowedHosts: string[]): PageProblems {
  const problems: PageProblems = { errors: [], foreignRequests: [] }
  const watch = (page: Page) => {
    page.on('console', (message) => {
      // Chromium logs every 4xx answer; the tests provoke some (a wrong password) on purpose.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
        problems.errors.push(`${page.url()}: ${message.text()}`)
      }
    })
    page.on('pageerror', (error) => problems.errors.push(`${page.url()}: ${error.message}`))
  }
  context.pages().forEach(watch)
  context.on('page', watch)
  context.on('request', (request) => {
    const url = new URL(request.url())
    if (url.protocol !== 'data:' && !allowedHosts.includes(url.host)) problems.foreignRequests.push(request.url())
  })
  return problems
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true })
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true })
}

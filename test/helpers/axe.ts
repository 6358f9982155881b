import fs from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'

/** axe-core's browser build, as the installed devDependency ships it. */
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
/** Where the page fetches it from: a path on the page's own origin, answered by the test (page.route), never by the server. */
const AXE_PATH = '/__axe-test/axe.min.js'
const routed = new WeakSet<Page>()

export interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: string[]
}

/**
 * Runs axe-core on the page as it is now and returns its violations (rule, impact, the elements).
 * axe.min.js goes in with page.addScriptTag from a same-origin URL that the test itself answers, so
 * that the dashboard's `script-src 'self'` lets it run without loosening the page's CSP. A page whose
 * CSP allows no script at all (the HTML 404) gets it through `evaluate` instead (`csp: 'no-script'`).
 */
export async function axeViolations(page: Page, { csp = 'self' }: { csp?: 'self' | 'no-script' } = {}): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) {
    if (csp === 'self') {
      if (!routed.has(page)) {
        routed.add(page)
        await page.route(`**${AXE_PATH}`, (route) => route.fulfill({ body: AXE_SOURCE, contentType: 'text/javascript; charset=utf-8' }))
      }
      await page.addScriptTag({ url: AXE_PATH })
    } else {
      await page.evaluate(AXE_SOURCE)
    }
  }
  const results = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
    violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[]
  }
  return results.violations.map((violation) => ({
    id: violation.id,
    impact: violation.impact,
    help: violation.help,
    nodes: violation.nodes.map((node) => node.target.join(' ')),
  }))
}

/** One line per violation, for an assertion's message or a report. */
export function describeViolations(violations: AxeViolation[]): string {
  return violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 5).join(', ')}`).join('\n')
}

import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { DEFAULT_PLANS, EnvSchema, PLAN_NAMES } from '../src/config.js'
import { API_ERROR_CODES, ERROR_REGISTRY } from '../src/errors.js'

/**
 * The docs repeat what the code knows (every environment variable with its default and range, the
 * plan table, every error code with its status). These tests fail as soon as the two disagree, so
 * a new variable or code cannot ship undocumented and a changed default cannot leave a stale doc.
 */
const read = (file: string) => fs.readFileSync(new URL(`../docs/${file}`, import.meta.url), 'utf8')

/** Markdown table rows whose first cell is a backticked name: name -> the other cells. */
function tableRows(markdown: string, name: RegExp): Map<string, string[]> {
  const rows = new Map<string, string[]>()
  for (const line of markdown.split('\n')) {
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((cell) => cell.trim())
    const first = /^`([^`]+)`$/.exec(cells[0] ?? '')?.[1]
    if (first && name.test(first)) rows.set(first, cells.slice(1))
  }
  return rows
}

interface EnvProperty {
  type?: string
  default?: unknown
  minimum?: number
  maximum?: number
  anyOf?: Array<{ const?: unknown }>
}

/** The rule text the docs give for an integer, boolean or enumerated variable. */
function expectedRule(property: EnvProperty): string | undefined {
  if (property.type === 'integer') {
    return property.maximum === undefined ? `integer ≥ ${property.minimum}` : `integer ${property.minimum}–${property.maximum}`
  }
  if (property.type === 'boolean') return 'boolean'
  return undefined
}

describe('docs/configuration.md', () => {
  const doc = read('configuration.md')
  const rows = tableRows(doc, /^(PORT|HOST|FILESHARE_[A-Z0-9_]+)$/)
  const properties = EnvSchema.properties as unknown as Record<string, EnvProperty>

  it('documents every variable the service reads, and no other', () => {
    expect([...rows.keys()].sort()).toEqual(Object.keys(properties).sort())
  })

  it("gives each variable's default, and the range of each integer and boolean", () => {
    for (const [name, property] of Object.entries(properties)) {
      const [defaultCell, ruleCell] = rows.get(name)!
      if (property.default === undefined) {
        // Only the public URL has a computed default.
        expect(defaultCell, name).toBe(name === 'FILESHARE_PUBLIC_URL' ? '`http://localhost:<PORT>`' : 'unset')
      } else {
        expect(defaultCell?.startsWith(`\`${String(property.default)}\``), `${name}: ${defaultCell}`).toBe(true)
      }
      const rule = expectedRule(property)
      if (rule) expect(ruleCell?.startsWith(rule), `${name}: ${ruleCell}`).toBe(true)
      for (const literal of property.anyOf ?? []) expect(ruleCell, name).toContain(`\`${String(literal.const)}\``)
    }
  })

  it('shows the default plan table', () => {
    const plans = tableRows(doc, new RegExp(`^(${PLAN_NAMES.join('|')})$`))
    for (const name of PLAN_NAMES) {
      const plan = DEFAULT_PLANS[name]
      const figures = plans.get(name)!.map((cell) => cell.replace(/`/g, '').split(' ')[0])
      expect(figures, name).toEqual(
        [plan.api_access, plan.requests_per_minute, plan.requests_per_day, plan.max_file_size, plan.daily_uploads, plan.max_storage].map(
          String,
        ),
      )
    }
  })
})

describe('error codes in the docs', () => {
  const DASHBOARD_CODES = Object.keys(ERROR_REGISTRY).filter((code) => !(API_ERROR_CODES as string[]).includes(code))

  it('docs/api.md lists every API error code with its status, and no other', () => {
    const rows = tableRows(read('api.md'), /^[a-z_]+$/)
    const documented = Object.fromEntries(
      [...rows].filter(([, cells]) => /^\d{3}$/.test(cells[0] ?? '')).map(([code, cells]) => [code, Number(cells[0])]),
    )
    const registered = Object.fromEntries(API_ERROR_CODES.map((code) => [code, ERROR_REGISTRY[code].status]))
    expect(documented).toEqual(registered)
  })

  it("docs/dashboard.md names the dashboard's own codes with their status", () => {
    const doc = read('dashboard.md')
    for (const code of DASHBOARD_CODES) {
      expect(doc, code).toContain(`\`${code}\` (${ERROR_REGISTRY[code as keyof typeof ERROR_REGISTRY].status}`)
    }
  })
})

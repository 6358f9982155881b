// The SDK's record types against the server's OpenAPI document (GET /api/v1/openapi.json): the
// field lists must match, and the TypeScript types generated from the document (openapi-typescript,
// from the repository's root node_modules) must be exactly the SDK's types.
import { execFile } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { ERROR_CODES, FILE_FIELDS, LIMITS_FIELDS, LINK_FIELDS, PAGINATION_FIELDS, STATS_FIELDS } from '../../src/index.js'
import { server } from '../helpers/env.js'

type Schema = { properties?: Record<string, Schema>; required?: string[]; enum?: string[] }
const root = fileURLToPath(new URL('../../', import.meta.url))
const work = fileURLToPath(new URL('../../node_modules/.cache/openapi-drift/', import.meta.url))
afterAll(() => rmSync(work, { recursive: true, force: true }))

async function openapi(): Promise<{ components: { schemas: Record<string, Schema> } }> {
  const response = await fetch(`${server().base_url}/openapi.json`)
  expect(response.status).toBe(200)
  return (await response.json()) as { components: { schemas: Record<string, Schema> } }
}

describe('the SDK and the OpenAPI document agree', () => {
  it.each([
    ['File', FILE_FIELDS],
    ['Pagination', PAGINATION_FIELDS],
    ['Stats', STATS_FIELDS],
    ['Limits', LIMITS_FIELDS],
    ['Link', LINK_FIELDS],
  ] as const)('%s has the fields the SDK knows, all required', async (name, fields) => {
    const schema = (await openapi()).components.schemas[name]!
    expect(Object.keys(schema.properties ?? {}).sort()).toEqual([...fields].sort())
    expect([...(schema.required ?? [])].sort()).toEqual([...fields].sort())
  })

  it('the error codes match', async () => {
    const codes = (await openapi()).components.schemas.Error!.properties!.error!.properties!.code!.enum
    expect([...(codes ?? [])].sort()).toEqual([...ERROR_CODES].sort())
  })

  it('the types generated from the document are exactly the SDK types', async () => {
    const document = await openapi()
    const entry = new URL('../../../../node_modules/openapi-typescript/dist/index.mjs', import.meta.url)
    const generator = (await import(entry.href)) as {
      default: (schema: unknown) => Promise<unknown>
      astToString: (ast: unknown) => string
    }
    mkdirSync(work, { recursive: true })
    writeFileSync(`${work}openapi.d.ts`, generator.astToString(await generator.default(document)))
    writeFileSync(
      `${work}check.ts`,
      `import type { components } from './openapi.js'
import type { ApiFile, ApiLink, ApiPagination, ErrorCode, Limits, Stats } from '../../../src/types.js'
type S = components['schemas']
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
export const checks: [
  Same<ApiFile, S['File']>,
  Same<ApiPagination, S['Pagination']>,
  Same<Stats, S['Stats']>,
  Same<Limits, S['Limits']>,
  Same<ErrorCode, S['Error']['error']['code']>,
  Same<ApiLink, S['Link']>,
] = [true, true, true, true, true, true]
`,
    )
    const tsc = `${root}node_modules/typescript/bin/tsc`
    const args = [
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--skipLibCheck',
      `${work}check.ts`,
    ]
    const output = await promisify(execFile)(process.execPath, [tsc, ...args]).then(
      () => '',
      (error: { stdout?: string; message: string }) => error.stdout || error.message,
    )
    expect(output).toBe('')
  }, 60_000)
})

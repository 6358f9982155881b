// The SDK's record types against the server's OpenAPI document (GET /api/v1/openapi.json): the
// field lists must match, and the TypeScript types generated from the document (openapi-typescript,
// from the repository's root node_modules) must be exactly the SDK's types.
import { execFile } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import {
  AUDIT_EVENT_FIELDS,
  CURRENT_KEY_FIELDS,
  ERROR_CODES,
  FILE_FIELDS,
  LIMITS_FIELDS,
  LINK_FIELDS,
  PAGINATION_FIELDS,
  STATS_FIELDS,
} from '../../src/index.js'
import { server } from '../helpers/env.js'

type Schema = { properties?: Record<string, Schema>; required?: string[]; enum?: string[] }
const root = fileURLToPath(new URL('../../', import.meta.url))
const work = fileURLToPath(new URL('../../node_modules/.cache/openapi-drift/', import.meta.url))
afterAll(() => rmSync(work, { recursive: true, force: true }))

type Document = {
  components: { schemas: Record<string, Schema> }
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> }>>
}

async function openapi(): Promise<Document> {
  const response = await fetch(`${server().base_url}/openapi.json`)
  expect(response.status).toBe(200)
  return (await response.json()) as Document
}

/**
 * `CurrentKey` (the `key` of GET /key's answer) or `AuditEvent` (an item of GET /audit-events'
 * `events`): from `components.schemas` when the document names them there, else from the answer.
 */
function answerSchema(document: Document, name: 'CurrentKey' | 'AuditEvent'): Schema {
  const resolve = (schema: Schema & { $ref?: string }): Schema =>
    schema.$ref ? document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]! : schema
  if (document.components.schemas[name]) return document.components.schemas[name]
  const path = name === 'CurrentKey' ? '/api/v1/key' : '/api/v1/audit-events'
  const answer = resolve(document.paths[path]!.get!.responses!['200']!.content!['application/json']!.schema!)
  return name === 'CurrentKey'
    ? resolve(answer.properties!.key!)
    : resolve((answer.properties!.events! as Schema & { items: Schema }).items)
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

  it.each([
    ['CurrentKey', CURRENT_KEY_FIELDS],
    ['AuditEvent', AUDIT_EVENT_FIELDS],
  ] as const)(
    '%s (the key of GET /key, an event of GET /audit-events) has the fields the SDK knows, all required',
    async (name, fields) => {
      const schema = answerSchema(await openapi(), name)
      expect(Object.keys(schema.properties ?? {}).sort()).toEqual([...fields].sort())
      expect([...(schema.required ?? [])].sort()).toEqual([...fields].sort())
    },
  )

  it('GET /key and GET /audit-events are there, the latter with the query parameters the SDK sends', async () => {
    const document = (await openapi()) as unknown as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>
    }
    const path = (suffix: string) => Object.keys(document.paths).find((p) => p === suffix || p.endsWith(`/api/v1${suffix}`))
    expect(path('/key'), 'GET /key').toBeDefined()
    expect(document.paths[path('/key')!]!.get).toBeDefined()
    const audit = path('/audit-events')
    expect(audit, 'GET /audit-events').toBeDefined()
    const query = (document.paths[audit!]!.get!.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name)
    expect(query.sort()).toEqual(['action', 'before_id', 'limit', 'since'])
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
      `import type { components, paths } from './openapi.js'
import type { ApiAuditEvent, ApiCurrentKey, ApiFile, ApiLink, ApiPagination, ErrorCode, Limits, Stats } from '../../../src/types.js'
type S = components['schemas']
type Answer<P extends keyof paths> = paths[P] extends { get: { responses: { 200: { content: { 'application/json': infer A } } } } } ? A : never
type CurrentKey = Answer<'/api/v1/key'> extends { key: infer K } ? K : never
type AuditEvent = Answer<'/api/v1/audit-events'> extends { events: (infer E)[] } ? E : never
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
export const checks: [
  Same<ApiFile, S['File']>,
  Same<ApiPagination, S['Pagination']>,
  Same<Stats, S['Stats']>,
  Same<Limits, S['Limits']>,
  Same<ErrorCode, S['Error']['error']['code']>,
  Same<ApiLink, S['Link']>,
  Same<ApiCurrentKey, CurrentKey>,
  Same<ApiAuditEvent, AuditEvent>,
] = [true, true, true, true, true, true, true, true]
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

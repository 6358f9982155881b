// The SDK's record types against the server's OpenAPI document (GET /api/v1/openapi.json): the
// field lists must match, and the TypeScript types generated from the document (openapi-typescript,
// from the repository's root node_modules) must be exactly the SDK's types. The webhook checks run
// when the document has the /webhooks paths, and are skipped (shown as skipped) while the server
// under test has none.
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
  FILE_SORTS,
  FILE_STATES,
  LIMITS_FIELDS,
  LINK_FIELDS,
  PAGINATION_FIELDS,
  SORT_ORDERS,
  STATS_FIELDS,
  UPLOAD_REQUEST_FIELDS,
  WEBHOOK_DELIVERY_FIELDS,
  WEBHOOK_FIELDS,
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

/** The codes that come with the webhook paths: the document of a server without them may lack them. */
const WEBHOOK_ERROR_CODES = ['webhook_url_not_allowed', 'webhook_limit_exceeded']

type Operation = {
  parameters?: { name: string; in: string }[]
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>
}

/** The document's key for an API path (`/webhooks/{webhook_id}`), whether it holds the `/api/v1` prefix or not. */
function pathKey(document: Document, suffix: string): string | undefined {
  return Object.keys(document.paths).find((p) => p === suffix || p.endsWith(`/api/v1${suffix}`))
}

function hasWebhooks(document: Document): boolean {
  return pathKey(document, '/webhooks') !== undefined
}

function hasUploadRequests(document: Document): boolean {
  return pathKey(document, '/upload-requests') !== undefined
}

/** The schema of a path's JSON answer, `$ref`s resolved. */
function answerOf(document: Document, suffix: string, method: string, status: string): Schema & { items?: Schema } {
  const operation = document.paths[pathKey(document, suffix)!]![method] as Operation | undefined
  expect(operation, `${method.toUpperCase()} ${suffix}`).toBeDefined()
  const schema = operation!.responses?.[status]?.content?.['application/json']?.schema
  expect(schema, `the ${status} answer of ${method.toUpperCase()} ${suffix}`).toBeDefined()
  return resolveRef(document, schema!)
}

function resolveRef(document: Document, schema: Schema & { $ref?: string }): Schema & { items?: Schema } {
  return schema.$ref ? document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]! : schema
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

  it("GET /files takes the query parameters the SDK sends, sort, order and state with the SDK's values", async () => {
    type Parameter = {
      name: string
      in: string
      style?: string
      explode?: boolean
      schema?: Schema & { type?: string; anyOf?: Schema[]; items?: Schema & { anyOf?: Schema[] } }
    }
    const document = (await openapi()) as unknown as {
      paths: Record<string, Record<string, { parameters?: Parameter[] }>>
    }
    const files = pathKey(document as unknown as Document, '/files')
    const parameters = (document.paths[files!]!.get!.parameters ?? []).filter((p) => p.in === 'query')
    // Every parameter the SDK sends is there (the server may take more: the SDK does not send those).
    expect(parameters.map((p) => p.name)).toEqual(
      expect.arrayContaining(['before_id', 'limit', 'order', 'page', 'q', 'sort', 'state', 'type']),
    )
    // The enum of a schema, whether the document gives it as `enum` or as a union of constants.
    const enumOf = (schema: Schema & { anyOf?: Schema[] }) =>
      schema.enum ?? (schema.anyOf ?? []).map((s) => (s as { const?: string }).const ?? s.enum?.[0])
    const parameter = (name: string) => parameters.find((p) => p.name === name)!
    expect(enumOf(parameter('sort').schema!)).toEqual([...FILE_SORTS])
    expect(enumOf(parameter('order').schema!)).toEqual([...SORT_ORDERS])
    // type and state are lists, sent as the parameter repeated (the OpenAPI default for a query array: form, exploded).
    for (const name of ['type', 'state']) {
      const { style = 'form', explode = true, schema } = parameter(name)
      expect([schema?.type, style, explode], name).toEqual(['array', 'form', true])
    }
    expect(enumOf(parameter('state').schema!.items!)).toEqual([...FILE_STATES])
  })

  it('the error codes match (the webhook codes once the document has the /webhooks paths)', async () => {
    const document = await openapi()
    const codes: string[] = [...(document.components.schemas.Error!.properties!.error!.properties!.code!.enum ?? [])]
    const known: string[] = [...ERROR_CODES]
    if (hasWebhooks(document)) {
      expect(codes.sort()).toEqual(known.sort())
    } else {
      const others = (list: string[]) => list.filter((code) => !WEBHOOK_ERROR_CODES.includes(code)).sort()
      expect(others(codes)).toEqual(others(known))
    }
  })

  it('the webhook calls the SDK makes are in the document, deliveries with limit and before_id', async (context) => {
    const document = await openapi()
    if (!hasWebhooks(document)) return context.skip('the server under test has no /webhooks paths yet')
    const calls: [string, string][] = [
      ['post', '/webhooks'],
      ['get', '/webhooks'],
      ['get', '/webhooks/{webhook_id}'],
      ['patch', '/webhooks/{webhook_id}'],
      ['delete', '/webhooks/{webhook_id}'],
      ['post', '/webhooks/{webhook_id}/rotate-secret'],
      ['post', '/webhooks/{webhook_id}/test'],
      ['get', '/webhooks/{webhook_id}/deliveries'],
      ['post', '/webhooks/{webhook_id}/deliveries/{delivery_id}/retry'],
    ]
    for (const [method, suffix] of calls) {
      const key = pathKey(document, suffix)
      expect(key, suffix).toBeDefined()
      expect(document.paths[key!]![method], `${method.toUpperCase()} ${suffix}`).toBeDefined()
    }
    const deliveries = document.paths[pathKey(document, '/webhooks/{webhook_id}/deliveries')!]!.get as Operation
    const query = (deliveries.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name)
    expect(query.sort()).toEqual(['before_id', 'limit'])
  })

  it('Webhook and WebhookDelivery have the fields the SDK knows, all required; secret optional, in the create and rotate answers', async (context) => {
    const document = await openapi()
    if (!hasWebhooks(document)) return context.skip('the server under test has no /webhooks paths yet')
    const fieldsOf = (schema: Schema) => ({
      properties: Object.keys(schema.properties ?? {}).sort(),
      required: [...(schema.required ?? [])].sort(),
    })
    // The document may describe one Webhook for every answer, with \`secret\` optional (the SDK's
    // Webhook and WebhookWithSecret): never required where the answer has none.
    const webhook = resolveRef(document, answerOf(document, '/webhooks/{webhook_id}', 'get', '200').properties!.webhook!)
    const fields = fieldsOf(webhook)
    expect({ ...fields, properties: fields.properties.filter((name) => name !== 'secret') }).toEqual({
      properties: [...WEBHOOK_FIELDS].sort(),
      required: [...WEBHOOK_FIELDS].sort(),
    })
    for (const [suffix, status] of [
      ['/webhooks', '201'],
      ['/webhooks/{webhook_id}/rotate-secret', '200'],
    ] as const) {
      const withSecret = fieldsOf(resolveRef(document, answerOf(document, suffix, 'post', status).properties!.webhook!))
      expect(withSecret.properties, `the webhook of POST ${suffix}`).toEqual([...WEBHOOK_FIELDS, 'secret'].sort())
      expect(withSecret.required.filter((name) => name !== 'secret')).toEqual([...WEBHOOK_FIELDS].sort())
    }
    const list = answerOf(document, '/webhooks/{webhook_id}/deliveries', 'get', '200')
    const delivery = resolveRef(document, (list.properties!.deliveries! as Schema & { items: Schema }).items)
    expect(fieldsOf(delivery)).toEqual({ properties: [...WEBHOOK_DELIVERY_FIELDS].sort(), required: [...WEBHOOK_DELIVERY_FIELDS].sort() })
    expect(
      Object.keys(list.properties!.pagination ? (resolveRef(document, list.properties!.pagination).properties ?? {}) : {}).sort(),
    ).toEqual(['limit', 'next_before_id'])
  })

  it('the upload request calls the SDK makes are in the document, files with limit and before_id; UploadRequest has the fields the SDK knows', async (context) => {
    const document = await openapi()
    if (!hasUploadRequests(document)) return context.skip('the server under test has no /upload-requests paths yet')
    const calls: [string, string][] = [
      ['post', '/upload-requests'],
      ['get', '/upload-requests'],
      ['get', '/upload-requests/{request_id}'],
      ['patch', '/upload-requests/{request_id}'],
      ['delete', '/upload-requests/{request_id}'],
      ['post', '/upload-requests/{request_id}/close'],
      ['get', '/upload-requests/{request_id}/files'],
    ]
    for (const [method, suffix] of calls) {
      const key = pathKey(document, suffix)
      expect(key, suffix).toBeDefined()
      expect(document.paths[key!]![method], `${method.toUpperCase()} ${suffix}`).toBeDefined()
    }
    const files = document.paths[pathKey(document, '/upload-requests/{request_id}/files')!]!.get as Operation
    const query = (files.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name)
    expect(query.sort()).toEqual(['before_id', 'limit'])
    const request = resolveRef(document, answerOf(document, '/upload-requests/{request_id}', 'get', '200').properties!.upload_request!)
    expect(Object.keys(request.properties ?? {}).sort()).toEqual([...UPLOAD_REQUEST_FIELDS].sort())
    expect([...(request.required ?? [])].sort()).toEqual([...UPLOAD_REQUEST_FIELDS].sort())
    const list = answerOf(document, '/upload-requests/{request_id}/files', 'get', '200')
    expect(
      Object.keys(list.properties!.pagination ? (resolveRef(document, list.properties!.pagination).properties ?? {}) : {}).sort(),
    ).toEqual(['limit', 'next_before_id'])
  })

  it('the types generated from the document are exactly the SDK types', async () => {
    const document = await openapi()
    const webhooks = hasWebhooks(document)
    const uploadRequests = hasUploadRequests(document)
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
import type { ApiUploadRequest, ApiWebhook, ApiWebhookDelivery } from '../../../src/types.js'
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
${
  webhooks
    ? `type WebhookPath = Extract<keyof paths, \`\${string}/webhooks/{webhook_id}\`>
type DeliveriesPath = Extract<keyof paths, \`\${string}/webhooks/{webhook_id}/deliveries\`>
type Webhook = Answer<WebhookPath> extends { webhook: infer W } ? W : never
type Delivery = Answer<DeliveriesPath> extends { deliveries: (infer D)[] } ? D : never
export const webhookChecks: [Same<ApiWebhook, Webhook>, Same<ApiWebhookDelivery, Delivery>] = [true, true]
`
    : `export type Unused = [ApiWebhook, ApiWebhookDelivery]
`
}${
        uploadRequests
          ? `type UploadRequestPath = Extract<keyof paths, \`\${string}/upload-requests/{request_id}\`>
type UploadRequestAnswer = Answer<UploadRequestPath> extends { upload_request: infer R } ? R : never
export const uploadRequestChecks: [Same<ApiUploadRequest, UploadRequestAnswer>] = [true]
`
          : `export type UnusedUploadRequest = ApiUploadRequest
`
      }`,
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

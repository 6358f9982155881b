import net from 'node:net'
import { Check, Errors } from 'typebox/schema'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { bearer, fileForm, startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'
import { ERROR_REGISTRY } from '../../src/errors.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

type Json = Record<string, unknown>

async function expectErrorBody(response: Response, status: number, code: string): Promise<Json> {
  expect(response.status).toBe(status)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  const text = await response.text()
  expect(text.trimStart().startsWith('<')).toBe(false)
  const body = JSON.parse(text) as Json
  expect(body).toMatchObject({ success: false, error: { code, message: expect.any(String) } })
  return body
}

/** Sends raw bytes and reads until the server closes: for requests that fetch cannot make. */
function rawRequest(url: string, payload: string): Promise<string> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(payload))
    let received = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (received += chunk))
    socket.on('close', () => resolve(received))
    socket.on('error', reject)
  })
}

function parseRawResponse(raw: string) {
  const [head = '', body = ''] = raw.split('\r\n\r\n')
  const [statusLine = '', ...headerLines] = head.split('\r\n')
  const headers = Object.fromEntries(
    headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  )
  return { status: Number(statusLine.split(' ')[1]), headers, body }
}

// One app for the blocks on the default configuration (a fresh one each cost a PostgreSQL schema, a
// bucket and migrations on the scale-out stack); the internal errors below break theirs, so they get their own.
let defaultApp: TestApp
beforeAll(async () => {
  defaultApp = await startTestApp()
})
afterAll(async () => {
  await defaultApp.close()
})

describe('unknown routes and error bodies', () => {
  let t: TestApp
  beforeAll(() => {
    t = defaultApp
  })

  // `GET /` redirects to the dashboard (test/contract/dashboard-security.test.ts).
  const unknownRoutes: [string, string][] = [
    ['POST', '/'],
    ['GET', '/nope'],
    ['GET', '/index.html'],
    ['GET', '/api'],
    ['GET', '/api/v1'],
    ['GET', '/api/v1/'],
    ['GET', '/api/v1/nope'],
    ['GET', '/api/v2/files'],
    ['GET', '/api/v1/files/1/extra'],
    ['POST', '/api/v1/stats'],
    ['POST', '/api/v1/files'],
    ['PUT', '/api/v1/files/1'],
    ['PUT', '/api/v1/links/1'],
    ['DELETE', '/api/v1/files'],
    ['DELETE', '/api/v1/stats'],
    ['OPTIONS', '/api/v1/files'],
    ['PROPFIND', '/api/v1/files'],
    ['GET', '/download'],
    ['GET', '/download/'],
    ['DELETE', '/download/abcdefghijklmnopqrstuv'],
  ]

  it('answers unknown paths and methods with a JSON 404 error body, with or without a key', async () => {
    const { apiKey } = await t.createAccount('pro')
    for (const [method, path] of unknownRoutes) {
      for (const headers of [{ accept: 'text/html' }, bearer(apiKey)]) {
        const response = await fetch(`${t.url}${path}`, { method, headers })
        expect(response.status, `${method} ${path}`).toBe(404)
        expect(response.headers.get('x-request-id')).toMatch(UUID)
        const body = await expectErrorBody(response, 404, 'not_found')
        expect(Object.keys(body).sort()).toEqual(['error', 'success'])
      }
    }
  })

  it('answers HEAD on an unknown path with 404 and no body', async () => {
    const response = await fetch(`${t.url}/api/v1/nope`, { method: 'HEAD' })
    expect(response.status).toBe(404)
    expect(await response.text()).toBe('')
  })

  it('answers requests the HTTP parser refuses with the JSON error body', async () => {
    const unknownMethod = await fetch(`${t.api}/files`, { method: 'BREW' })
    await expectErrorBody(unknownMethod, 400, 'invalid_request')

    const garbage = parseRawResponse(await rawRequest(t.url, 'THIS IS NOT HTTP\r\n\r\n'))
    expect(garbage.status).toBe(400)
    expect(garbage.headers['content-type']).toMatch(/^application\/json/)
    expect(garbage.headers['x-request-id']).toMatch(UUID)
    expect(JSON.parse(garbage.body)).toMatchObject({ success: false, error: { code: 'invalid_request', message: expect.any(String) } })
  })

  it('puts a distinct X-Request-Id on every response', async () => {
    const { apiKey } = await t.createAccount('pro')
    const free = await t.createAccount('free')
    const { response: uploaded, body } = await uploadFile(t, apiKey, 'id me')
    const link = `${t.url}${new URL(body.public_link).pathname}`
    const responses = [uploaded]
    const requests: [string, RequestInit?][] = [
      [link],
      [link, { method: 'HEAD' }],
      [`${t.url}/download/unknown-token-0000000000`],
      [`${t.url}/healthz`],
      [`${t.url}/readyz`],
      [`${t.api}/openapi.json`],
      [`${t.api}/stats`, { headers: bearer(apiKey) }],
      [`${t.api}/files`, { headers: bearer(apiKey) }],
      [`${t.api}/files/${body.file_id}`, { headers: bearer(apiKey) }],
      [`${t.api}/files/abc`, { headers: bearer(apiKey) }],
      [`${t.api}/files/999999`, { headers: bearer(apiKey) }],
      [`${t.api}/files/upload`, { method: 'POST', headers: bearer(apiKey), body: fileForm('x', 'x', 'other') }],
      [`${t.api}/stats`],
      [`${t.api}/stats`, { headers: bearer(free.apiKey) }],
      [`${t.url}/nowhere`],
      [`${t.api}/files/${body.file_id}`, { method: 'DELETE', headers: bearer(apiKey) }],
    ]
    for (const [url, init] of requests) {
      const response = await fetch(url, init)
      await response.arrayBuffer()
      responses.push(response)
    }
    const ids = responses.map((response) => response.headers.get('x-request-id'))
    for (const [index, id] of ids.entries()) expect(id, String(requests[index - 1]?.[0] ?? 'upload')).toMatch(UUID)
    expect(new Set(ids).size).toBe(ids.length)
    expect(responses.map((response) => response.status)).toEqual([
      201, 200, 200, 404, 200, 200, 200, 200, 200, 200, 400, 404, 400, 401, 403, 404, 200,
    ])
  })

  it('answers 429 with the error body and Retry-After', async () => {
    const { accountId, apiKey } = await t.createAccount('pro')
    await t.app.services.accounts.setLimits(accountId, { requests_per_minute: 1 })
    expect((await fetch(`${t.api}/stats`, { headers: bearer(apiKey) })).status).toBe(200)
    const refused = await fetch(`${t.api}/stats`, { headers: bearer(apiKey) })
    expect(refused.headers.get('retry-after')).toMatch(/^[0-9]+$/)
    expect(refused.headers.get('x-request-id')).toMatch(UUID)
    await expectErrorBody(refused, 429, 'rate_limited')
  })
})

describe('internal errors', () => {
  let t: TestApp
  beforeEach(async () => {
    t = await startTestApp()
  })
  afterEach(async () => {
    await t.close()
  })

  it('an unexpected fault is exactly 500 internal_error, with the request id and nothing of the cause', async () => {
    const { apiKey } = await t.createAccount('pro')
    const { body: uploaded } = await uploadFile(t, apiKey, 'a file')
    vi.spyOn(t.app.services.files, 'describe').mockRejectedValueOnce(new TypeError('secret detail at /work/src/x.ts:1'))
    const response = await fetch(`${t.api}/files/${uploaded.file_id}`, { headers: bearer(apiKey) })
    expect(response.status).toBe(500)
    const requestId = response.headers.get('x-request-id')
    expect(requestId).toMatch(UUID)
    const text = await response.text()
    expect(JSON.parse(text)).toEqual({
      success: false,
      error: { code: 'internal_error', message: ERROR_REGISTRY.internal_error.message, request_id: requestId },
    })
    expect(text).not.toMatch(/secret|TypeError|\.ts\b|\s+at\s/)
    // The fault was one request's: the next one is served.
    expect((await fetch(`${t.api}/files/${uploaded.file_id}`, { headers: bearer(apiKey) })).status).toBe(200)
  })

  it('hides the details of a failure behind a generic 5xx body that carries the request id', async () => {
    const { apiKey } = await t.createAccount('pro')
    const { body: uploaded } = await uploadFile(t, apiKey, 'before the failure')
    // The database goes away under the running app: every API call now fails inside.
    await t.app.database.db.destroy()

    const calls: [string, RequestInit][] = [
      [`${t.api}/stats`, { headers: bearer(apiKey) }],
      [`${t.api}/files`, { headers: bearer(apiKey) }],
      [`${t.api}/files/${uploaded.file_id}`, { method: 'DELETE', headers: bearer(apiKey) }],
      [`${t.url}${new URL(uploaded.public_link).pathname}`, {}],
    ]
    for (const [url, init] of calls) {
      const response = await fetch(url, init)
      expect([500, 503], url).toContain(response.status)
      const requestId = response.headers.get('x-request-id')
      expect(requestId).toMatch(UUID)
      const text = await response.text()
      const body = JSON.parse(text) as { success: boolean; error: Json }
      const expectedCode = response.status === 500 ? 'internal_error' : 'service_unavailable'
      expect(body).toEqual({ success: false, error: { code: expectedCode, message: expect.any(String), request_id: requestId } })
      // Nothing of the cause leaks: no stack, no driver message, no source paths.
      expect(text).not.toMatch(/stack|destroyed|kysely|sqlite|\.ts\b|\.js\b|\s+at\s|node_modules|\/work\//i)
    }

    // The process is up but not ready.
    const health = await fetch(`${t.url}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ success: true, status: 'ok' })
    const ready = await fetch(`${t.url}/readyz`)
    expect(ready.status).toBe(503)
    expect(await ready.json()).toMatchObject({ success: false, error: { code: 'service_unavailable' } })
  })
})

describe('health and the OpenAPI document', () => {
  let t: TestApp
  beforeAll(() => {
    t = defaultApp
  })

  it('answers /healthz and /readyz with 200 and the checks', async () => {
    const health = await fetch(`${t.url}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ success: true, status: 'ok' })

    const ready = await fetch(`${t.url}/readyz`)
    expect(ready.status).toBe(200)
    const body = (await ready.json()) as { success: boolean; checks: Record<string, string> }
    expect(body).toMatchObject({ success: true, checks: { database: 'ok', storage: 'ok' } })
    expect(Object.values(body.checks).every((check) => check === 'ok')).toBe(true)
  })

  describe('GET /api/v1/openapi.json', () => {
    type Operation = {
      responses: Record<string, { description?: unknown; content?: Record<string, { schema?: Json }> }>
      parameters?: { name: string; in: string; required?: boolean; schema?: Json }[]
      security?: Record<string, unknown[]>[]
    }
    type Document = {
      openapi: string
      info: { title: unknown; version: unknown }
      paths: Record<string, Record<string, Operation>>
      components?: { securitySchemes?: Record<string, Json>; schemas?: Record<string, Json> }
    }

    let document: Document
    beforeEach(async () => {
      const response = await fetch(`${t.api}/openapi.json`)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toMatch(/^application\/json/)
      document = (await response.json()) as Document
    })

    /** The documented JSON schema of one response, with local $refs resolved. */
    function responseSchema(path: string, method: string, status: number): Json {
      const response = document.paths[path]?.[method]?.responses[String(status)]
      expect(response, `${method} ${path} ${status}`).toBeDefined()
      const schema = response!.content?.['application/json']?.schema
      expect(schema, `${method} ${path} ${status} schema`).toBeDefined()
      return resolveRefs(schema!) as Json
    }

    function resolveRefs(node: unknown): unknown {
      if (Array.isArray(node)) return node.map(resolveRefs)
      if (!node || typeof node !== 'object') return node
      const ref = (node as Json).$ref
      if (typeof ref === 'string') return resolveRefs(lookup(ref))
      return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, resolveRefs(value)]))
    }

    function lookup(ref: string): unknown {
      expect(ref.startsWith('#/')).toBe(true)
      let node: unknown = document
      for (const part of ref.slice(2).split('/')) node = (node as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')]
      expect(node, ref).toBeDefined()
      return node
    }

    function expectValid(schema: Json, value: unknown, what: string): void {
      const [, errors] = Errors(schema, value)
      expect(errors, what).toEqual([])
      expect(Check(schema, value), what).toBe(true)
    }

    const endpoints: [string, string, number, string][] = [
      ['/api/v1/files/upload', 'post', 201, 'files:write'],
      ['/api/v1/files', 'get', 200, 'files:read'],
      ['/api/v1/files/{file_id}', 'get', 200, 'files:read'],
      ['/api/v1/files/{file_id}', 'delete', 200, 'files:delete'],
      ['/api/v1/stats', 'get', 200, 'stats:read'],
    ]

    it('is a well-formed OpenAPI 3.1 document', () => {
      expect(document.openapi).toMatch(/^3\.1\.[0-9]+$/)
      expect(typeof document.info.title).toBe('string')
      expect(typeof document.info.version).toBe('string')
      const methods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])
      for (const [path, item] of Object.entries(document.paths)) {
        expect(path.startsWith('/')).toBe(true)
        const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1])
        for (const [method, operation] of Object.entries(item)) {
          if (method === 'parameters' || method === 'summary' || method === 'description') continue
          expect(methods.has(method), `${path} ${method}`).toBe(true)
          expect(Object.keys(operation.responses).length, `${method} ${path}`).toBeGreaterThan(0)
          for (const [status, response] of Object.entries(operation.responses)) {
            expect(status).toMatch(/^([1-5][0-9X]{2}|default)$/)
            expect(typeof response.description, `${method} ${path} ${status} description`).toBe('string')
          }
          // Every path template variable is declared as a required path parameter.
          for (const name of templated) {
            const parameter = operation.parameters?.find((p) => p.in === 'path' && p.name === name)
            expect(parameter, `${method} ${path} {${name}}`).toMatchObject({ required: true })
          }
        }
      }
      // Every reference points somewhere.
      JSON.stringify(document, (key, value: unknown) => {
        if (key === '$ref' && typeof value === 'string') lookup(value)
        return value
      })
    })

    it('lists the five API endpoints with their response schemas and bearer authentication with the scope each needs', () => {
      const schemes = document.components?.securitySchemes ?? {}
      const [bearerName] =
        Object.entries(schemes).find(([, scheme]) => scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'bearer') ?? []
      expect(bearerName).toBeDefined()

      for (const [path, method, success, scope] of endpoints) {
        const operation = document.paths[path]?.[method]
        expect(operation, `${method} ${path}`).toBeDefined()
        expect(operation!.security, `${method} ${path}`).toEqual([{ [bearerName!]: [scope] }])
        expect((operation as Record<string, unknown>)['x-required-scope'], `${method} ${path}`).toBe(scope)
        expect(responseSchema(path, method, success)).toMatchObject({ type: 'object' })
        for (const status of [401, 403, 429]) {
          expect(responseSchema(path, method, status)).toMatchObject({ required: expect.arrayContaining(['success', 'error']) })
        }
      }
      for (const [path, method] of [
        ['/api/v1/files/{file_id}', 'get'],
        ['/api/v1/files/{file_id}', 'delete'],
      ] as const) {
        responseSchema(path, method, 400)
        responseSchema(path, method, 404)
      }
      responseSchema('/api/v1/files', 'get', 400)
      responseSchema('/api/v1/files/upload', 'post', 400)

      const required = (schema: Json) => schema.required as string[]
      expect(required(responseSchema('/api/v1/files/upload', 'post', 201))).toEqual(
        expect.arrayContaining(['success', 'file_id', 'public_link', 'size', 'filename']),
      )
      expect(required(responseSchema('/api/v1/files', 'get', 200))).toEqual(expect.arrayContaining(['success', 'files', 'pagination']))
      const detail = responseSchema('/api/v1/files/{file_id}', 'get', 200)
      const fileSchema = (detail.properties as Record<string, Json>).file!
      expect(required(fileSchema)).toEqual(
        expect.arrayContaining(['file_id', 'filename', 'size', 'upload_date', 'download_count', 'public_link']),
      )
      expect(required(responseSchema('/api/v1/files/{file_id}', 'delete', 200))).toEqual(expect.arrayContaining(['success', 'message']))
      const stats = responseSchema('/api/v1/stats', 'get', 200)
      expect(required(stats)).toEqual(expect.arrayContaining(['success', 'stats', 'limits', 'plan']))
      const statsProperties = stats.properties as Record<string, Json>
      expect(required(statsProperties.stats!)).toEqual(
        expect.arrayContaining(['total_files', 'total_size', 'uploads_today', 'total_downloads']),
      )
      expect(required(statsProperties.limits!)).toEqual(
        expect.arrayContaining(['max_file_size', 'daily_uploads', 'requests_per_minute', 'requests_per_day']),
      )

      // The documented parameters: file_id a positive integer, page and limit with their bounds and defaults.
      const fileId = document.paths['/api/v1/files/{file_id}']!.get!.parameters!.find((p) => p.name === 'file_id')
      expect(fileId).toMatchObject({ in: 'path', required: true, schema: { type: 'integer', minimum: 1 } })
      const query = document.paths['/api/v1/files']!.get!.parameters!.filter((p) => p.in === 'query')
      expect(query.find((p) => p.name === 'page')).toMatchObject({ schema: { type: 'integer', minimum: 1, default: 1 } })
      expect(query.find((p) => p.name === 'limit')).toMatchObject({ schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } })
    })

    it('describes the responses the API really gives', async () => {
      const { apiKey } = await t.createAccount('pro')
      const headers = bearer(apiKey)
      const { response: uploadResponse, body: uploaded } = await uploadFile(t, apiKey, 'documented')
      expect(uploadResponse.status).toBe(201)
      expectValid(responseSchema('/api/v1/files/upload', 'post', 201), uploaded, 'upload 201')

      const real = async (url: string, init?: RequestInit) => (await fetch(url, init)).json()
      expectValid(responseSchema('/api/v1/files', 'get', 200), await real(`${t.api}/files`, { headers }), 'list 200')
      expectValid(
        responseSchema('/api/v1/files/{file_id}', 'get', 200),
        await real(`${t.api}/files/${uploaded.file_id}`, { headers }),
        'detail 200',
      )
      expectValid(responseSchema('/api/v1/stats', 'get', 200), await real(`${t.api}/stats`, { headers }), 'stats 200')
      expectValid(responseSchema('/api/v1/files', 'get', 400), await real(`${t.api}/files?limit=0`, { headers }), 'list 400')
      expectValid(responseSchema('/api/v1/files/{file_id}', 'get', 404), await real(`${t.api}/files/999999`, { headers }), 'detail 404')
      expectValid(responseSchema('/api/v1/stats', 'get', 401), await real(`${t.api}/stats`), 'stats 401')
      expectValid(
        responseSchema('/api/v1/files/{file_id}', 'delete', 200),
        await real(`${t.api}/files/${uploaded.file_id}`, { method: 'DELETE', headers }),
        'delete 200',
      )
    })
  })
})

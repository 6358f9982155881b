import fs from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { loadConfig, lintFromString } from '@redocly/openapi-core'
import createClient from 'openapi-fetch'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { API_ERROR_CODES } from '../../src/errors.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { CLIENT_TYPES_FILE, clientTypes } from './client-types.js'
import type { paths } from './generated/fileshare-api.js'

interface Operation {
  operationId?: string
  security?: unknown[]
  requestBody?: { content: Record<string, { schema: unknown }> }
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>
}
type Document = {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> }
}

/** GET /api/v1/openapi.json describes everything a client needs, and generated clients work with it. */
describe('the OpenAPI document', () => {
  let t: TestApp
  let document: Document
  let source: string
  beforeAll(async () => {
    t = await startTestApp()
    const response = await fetch(`${t.api}/openapi.json`)
    expect(response.status).toBe(200)
    source = await response.text()
    document = JSON.parse(source) as Document
  })
  afterAll(async () => {
    await t?.close()
  })

  const operation = (path: string, method: string) => document.paths[path]![method]!

  it('passes the Redocly linter (recommended rules, redocly.yaml) without a problem', async () => {
    const config = await loadConfig({ configPath: fileURLToPath(new URL('../../redocly.yaml', import.meta.url)) })
    const problems = await lintFromString({ source, absoluteRef: `${t.api}/openapi.json`, config })
    expect(
      problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`),
    ).toEqual([])
  })

  it('gives every operation a 2XX answer, but the counted POST of a link, which answers 303 (redocly.yaml)', () => {
    const without2xx = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => !Object.keys((op as { responses: object }).responses).some((status) => status.startsWith('2')))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    )
    expect(without2xx).toEqual(['POST /download/{token}'])
    expect(Object.keys(operation('/download/{token}', 'post').responses!)).toContain('303')
  })

  it('puts every operation in one group (tag) of its own, each declared with a description, by its path', () => {
    const tagged = document as Document & { tags: { name: string; description?: string }[] }
    const declared = tagged.tags.map((tag) => tag.name)
    expect(tagged.tags.every((tag) => (tag.description ?? '').length > 0)).toBe(true)
    const tags = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({
        operation: `${method.toUpperCase()} ${path}`,
        tags: (op as { tags?: string[] }).tags,
      })),
    )
    expect(tags.filter(({ tags: names }) => names?.length !== 1 || !declared.includes(names[0]!))).toEqual([])
    const tagOf = (path: string, method: string) => (operation(path, method) as { tags?: string[] }).tags
    expect(tagOf('/api/v1/files', 'get')).toEqual(['Files'])
    expect(tagOf('/api/v1/files/{file_id}', 'delete')).toEqual(['Files'])
    expect(tagOf('/api/v1/files/{file_id}/links', 'post')).toEqual(['Links'])
    expect(tagOf('/api/v1/links/{link_id}/rotate', 'post')).toEqual(['Links'])
    expect(tagOf('/api/v1/uploads/{upload_id}', 'patch')).toEqual(['Uploads'])
    expect(tagOf('/download/{token}', 'get')).toEqual(['Downloads'])
    expect(tagOf('/r/{token}/grant', 'post')).toEqual(['Upload requests'])
    expect(tagOf('/api/v1/upload-requests/{request_id}/files', 'get')).toEqual(['Upload requests'])
    expect(tagOf('/api/v1/webhooks/{webhook_id}/deliveries', 'get')).toEqual(['Webhooks'])
    expect(tagOf('/api/v1/key', 'get')).toEqual(['Keys'])
    expect(tagOf('/api/v1/audit-events', 'get')).toEqual(['Audit'])
    expect(tagOf('/api/v1/stats', 'get')).toEqual(['Stats'])
    expect(tagOf('/healthz', 'get')).toEqual(['Health'])
    // No operation is left in Swagger UI's "default" group, and no group is empty.
    expect(new Set(tags.map(({ tags: names }) => names![0]))).toEqual(new Set(declared))
  })

  it('names every operation', () => {
    const ids = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    )
    expect(ids.sort()).toEqual(
      [
        'DELETE /api/v1/files/{file_id} deleteFile',
        'GET /api/v1/files listFiles',
        'GET /api/v1/files/{file_id} getFile',
        'GET /api/v1/openapi.json getOpenApiDocument',
        'GET /api/v1/stats getStats',
        'GET /download/{token} downloadFile',
        'GET /healthz getHealth',
        'GET /readyz getReadiness',
        'HEAD /download/{token} headDownload',
        'POST /api/v1/files/upload uploadFile',
        'POST /api/v1/files/archive downloadArchive',
        'POST /api/v1/files/delete deleteFiles',
        'PATCH /api/v1/files/{file_id} updateFile',
        'POST /api/v1/files/{file_id}/links createLink',
        'GET /api/v1/files/{file_id}/links listLinks',
        'GET /api/v1/links/{link_id} getLink',
        'PATCH /api/v1/links/{link_id} updateLink',
        'DELETE /api/v1/links/{link_id} deleteLink',
        'POST /api/v1/links/{link_id}/rotate rotateLink',
        'POST /download/{token} grantDownload',
        'GET /download/{token}/{grant} downloadGranted',
        'HEAD /download/{token}/{grant} headDownloadGranted',
        'OPTIONS /api/v1/uploads discoverUploads',
        'OPTIONS /api/v1/uploads/{upload_id} discoverUpload',
        'POST /api/v1/uploads createUpload',
        'HEAD /api/v1/uploads/{upload_id} getUploadOffset',
        'GET /api/v1/uploads/{upload_id} getUpload',
        'PATCH /api/v1/uploads/{upload_id} appendToUpload',
        'DELETE /api/v1/uploads/{upload_id} terminateUpload',
        'GET /api/v1/key getCurrentKey',
        'GET /api/v1/audit-events listAuditEvents',
        'POST /api/v1/webhooks createWebhook',
        'GET /api/v1/webhooks listWebhooks',
        'GET /api/v1/webhooks/{webhook_id} getWebhook',
        'PATCH /api/v1/webhooks/{webhook_id} updateWebhook',
        'DELETE /api/v1/webhooks/{webhook_id} deleteWebhook',
        'POST /api/v1/webhooks/{webhook_id}/rotate-secret rotateWebhookSecret',
        'POST /api/v1/webhooks/{webhook_id}/test testWebhook',
        'GET /api/v1/webhooks/{webhook_id}/deliveries listWebhookDeliveries',
        'POST /api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry retryWebhookDelivery',
        'POST /api/v1/upload-requests createUploadRequest',
        'GET /api/v1/upload-requests listUploadRequests',
        'GET /api/v1/upload-requests/{request_id} getUploadRequest',
        'PATCH /api/v1/upload-requests/{request_id} updateUploadRequest',
        'DELETE /api/v1/upload-requests/{request_id} deleteUploadRequest',
        'POST /api/v1/upload-requests/{request_id}/close closeUploadRequest',
        'GET /api/v1/upload-requests/{request_id}/files listUploadRequestFiles',
        'POST /r/{token}/grant grantUploadRequest',
      ].sort(),
    )
  })

  it('describes the upload body as multipart/form-data with a binary file part', () => {
    const body = operation('/api/v1/files/upload', 'post').requestBody!
    expect(Object.keys(body.content)).toEqual(['multipart/form-data'])
    expect(body.content['multipart/form-data']!.schema).toEqual({ $ref: '#/components/schemas/UploadForm' })
    expect(document.components.schemas.UploadForm!.properties!.file).toMatchObject({ type: 'string', format: 'binary' })
  })

  it('describes downloads: bytes on 200 and 206, 304, the errors, HEAD, and no authentication', () => {
    for (const method of ['get', 'head']) {
      const download = operation('/download/{token}', method)
      expect(download.security).toEqual([])
      // 403 and 409: a file not scanned (yet) for viruses, when scanning is required.
      expect(Object.keys(download.responses).sort()).toEqual(['200', '206', '304', '403', '404', '409', '416', '429', '500', '503'])
      expect(download.responses['200']!.content!['application/octet-stream']!.schema).toMatchObject({ type: 'string', format: 'binary' })
      expect(Object.keys(download.responses['206']!.headers!)).toEqual(
        expect.arrayContaining(['Content-Range', 'ETag', 'Content-Disposition']),
      )
      expect(Object.keys(download.responses['416']!.headers!)).toContain('Content-Range')
    }
  })

  it('marks public operations with security: [] and the others with the bearer key and the scope it needs', () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const isPublic = !path.startsWith('/api/v1/') || path === '/api/v1/openapi.json' || method === 'options'
        const scope = (op as unknown as Record<string, unknown>)['x-required-scope'] as string | undefined
        if (isPublic) expect(op.security, `${method} ${path}`).toEqual([])
        // GET /key takes any valid key; every other operation names its scope (alternatives: one requirement each).
        else if (op.operationId === 'getCurrentKey') expect(op.security).toEqual([{ bearerAuth: [] }])
        else {
          // The tus routes a guest of an upload request may call take its token too.
          const guests = path.startsWith('/api/v1/uploads') && op.operationId !== 'getUpload' ? [{ uploadRequest: [] }] : []
          // "a or b": one requirement each; "a and b": one requirement listing both.
          const [either, ...also] = scope!.split(' and ')
          const requirements = either!.split(' or ').map((one) => ({ bearerAuth: [one, ...also] }))
          expect(op.security, `${method} ${path}`).toEqual([...requirements, ...guests])
        }
      }
    }
  })

  it('names both scopes of the ZIP download, files:read and links:write, in one requirement and in x-required-scope', () => {
    const archive = operation('/api/v1/files/archive', 'post') as Operation & { 'x-required-scope'?: string }
    // One requirement with both roles: a key needs every scope it lists (two requirements would mean either).
    expect(archive.security).toEqual([{ bearerAuth: ['files:read', 'links:write'] }])
    expect(archive['x-required-scope']).toBe('files:read and links:write')
  })

  it('documents the response headers clients rely on', () => {
    const upload = operation('/api/v1/files/upload', 'post').responses
    expect(Object.keys(upload['201']!.headers!)).toEqual(
      expect.arrayContaining(['Location', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
    )
    expect(Object.keys(upload['401']!.headers!)).toContain('WWW-Authenticate')
    expect(Object.keys(upload['401']!.headers!)).not.toContain('RateLimit-Limit')
    expect(Object.keys(upload['429']!.headers!)).toContain('Retry-After')
    expect(Object.keys(upload['503']!.headers!)).toContain('Retry-After')
    expect(Object.keys(upload)).toContain('507')
    for (const id of ['listFiles', 'getFile', 'deleteFile', 'getStats']) {
      const found = Object.values(document.paths)
        .flatMap((item) => Object.values(item))
        .find((op) => op.operationId === id)!
      expect(Object.keys(found.responses), id).toEqual(expect.arrayContaining(['400', '401', '403', '413', '415', '429', '500', '503']))
    }
  })

  it('describes every webhook message as an OpenAPI 3.1 webhook, with the Standard Webhooks headers', () => {
    const webhooks = (
      document as unknown as { webhooks: Record<string, { post: { parameters: Array<{ name: string }>; requestBody: unknown } }> }
    ).webhooks
    expect(Object.keys(webhooks).sort()).toEqual([
      'file.deleted',
      'file.uploaded',
      'link.created',
      'link.downloaded',
      'link.exhausted',
      'link.revoked',
      'link.updated',
      'upload.expired',
      'upload_request.file_received',
      'upload_request.full',
      'webhook.test',
    ])
    for (const [type, item] of Object.entries(webhooks)) {
      expect(
        item.post.parameters.map((parameter) => parameter.name),
        type,
      ).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature'])
    }
    expect(JSON.stringify(webhooks['file.uploaded']!.post.requestBody)).toContain('#/components/schemas/File')
  })

  it('names its schemas (File, Pagination, Stats, Limits, Error) and lists the error codes as an enum', () => {
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'File',
        'Pagination',
        'Stats',
        'Limits',
        'Error',
        'UploadForm',
        'Link',
        'LinkFields',
        'FileChanges',
        'DownloadOffer',
        'DownloadGrant',
      ]),
    )
    const error = document.components.schemas.Error!.properties!.error as { properties: { code: { enum: string[] } } }
    expect([...error.properties.code.enum].sort()).toEqual([...API_ERROR_CODES].sort())
  })

  it('the checked-in client types are generated from this document (npm run openapi:types)', async () => {
    expect(await clientTypes(document)).toBe(await fs.readFile(CLIENT_TYPES_FILE, 'utf8'))
  })

  it('a generated client (openapi-typescript + openapi-fetch) uploads, lists, reads, links, deletes and reads stats', async () => {
    const { apiKey } = await t.createAccount('pro')
    const client = createClient<paths>({ baseUrl: t.url, headers: { Authorization: `Bearer ${apiKey}` } })

    const uploaded = await client.POST('/api/v1/files/upload', {
      body: { file: new Blob(['generated client']) },
      bodySerializer: (body) => {
        const form = new FormData()
        form.append('file', body.file, 'generated.txt')
        return form
      },
    })
    expect(uploaded.response.status).toBe(201)
    const fileId = uploaded.data!.file_id
    expect(uploaded.data).toMatchObject({ success: true, filename: 'generated.txt', size: 16 })

    const listed = await client.GET('/api/v1/files', { params: { query: { page: 1, limit: 10 } } })
    expect(listed.data!.files.map((file) => file.file_id)).toEqual([fileId])
    expect(listed.data!.pagination).toEqual({ page: 1, limit: 10, total: 1, pages: 1, next_before_id: null })

    const detail = await client.GET('/api/v1/files/{file_id}', { params: { path: { file_id: fileId } } })
    expect(detail.data!.file.filename).toBe('generated.txt')

    const stats = await client.GET('/api/v1/stats')
    expect(stats.data!.stats.total_files).toBe(1)

    const created = await client.POST('/api/v1/files/{file_id}/links', {
      params: { path: { file_id: fileId } },
      body: { label: 'generated', max_downloads: 2, expires_in: 3600 },
    })
    expect(created.response.status).toBe(201)
    const link = created.data!.link
    expect(link).toMatchObject({ file_id: fileId, label: 'generated', max_downloads: 2, status: 'active', default: false })
    const changed = await client.PATCH('/api/v1/links/{link_id}', {
      params: { path: { link_id: link.link_id } },
      body: { max_downloads: null },
    })
    expect(changed.data!.link.max_downloads).toBeNull()
    const links = await client.GET('/api/v1/files/{file_id}/links', { params: { path: { file_id: fileId } } })
    expect(links.data!.links.map((item) => item.default)).toEqual([true, false])
    const rotated = await client.POST('/api/v1/links/{link_id}/rotate', { params: { path: { link_id: link.link_id } } })
    expect(rotated.data!.link.url).not.toBe(link.url)
    const revoked = await client.DELETE('/api/v1/links/{link_id}', { params: { path: { link_id: link.link_id } } })
    expect(revoked.data).toEqual({ success: true, message: 'Link revoked.' })
    const renamed = await client.PATCH('/api/v1/files/{file_id}', {
      params: { path: { file_id: fileId } },
      body: { filename: 'renamed.txt' },
    })
    expect(renamed.data!.file).toMatchObject({ filename: 'renamed.txt', expires_at: null })

    const deleted = await client.DELETE('/api/v1/files/{file_id}', { params: { path: { file_id: fileId } } })
    expect(deleted.data).toEqual({ success: true, message: 'File deleted.' })

    const gone = await client.GET('/api/v1/files/{file_id}', { params: { path: { file_id: fileId } } })
    expect(gone.response.status).toBe(404)
    expect(gone.error!.error.code).toBe('not_found')
  })
})

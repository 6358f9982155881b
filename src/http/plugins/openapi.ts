import swagger from '@fastify/swagger'
import { webhookMessages } from '../webhook-messages-openapi.js'
import fp from 'fastify-plugin'
import type { OpenAPIV3_1 as OpenApi } from 'openapi-types'
import {
  WebhookDeliveryObject,
  WebhookObject,
  AuditEventObject,
  CurrentKeyObject,
  DownloadOfferResponse,
  ErrorBody,
  FileObject,
  FileUpdateBody,
  GrantResponse,
  LinkBody,
  LinkObject,
  Limits,
  Pagination,
  Stats,
  UploadForm,
} from '../schemas.js'

/** Schemas that go to `components.schemas` under their title and are referenced from operations. */
const NAMED_SCHEMAS = new Set(
  [
    FileObject,
    ErrorBody,
    Pagination,
    Stats,
    Limits,
    UploadForm,
    LinkObject,
    LinkBody,
    FileUpdateBody,
    DownloadOfferResponse,
    GrantResponse,
    CurrentKeyObject,
    AuditEventObject,
    WebhookObject,
    WebhookDeliveryObject,
  ].map((schema) => (schema as { title?: string }).title),
)

const integerHeader = (description: string) => ({ description, schema: { type: 'integer' as const, minimum: 0 } })
const textHeader = (description: string, required = false) => ({ description, required, schema: { type: 'string' as const } })

/** Every response header a client may rely on (docs/api.md), defined once. */
const HEADERS: Record<string, OpenApi.HeaderObject> = {
  'RateLimit-Limit': integerHeader('Requests allowed in the window that binds first (minute or UTC day).'),
  'RateLimit-Remaining': integerHeader('Requests left in that window.'),
  'RateLimit-Reset': integerHeader('Seconds until that window frees a request.'),
  'Retry-After': { ...integerHeader('Seconds to wait before retrying.'), required: true },
  'Idempotent-Replayed': textHeader('`true` when this is the stored answer of an earlier request with the same Idempotency-Key.'),
  'WWW-Authenticate': textHeader('Always `Bearer`.', true),
  Location: textHeader('`/api/v1/files/{file_id}` of the new file.', true),
  ETag: textHeader('`"<sha256>"` of the content.'),
  'Last-Modified': textHeader('The upload time, as an HTTP date.'),
  'Content-Disposition': textHeader('`attachment` with an ASCII `filename` and the exact name as `filename*`.'),
  'Content-Range': textHeader('`bytes <first>-<last>/<size>` on 206; `bytes */<size>` on 416.'),
  'Accept-Ranges': textHeader('Always `bytes`.'),
  'X-Request-Id': textHeader('The id of the request in the server logs.'),
}

/** What each status means across the API, for responses whose route gave no description. */
const STATUS_DESCRIPTIONS: Record<string, string> = {
  200: 'OK.',
  201: 'Created.',
  400: 'The request is invalid: `missing_file`, `invalid_parameter` or `invalid_request`.',
  401: '`unauthorized`: the key is missing, malformed, unknown, revoked or expired.',
  403: '`plan_not_supported`, `file_too_large` or `daily_upload_limit_exceeded`: about the account; waiting does not help.',
  404: '`not_found`: no such file for this account, or no file behind the link.',
  413: '`invalid_request`: a request body over 1 MiB on an endpoint that takes none.',
  415: '`invalid_request`: a request body of a type the endpoint does not take.',
  416: '`range_not_satisfiable`: the range starts beyond the end of the file.',
  429: '`rate_limited`: a request rate limit; retry after `Retry-After` seconds.',
  500: '`internal_error`: an unexpected failure; the body carries `request_id`.',
  503: '`service_unavailable`: a backend (database, storage, Redis) does not answer; retry after `Retry-After` seconds.',
  507: '`insufficient_storage`: no space left to store the file; nothing was kept.',
}

/**
 * The groups of operations, in the order a reader meets them (Swagger UI shows a section per tag;
 * generated clients name their classes or modules after them). An operation's group follows from
 * its path, here in one place rather than on each route (a file's links, `/files/{file_id}/links`,
 * are Links, not Files). test/openapi checks that every
 * operation gets one, so a new route outside these paths is noticed.
 */
const TAGS: { name: string; description: string; paths: RegExp }[] = [
  {
    name: 'Files',
    description: 'Upload a file in one request, list and find your files, read, rename, re-expire and delete them.',
    paths: /^\/api\/v1\/files(?!\/\{file_id\}\/links)(\/|$)/,
  },
  {
    name: 'Uploads',
    description:
      'Resumable uploads with the tus 1.0 protocol (creation, termination): large files in chunks that survive a dropped connection.',
    paths: /^\/api\/v1\/uploads(\/|$)/,
  },
  {
    name: 'Links',
    description: 'Share links of a file: each with its own URL, expiry, download limit and password; rotate or revoke them.',
    paths: /^\/api\/v1\/(links(\/|$)|files\/\{file_id\}\/links$)/,
  },
  {
    name: 'Downloads',
    description:
      "What a link's URL answers, without a key: the file (with ranges), or for a protected link a page and a short-lived grant.",
    paths: /^\/download\//,
  },
  {
    name: 'Upload requests',
    description: 'Links that let someone without an account send you files; the guest side authenticates with the request itself.',
    paths: /^\/(api\/v1\/upload-requests|r)(\/|$)/,
  },
  {
    name: 'Webhooks',
    description: 'Endpoints that get a signed message when something happens to your files, with their deliveries and retries.',
    paths: /^\/api\/v1\/webhooks(\/|$)/,
  },
  { name: 'Keys', description: 'The API key that makes the call, as the server sees it.', paths: /^\/api\/v1\/keys?(\/|$)/ },
  { name: 'Audit', description: "The account's audit log: who did what, when and from where.", paths: /^\/api\/v1\/audit-events(\/|$)/ },
  { name: 'Stats', description: "The account's usage against its plan's limits.", paths: /^\/api\/v1\/stats(\/|$)/ },
  { name: 'Health', description: 'Liveness and readiness, for load balancers and orchestrators; no key.', paths: /^\/(healthz|readyz)$/ },
  { name: 'Document', description: 'This OpenAPI document.', paths: /^\/api\/v1\/openapi\.json$/ },
]

/** The operation's group by its path; a route that names its own tags keeps them. */
function tagOf(path: string): string[] {
  const tag = TAGS.find((candidate) => candidate.paths.test(path))
  return tag ? [tag.name] : []
}

type Operation = OpenApi.OperationObject
type Responses = Record<string, OpenApi.ResponseObject>

const headerRefs = (...names: string[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]))

/**
 * Completes what route schemas alone cannot say: named schemas in components, the response headers
 * of every status, and which operations are public. Rules here mirror the code they describe:
 * authenticate.ts (RateLimit-*, 401, 429), error-handler.ts (Retry-After, WWW-Authenticate),
 * download.ts (download headers).
 */
function completeDocument(document: OpenApi.Document): OpenApi.Document {
  const schemas: Record<string, OpenApi.SchemaObject> = {}
  const name = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(name)
    if (!node || typeof node !== 'object') return node
    const named = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, name(value)]))
    const title = (node as { title?: unknown }).title
    if (typeof title === 'string' && NAMED_SCHEMAS.has(title) && 'type' in node) {
      schemas[title] = named as OpenApi.SchemaObject
      return { $ref: `#/components/schemas/${title}` }
    }
    return named
  }
  const paths: OpenApi.PathsObject = {}
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const operations: Record<string, Operation> = {}
    for (const [method, operation] of Object.entries(item as Record<string, Operation>)) {
      // Fastify answers HEAD for every GET route; only the download's and tus's HEAD are part of the API.
      if (method === 'head' && !path.startsWith('/download/') && !path.startsWith('/api/v1/uploads/')) continue
      const named = name(operation) as Operation
      // @fastify/swagger suffixes the id of a HEAD route; ours has its own id already.
      if (method === 'head') named.operationId = named.operationId?.replace(/-head$/, '')
      if (!named.tags?.length) named.tags = tagOf(path)
      operations[method] = decorate(named)
    }
    // A path left with no operation (a hidden route's HEAD twin) is not part of the document.
    if (Object.keys(operations).length > 0) paths[path] = operations
  }
  return {
    ...document,
    tags: TAGS.map(({ name: tagName, description }) => ({ name: tagName, description })),
    paths,
    webhooks: webhookMessages(),
    components: { ...document.components, schemas: { ...document.components?.schemas, ...schemas }, headers: HEADERS },
  }
}

/** The operations that take an Idempotency-Key (http/plugins/idempotency.ts). */
const IDEMPOTENT_OPERATIONS = new Set(['uploadFile', 'createUpload', 'createLink', 'createWebhook'])

function decorate(operation: Operation): Operation {
  const authenticated = (operation.security ?? []).length > 0
  const responses = operation.responses as Responses
  for (const [status, response] of Object.entries(responses)) {
    const headers: Record<string, unknown> = { ...headerRefs('X-Request-Id'), ...response.headers }
    if (authenticated && status !== '401') Object.assign(headers, headerRefs('RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'))
    if (status === '401') Object.assign(headers, headerRefs('WWW-Authenticate'))
    if (status === '429' || status === '503') Object.assign(headers, headerRefs('Retry-After'))
    if (status === '201') Object.assign(headers, headerRefs('Location'))
    if (IDEMPOTENT_OPERATIONS.has(operation.operationId ?? '')) {
      if (status.startsWith('2')) Object.assign(headers, headerRefs('Idempotent-Replayed'))
      if (status === '409') Object.assign(headers, headerRefs('Retry-After'))
    }
    if (operation.operationId === 'downloadFile' || operation.operationId === 'headDownload') {
      if (['200', '206', '304'].includes(status))
        Object.assign(headers, headerRefs('ETag', 'Last-Modified', 'Content-Disposition', 'Accept-Ranges'))
      if (status === '206' || status === '416') Object.assign(headers, headerRefs('Content-Range'))
    }
    const description =
      response.description === 'Default Response' ? (STATUS_DESCRIPTIONS[status] ?? response.description) : response.description
    responses[status] = { ...response, description, headers: headers as Record<string, OpenApi.HeaderObject> }
  }
  return operation
}

/** The OpenAPI 3.1 document, generated from the route schemas. */
export default fp(
  async (app) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Fileshare API',
          version: '1.0.0',
          description: 'Upload, list, inspect and delete files; read account statistics. Every error has the body `Error`.',
          license: { name: 'MIT', identifier: 'MIT' },
        },
        servers: [{ url: app.config.publicUrl }],
        components: {
          securitySchemes: {
            bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: fsk_…' },
            uploadRequest: {
              type: 'http',
              scheme: 'UploadRequest',
              description:
                "A guest of an upload request: `Authorization: UploadRequest <token>` (the last segment of the request's url), " +
                'and `Fileshare-Upload-Grant: <grant>` when it has a password. Only the tus routes that create, resume and terminate uploads take it.',
            },
          },
        },
      },
      exposeHeadRoutes: true,
      transformObject: (generated) =>
        'openapiObject' in generated ? completeDocument(generated.openapiObject as OpenApi.Document) : generated.swaggerObject,
    })
  },
  { name: 'openapi', dependencies: ['backends'] },
)

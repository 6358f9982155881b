import { actorOf } from '../actor.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { InvalidRequestError, UnsupportedMediaTypeError, UploadLengthExceededError } from '../../errors.js'
import type { ResumableUpload } from '../../services/resumable-uploads.js'
import { requestedFileLifetime } from '../expires-in-header.js'
import { sendError } from '../plugins/error-handler.js'
import { countRequest, showLimits } from '../plugins/authenticate.js'
import { formatUtcTime } from '../../lib/utc-time.js'
import { presentFile } from '../present-file.js'
import { continueIfExpected } from '../refused-body.js'
import { authErrors, ErrorBody, IDEMPOTENCY_KEY_HEADER, NoContent, UploadIdParams, UploadStatusResponse } from '../schemas.js'
import {
  capabilityHeaders,
  header,
  checkTusVersion,
  creationLength,
  httpDate,
  integerHeader,
  OFFSET_OCTET_STREAM,
  parseChecksum,
  parseMetadata,
  uploadLengthHeader,
} from '../tus-headers.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** This HEAD, PATCH or DELETE spent one of its upload's free requests instead of counting. */
    freeUploadRequest: boolean
  }
}

export interface UploadsRoutesOptions {
  /**
   * true under /api/v1: creating an upload counts against the rate limits like any call, while HEAD,
   * PATCH and DELETE on an upload the account owns spend the upload's free requests first. The
   * dashboard's requests are not rate limited at all (false).
   */
  countsRequests: boolean
}

const tusErrors = { 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, 410: ErrorBody, 412: ErrorBody, 413: ErrorBody, ...authErrors }

function isOffsetStream(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === OFFSET_OCTET_STREAM
}

/** The tus state headers of an upload's answers. */
function uploadHeaders(reply: FastifyReply, upload: ResumableUpload): void {
  reply.header('Upload-Offset', String(upload.offset))
  if (upload.length === null) reply.header('Upload-Defer-Length', '1')
  else reply.header('Upload-Length', String(upload.length))
  if (upload.file) reply.header('Fileshare-File-Id', String(upload.file.id))
  else reply.header('Upload-Expires', httpDate(upload.expiresAt))
  reply.header('Cache-Control', 'no-store')
}

/** OPTIONS: what this server speaks (tus discovery, and a browser's CORS preflight). No key needed. */
export const uploadDiscoveryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const maxSize = Math.max(...Object.values(app.config.plans).map((plan) => plan.max_file_size))
  const capabilities = capabilityHeaders(maxSize)
  for (const url of ['/uploads', '/uploads/:upload_id']) {
    app.options(
      url,
      {
        schema: {
          operationId: url === '/uploads' ? 'discoverUploads' : 'discoverUpload',
          summary: 'tus capabilities (and CORS preflight); no key needed',
          security: [],
          response: { 204: NoContent },
        },
      },
      async (_request, reply) => reply.code(204).headers(capabilities).send(),
    )
  }
}

/**
 * Resumable uploads: the tus 1.0.0 protocol (core, creation, creation-with-upload,
 * creation-defer-length, termination, expiration, checksum) and GET for our JSON view. Parses the
 * protocol's headers, calls ResumableUploadService, and answers with the protocol's headers.
 */
export const uploadsRoutes: FastifyPluginAsyncTypebox<UploadsRoutesOptions> = async (app, { countsRequests }) => {
  const uploads = app.services.resumableUploads
  // The bytes of POST and PATCH are streamed by the service, never parsed; a body of another type
  // there is refused by the route (415 unsupported_media_type). Other methods take bodies as every
  // other endpoint does (JSON or text up to 1 MiB, read and ignored; any other type is a 415).
  app.addContentTypeParser(OFFSET_OCTET_STREAM, (_request, _payload, done) => done(null))
  app.addContentTypeParser('*', (request, _payload, done) => {
    if (request.method === 'POST' || request.method === 'PATCH') return done(null)
    done(Object.assign(new Error(`Unsupported Media Type: ${request.headers['content-type'] ?? ''}`), { statusCode: 415 }))
  })
  app.decorateRequest('freeUploadRequest', false)
  // tus answers 413 for a file over the limit (the multipart upload answers 403).
  app.setErrorHandler(async (error, request, reply) => {
    let answer = error as Error
    // A refused PATCH stored nothing: like an empty one, it counts even when it was free.
    if (request.freeUploadRequest && request.method === 'PATCH') {
      try {
        await countAsWell(request, reply)
      } catch (limited) {
        answer = limited as Error
      }
    }
    return sendError(request, reply, answer, { file_too_large: 413 })
  })

  // Relative to the public URL's path, so that it still works behind a proxy that serves us under one.
  const basePath = `${new URL(app.config.publicUrl).pathname.replace(/\/+$/, '')}${app.prefix}/uploads`
  const owner = (request: FastifyRequest) => ({
    accountId: request.principal.account.id,
    limits: request.principal.limits,
    actor: actorOf(request),
    uploadRequest: request.principal.uploadRequest,
  })

  /**
   * HEAD, PATCH and DELETE on an owned upload spend one of its free requests; anything else counts.
   * A hook of their routes, right after authentication: before the body is parsed or the id
   * checked, so that no refusal escapes both.
   */
  const spendOrCount = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const id = (request.params as { upload_id?: string }).upload_id ?? ''
    if (await uploads.takeFreeRequest(request.principal.account.id, id)) {
      request.freeUploadRequest = true
      await showLimits(app, request, reply)
    } else {
      await countRequest(app, request, reply)
    }
  }
  /** Counts a request that had been free after all (once). */
  const countAsWell = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    request.freeUploadRequest = false
    await countRequest(app, request, reply)
  }
  const deferred = countsRequests ? { config: { rateLimit: 'deferred' as const }, onRequest: spendOrCount } : {}

  app.post(
    '/uploads',
    {
      config: {
        scope: 'files:write',
        guests: true,
        continuesItself: true,
        // What is known before the body: the declared length (or its deferral), the metadata, the lifetime.
        idempotency: (request) =>
          ['upload-length', 'upload-defer-length', 'upload-metadata', 'fileshare-expires-in']
            .map((name) => `${name}=${request.headers[name] ?? ''}`)
            .join(' '),
      },
      schema: {
        operationId: 'createUpload',
        headers: Type.Object(IDEMPOTENCY_KEY_HEADER),
        summary: 'Create a resumable upload (tus creation, creation-with-upload, creation-defer-length)',
        description:
          'Headers: `Tus-Resumable: 1.0.0`, `Upload-Length` or `Upload-Defer-Length: 1`, optional `Upload-Metadata` (`filename`, `expires_in`). ' +
          '`Fileshare-Expires-In: <seconds>` (or the metadata `expires_in`) gives the file a lifetime from its completion. ' +
          'A guest of an upload request authenticates with `Authorization: UploadRequest <token>` (and `Fileshare-Upload-Grant` ' +
          'when the request has a password), must send `Upload-Length`, and may create, resume and terminate only its own uploads. ' +
          'A body of type application/offset+octet-stream is the first chunk. Answers 201 with `Location`, `Upload-Offset` and `Upload-Expires`.',
        response: { 201: NoContent, ...tusErrors, 422: ErrorBody, 415: ErrorBody, 460: ErrorBody, 507: ErrorBody },
      },
    },
    async (request, reply) => {
      checkTusVersion(request, reply)
      const length = creationLength(request)
      const metadata = header(request, 'upload-metadata') ?? ''
      const metadataPairs = parseMetadata(metadata)
      const filename = metadataPairs.get('filename')
      const fileLifetimeSeconds = requestedFileLifetime(request.headers, metadataPairs)
      const contentLength = integerHeader(request, 'Content-Length')
      const hasBody = (contentLength ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined
      if (hasBody && !isOffsetStream(header(request, 'content-type'))) throw new UnsupportedMediaTypeError()
      // An empty upload is a file at once: a first chunk could only go past its length.
      if (length === 0 && (contentLength ?? 0) > 0) throw new UploadLengthExceededError(0)
      const principal = owner(request)
      let upload = await uploads.create(principal, { length, metadata, filename, fileLifetimeSeconds })
      if (hasBody) {
        // creation-with-upload: the creation stands or falls with its first chunk, whose client
        // would not know the upload's Location to resume it otherwise.
        try {
          upload = (
            await uploads.append(principal, upload.id, {
              offset: 0,
              source: request.raw,
              contentLength,
              checksum: parseChecksum(header(request, 'upload-checksum')),
              beforeRead: () => continueIfExpected(request.raw, reply.raw),
            })
          ).upload
        } catch (error) {
          await uploads.terminate(principal.accountId, upload.id, principal.actor).catch(() => {})
          throw error
        }
      }
      uploadHeaders(reply, upload)
      return reply.code(201).header('Location', `${basePath}/${upload.id}`).send(undefined)
    },
  )

  // Declared before the GET of the same URL: Fastify then leaves this HEAD alone.
  app.head(
    '/uploads/:upload_id',
    {
      ...deferred,
      config: { ...deferred.config, scope: 'files:write', guests: true },
      schema: {
        operationId: 'getUploadOffset',
        summary: 'The offset of a resumable upload (tus HEAD)',
        params: UploadIdParams,
        response: { 200: NoContent, ...tusErrors },
      },
    },
    async (request, reply) => {
      checkTusVersion(request, reply)
      const upload = await uploads.status(request.principal.account.id, request.params.upload_id, actorOf(request))
      uploadHeaders(reply, upload)
      if (upload.metadata) reply.header('Upload-Metadata', upload.metadata)
      return reply.code(200).send()
    },
  )

  app.get(
    '/uploads/:upload_id',
    {
      config: { scope: ['files:read', 'files:write'] },
      schema: {
        operationId: 'getUpload',
        summary: 'Where a resumable upload stands, and its file once complete',
        params: UploadIdParams,
        response: { 200: UploadStatusResponse, 404: ErrorBody, 410: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      const upload = await uploads.status(request.principal.account.id, request.params.upload_id, actorOf(request))
      return {
        success: true as const,
        upload: {
          offset: upload.offset,
          length: upload.length,
          expires_at: formatUtcTime(upload.expiresAt),
          file: upload.file ? presentFile(upload.file, app.config.linkBaseUrl) : null,
        },
      }
    },
  )

  app.patch(
    '/uploads/:upload_id',
    {
      ...deferred,
      config: { scope: 'files:write', ...deferred.config, continuesItself: true, guests: true },
      schema: {
        operationId: 'appendToUpload',
        summary: 'Append a chunk at Upload-Offset (tus PATCH)',
        description:
          'Headers: `Tus-Resumable: 1.0.0`, `Content-Type: application/offset+octet-stream`, `Upload-Offset`, optional ' +
          '`Upload-Checksum` (sha1 or sha256) and, for a deferred length, `Upload-Length`. Answers 204 with the new `Upload-Offset`; ' +
          'the chunk that completes the upload also gets `Fileshare-File-Id`.',
        params: UploadIdParams,
        response: { 204: NoContent, ...tusErrors, 415: ErrorBody, 423: ErrorBody, 460: ErrorBody, 507: ErrorBody },
      },
    },
    async (request, reply) => {
      const id = request.params.upload_id
      checkTusVersion(request, reply)
      if (!isOffsetStream(header(request, 'content-type'))) throw new UnsupportedMediaTypeError()
      const offset = integerHeader(request, 'Upload-Offset')
      if (offset === undefined) throw new InvalidRequestError('A PATCH needs Upload-Offset.')
      const length = uploadLengthHeader(request)
      const { upload, received, declared } = await uploads.append(owner(request), id, {
        offset,
        length,
        source: request.raw,
        contentLength: integerHeader(request, 'Content-Length'),
        checksum: parseChecksum(header(request, 'upload-checksum')),
        beforeRead: () => continueIfExpected(request.raw, reply.raw),
      })
      // A chunk that moved nothing, declared nothing and completed nothing is counted even with
      // free requests left: empty PATCHes must not become a way around the limits.
      if (request.freeUploadRequest && received === 0 && !declared && !upload.file) await countAsWell(request, reply)
      uploadHeaders(reply, upload)
      return reply.code(204).send()
    },
  )

  app.delete(
    '/uploads/:upload_id',
    {
      ...deferred,
      config: { ...deferred.config, scope: 'files:write', guests: true },
      schema: {
        operationId: 'terminateUpload',
        summary: 'Terminate an unfinished upload (tus termination): its bytes go, its daily upload slot comes back',
        params: UploadIdParams,
        // 415: a body of a type other than JSON or text (read and ignored otherwise).
        response: { 204: NoContent, ...tusErrors, 415: ErrorBody, 423: ErrorBody },
      },
    },
    async (request, reply) => {
      checkTusVersion(request, reply)
      await uploads.terminate(request.principal.account.id, request.params.upload_id, actorOf(request))
      return reply.code(204).send()
    },
  )
}

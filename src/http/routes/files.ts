import { actorOf } from '../actor.js'
import multipart from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { FileTooLargeError, InvalidParameterError, InvalidRequestError, MissingFileError } from '../../errors.js'
import { requestedFileLifetime } from '../expires-in-header.js'
import { integerParameters } from '../integer-parameters.js'
import { fileListParameters, FileListQuery, listingOf } from '../file-list-query.js'
import { pagesByFileId } from '../../services/files.js'
import { jsonFieldsValidator } from '../json-fields-validator.js'
import { MULTIPART_FRAMING_ALLOWANCE, multipartBoundary, receiveFilePart, watchCloseDelimiter } from '../multipart-upload.js'
import { presentFile } from '../present-file.js'
import { continueIfExpected } from '../refused-body.js'
import {
  authErrors,
  bodyErrors,
  DeleteResponse,
  DetailResponse,
  ErrorBody,
  FileIdParams,
  FileUpdateBody,
  IDEMPOTENCY_KEY_HEADER,
  idempotencyErrors,
  LIST_DEFAULTS,
  ListResponse,
  UploadForm,
  UploadResponse,
} from '../schemas.js'

const upload: FastifyPluginAsyncTypebox = async (app) => {
  // In this scope only multipart bodies are parsed; any other body is left unread and refused.
  app.removeAllContentTypeParsers()
  await app.register(multipart, {
    // busboy's count limits stall a pending file stream when hit (the request is unpiped), so the
    // part count is enforced in the handler's loop instead; the file size by the blob store.
    limits: { fileSize: Infinity, files: Infinity, parts: Infinity, fields: Infinity, fieldSize: 1024 * 1024, headerPairs: 100 },
  })
  app.addContentTypeParser('*', (_request, _payload, done) => done(null))

  app.post(
    '/files/upload',
    {
      config: {
        scope: 'files:write',
        continuesItself: true,
        // What is known before the body: its declared size, and the lifetime asked for.
        idempotency: (request) =>
          `content-length=${request.headers['content-length'] ?? ''} expires-in=${request.headers['fileshare-expires-in'] ?? ''}`,
        // The body is documented, not validated: the handler streams it through its own parser.
        swaggerTransform: ({ schema, url }) => ({ schema: { ...schema, body: UploadForm }, url }),
      },
      schema: {
        operationId: 'uploadFile',
        summary: 'Upload a file',
        description:
          'multipart/form-data with exactly one file part named `file`; other fields are ignored. `Fileshare-Expires-In: <seconds>` ' +
          '(1 to 315360000) gives the file a lifetime: from then on it is gone for everyone.',
        headers: Type.Object({
          'fileshare-expires-in': Type.Optional(Type.String({ description: 'Seconds (1 to 315360000) until the file expires.' })),
          ...IDEMPOTENCY_KEY_HEADER,
        }),
        consumes: ['multipart/form-data'],
        response: { 201: UploadResponse, 400: ErrorBody, ...idempotencyErrors, ...authErrors, 507: ErrorBody },
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) throw new MissingFileError()
      const boundary = multipartBoundary(request.headers['content-type'])
      if (boundary === undefined) {
        throw new InvalidRequestError('The multipart boundary is missing or invalid: 1 to 70 characters (RFC 2046).')
      }
      const { principal } = request
      const owner = { accountId: principal.account.id, limits: principal.limits, actor: actorOf(request) }
      const declaredLength = Number(request.headers['content-length'])
      if (declaredLength > owner.limits.maxFileSize + MULTIPART_FRAMING_ALLOWANCE) {
        throw new FileTooLargeError(owner.limits.maxFileSize)
      }
      // Where scanning is required, a body declared larger than can be scanned is refused before it is read.
      app.services.scanPolicy.checkSize(declaredLength - MULTIPART_FRAMING_ALLOWANCE)
      const lifetimeSeconds = requestedFileLifetime(request.headers)
      const { files } = app.services
      // The declared body (a little more than the file) is reserved before it is read: an upload
      // that cannot fit the storage quota is refused before its client sends it.
      const declared = Number.isSafeInteger(declaredLength)
        ? { upTo: declaredLength, atLeast: Math.max(0, declaredLength - MULTIPART_FRAMING_ALLOWANCE) }
        : undefined
      const reservation = await files.reserve(owner, declared)
      let staged
      try {
        continueIfExpected(request.raw, reply.raw)
        // Both start listening before the body flows, which is a tick after request.parts() pipes it.
        const parts = request.parts()
        const closeDelimiterArrived = watchCloseDelimiter(request.raw, boundary)
        staged = await receiveFilePart(
          request.raw,
          parts,
          (source, filename) => files.stage(owner, source, filename, undefined, reservation),
          (upload) => files.discard(upload),
          closeDelimiterArrived,
        )
      } catch (error) {
        await reservation.release().catch((releaseError: unknown) => request.log.error({ err: releaseError }, 'reservation not released'))
        throw error
      }
      const file = presentFile(await files.commit(staged, { lifetimeSeconds }), app.config.linkBaseUrl)
      return reply
        .code(201)
        .header('Location', `/api/v1/files/${file.file_id}`)
        .send({ success: true, ...file })
    },
  )
}

export const filesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(upload)

  app.get(
    '/files',
    {
      config: { scope: 'files:read' },
      preValidation: fileListParameters(),
      schema: {
        operationId: 'listFiles',
        summary: 'List files, newest first, or searched, filtered and sorted',
        description:
          '`q` keeps the files whose filename contains it (A to Z in either case); `type` those of a media type, `state` those ' +
          'expiring, with expired links or from an upload request (each repeatable: any of its values). `sort` and `order` ' +
          'choose the order, ties by file_id. Page with `page`, or stably with `before_id` (sort=upload_date only). ' +
          '`pagination.total` counts the files listed.',
        querystring: FileListQuery,
        response: { 200: ListResponse, ...bodyErrors, ...authErrors },
      },
    },
    async (request) => {
      const { page = LIST_DEFAULTS.page, limit = LIST_DEFAULTS.limit, before_id: beforeId } = request.query
      const accountId = request.principal.account.id
      const listing = listingOf(request.query)
      if (beforeId !== undefined) {
        // Schema defaults fill in `page`: whether the client sent one is in the URL.
        if (new URLSearchParams(request.url.split('?')[1] ?? '').has('page')) {
          throw new InvalidParameterError('page and before_id cannot be given together; before_id pages on its own.')
        }
        if (!pagesByFileId(listing)) {
          throw new InvalidParameterError(
            `before_id pages only with sort=upload_date (either order); with sort=${listing.sort}, page with page.`,
          )
        }
        const { files, total, nextBeforeId } = await app.services.files.listBefore(accountId, beforeId, limit, listing)
        return {
          success: true as const,
          files: files.map((file) => presentFile(file, app.config.linkBaseUrl)),
          pagination: { page: null, limit, total, pages: Math.ceil(total / limit), next_before_id: nextBeforeId },
        }
      }
      const { files, total, nextBeforeId } = await app.services.files.list(accountId, page, limit, listing)
      return {
        success: true as const,
        files: files.map((file) => presentFile(file, app.config.linkBaseUrl)),
        pagination: { page, limit, total, pages: Math.ceil(total / limit), next_before_id: nextBeforeId },
      }
    },
  )

  app.get(
    '/files/:file_id',
    {
      config: { scope: 'files:read' },
      preValidation: integerParameters('params', FileIdParams),
      schema: {
        operationId: 'getFile',
        summary: 'Read the details of one file',
        params: FileIdParams,
        response: { 200: DetailResponse, ...bodyErrors, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      const file = await app.services.files.describe(request.principal.account.id, request.params.file_id)
      return { success: true as const, file: presentFile(file, app.config.linkBaseUrl) }
    },
  )

  app.patch(
    '/files/:file_id',
    {
      validatorCompiler: jsonFieldsValidator,
      config: { scope: 'files:write', bodyFieldsAreParameters: true },
      preValidation: integerParameters('params', FileIdParams),
      schema: {
        operationId: 'updateFile',
        summary: 'Rename a file, or set or remove its expiry',
        description:
          "`expires_in` (seconds) or `expires_at` (UTC; null removes the expiry), and `filename` (made safe as an upload's name). " +
          'From its expiry on, a file is gone for everyone: its links and API calls answer 404.',
        params: FileIdParams,
        body: FileUpdateBody,
        response: { 200: DetailResponse, ...bodyErrors, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      const file = await app.services.files.update(request.principal.account.id, request.params.file_id, request.body, actorOf(request))
      return { success: true as const, file: presentFile(file, app.config.linkBaseUrl) }
    },
  )

  app.delete(
    '/files/:file_id',
    {
      config: { scope: 'files:delete' },
      preValidation: integerParameters('params', FileIdParams),
      schema: {
        operationId: 'deleteFile',
        summary: 'Delete a file; its public link stops working at once',
        params: FileIdParams,
        response: { 200: DeleteResponse, ...bodyErrors, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      await app.services.files.delete(request.principal.account.id, request.params.file_id, actorOf(request))
      return { success: true as const, message: 'File deleted.' }
    },
  )
}

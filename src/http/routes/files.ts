import multipart from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { FileTooLargeError, InvalidRequestError, MissingFileError } from '../../errors.js'
import { requestedFileLifetime } from '../expires-in-header.js'
import { integerParameters } from '../integer-parameters.js'
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
  LIST_DEFAULTS,
  ListQuery,
  ListResponse,
  UploadForm,
  UploadResponse,
} from '../schemas.js'

const security = [{ bearerAuth: [] }]

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
        continuesItself: true,
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
        }),
        consumes: ['multipart/form-data'],
        security,
        response: { 201: UploadResponse, 400: ErrorBody, ...authErrors, 507: ErrorBody },
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) throw new MissingFileError()
      const boundary = multipartBoundary(request.headers['content-type'])
      if (boundary === undefined) {
        throw new InvalidRequestError('The multipart boundary is missing or invalid: 1 to 70 characters (RFC 2046).')
      }
      const { principal } = request
      const owner = { accountId: principal.account.id, limits: principal.limits }
      const declaredLength = Number(request.headers['content-length'])
      if (declaredLength > owner.limits.maxFileSize + MULTIPART_FRAMING_ALLOWANCE) {
        throw new FileTooLargeError(owner.limits.maxFileSize)
      }
      const lifetimeSeconds = requestedFileLifetime(request.headers)
      continueIfExpected(request.raw, reply.raw)

      const { files } = app.services
      // Both start listening before the body flows, which is a tick after request.parts() pipes it.
      const parts = request.parts()
      const closeDelimiterArrived = watchCloseDelimiter(request.raw, boundary)
      const staged = await receiveFilePart(
        request.raw,
        parts,
        (source, filename) => files.stage(owner, source, filename),
        (upload) => files.discard(upload),
        closeDelimiterArrived,
      )
      const file = presentFile(await app.services.files.commit(staged, { lifetimeSeconds }), app.config.linkBaseUrl)
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
      preValidation: integerParameters('query', ListQuery),
      schema: {
        operationId: 'listFiles',
        summary: 'List files, newest first',
        querystring: ListQuery,
        security,
        response: { 200: ListResponse, ...bodyErrors, ...authErrors },
      },
    },
    async (request) => {
      const { page = LIST_DEFAULTS.page, limit = LIST_DEFAULTS.limit } = request.query
      const { files, total } = await app.services.files.list(request.principal.account.id, page, limit)
      return {
        success: true as const,
        files: files.map((file) => presentFile(file, app.config.linkBaseUrl)),
        pagination: { page, limit, total, pages: Math.ceil(total / limit) },
      }
    },
  )

  app.get(
    '/files/:file_id',
    {
      preValidation: integerParameters('params', FileIdParams),
      schema: {
        operationId: 'getFile',
        summary: 'Read the details of one file',
        params: FileIdParams,
        security,
        response: { 200: DetailResponse, ...bodyErrors, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      const file = await app.services.files.get(request.principal.account.id, request.params.file_id)
      return { success: true as const, file: presentFile(file, app.config.linkBaseUrl) }
    },
  )

  app.patch(
    '/files/:file_id',
    {
      validatorCompiler: jsonFieldsValidator,
      config: { bodyFieldsAreParameters: true },
      preValidation: integerParameters('params', FileIdParams),
      schema: {
        operationId: 'updateFile',
        summary: 'Rename a file, or set or remove its expiry',
        description:
          "`expires_in` (seconds) or `expires_at` (UTC; null removes the expiry), and `filename` (made safe as an upload's name). " +
          'From its expiry on, a file is gone for everyone: its links and API calls answer 404.',
        params: FileIdParams,
        body: FileUpdateBody,
        security,
        response: { 200: DetailResponse, ...bodyErrors, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      const file = await app.services.files.update(request.principal.account.id, request.params.file_id, request.body)
      return { success: true as const, file: presentFile(file, app.config.linkBaseUrl) }
    },
  )

  app.delete(
    '/files/:file_id',
    {
      preValidation: integerParameters('params', FileIdParams),
      schema: {
        operationId: 'deleteFile',
        summary: 'Delete a file; its public link stops working at once',
        params: FileIdParams,
        security,
        response: { 200: DeleteResponse, ...bodyErrors, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      await app.services.files.delete(request.principal.account.id, request.params.file_id)
      return { success: true as const, message: 'File deleted.' }
    },
  )
}

import { PassThrough } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import multipart from '@fastify/multipart'
import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AppError, FileTooLargeError, InvalidParameterError, InvalidRequestError, MissingFileError } from '../../errors.js'
import type { StagedUpload } from '../../services/files.js'
import { presentFile } from '../present-file.js'
import {
  authErrors,
  DeleteResponse,
  DetailResponse,
  ErrorBody,
  FileIdParams,
  LIST_DEFAULTS,
  ListQuery,
  ListResponse,
  UploadResponse,
} from '../schemas.js'

/** Room for the multipart boundaries and part headers around the file's bytes. */
export const MULTIPART_FRAMING_ALLOWANCE = 64 * 1024
/** Parts (fields and files) one upload request may carry; the rest are ignored fields anyway. */
const MAX_PARTS = 100

const security = [{ bearerAuth: [] }]

/**
 * Ajv's type coercion would read '1e1', '0x10', '+5', ' 5' or '5.0' as integers; the API takes
 * plain decimal digits only. Runs before schema validation, after the authentication checks.
 */
function plainIntegers(source: 'params' | 'query', names: readonly string[]) {
  return async (request: FastifyRequest) => {
    const values = request[source] as Record<string, unknown>
    for (const name of names) {
      const value = values[name]
      if (typeof value === 'string' && !/^[1-9][0-9]*$/.test(value)) {
        throw new InvalidParameterError(`${name} must be a positive integer, got "${value}".`)
      }
    }
  }
}

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
      schema: {
        summary: 'Upload a file',
        description: 'multipart/form-data with exactly one file part named `file`; other fields are ignored.',
        consumes: ['multipart/form-data'],
        security,
        response: { 201: UploadResponse, 400: ErrorBody, ...authErrors, 507: ErrorBody },
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) throw new MissingFileError()
      if (!MULTIPART_BOUNDARY.test(request.headers['content-type'] ?? '')) {
        throw new InvalidRequestError('The multipart boundary is missing or invalid: 1 to 70 characters (RFC 2046).')
      }
      const { principal } = request
      const owner = { accountId: principal.account.id, limits: principal.limits }
      const declaredLength = Number(request.headers['content-length'])
      if (declaredLength > owner.limits.maxFileSize + MULTIPART_FRAMING_ALLOWANCE) {
        throw new FileTooLargeError(owner.limits.maxFileSize)
      }

      let staged: StagedUpload | undefined
      try {
        let partCount = 0
        for await (const part of request.parts()) {
          if (++partCount > MAX_PARTS) {
            if (part.type === 'file') part.file.resume()
            throw new InvalidRequestError(`A multipart body may carry at most ${MAX_PARTS} parts.`)
          }
          if (part.type !== 'file') continue
          if (part.fieldname !== 'file') {
            part.file.resume()
          } else if (staged) {
            part.file.resume()
            throw new InvalidRequestError('The request must carry exactly one file part named "file".')
          } else {
            // A body cut off inside this part may already have ended it: the parser destroys the
            // stream without an error (and ends the iteration), so it must be caught here.
            if (part.file.destroyed) throw new InvalidRequestError('The multipart body ends inside the file part.')
            // From now on a pipeline listens, so a cut that happens while the daily slot is being
            // reserved still fails the upload instead of leaving it waiting for bytes.
            const source = new PassThrough()
            pipeline(part.file, source).catch((error) => source.destroy(error))
            staged = await app.services.files.stage(owner, source, part.filename)
          }
        }
      } catch (error) {
        if (staged) await app.services.files.discard(staged)
        throw asMultipartError(error)
      }
      if (!staged) throw new MissingFileError()

      const file = presentFile(await app.services.files.commit(staged), app.config.linkBaseUrl)
      return reply
        .code(201)
        .header('Location', `/api/v1/files/${file.file_id}`)
        .send({ success: true, ...file })
    },
  )
}

/**
 * A boundary RFC 2046 allows: 1 to 70 of its characters, quoted or not (space only inside quotes,
 * never last). The parser would take an empty one and cut the body at the wrong places.
 */
const MULTIPART_BOUNDARY =
  /;\s*boundary=(?:"[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]"|[0-9A-Za-z'()+_,\-./:=?]{1,70})\s*(?:;|$)/i

/** Parser failures are the client's (400); storage failures keep their own error. */
function asMultipartError(error: unknown): unknown {
  if (error instanceof AppError) return error
  const { code, message } = error as { code?: string; message?: string }
  const fromParser = (code ?? '').startsWith('FST_') || /multipart|boundary|unexpected end|malformed|part/i.test(message ?? '')
  return fromParser ? new InvalidRequestError(`The multipart body is malformed: ${message}`) : error
}

export const filesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(upload)

  app.get(
    '/files',
    {
      preValidation: plainIntegers('query', ['page', 'limit']),
      schema: {
        summary: 'List files, newest first',
        querystring: ListQuery,
        security,
        response: { 200: ListResponse, 400: ErrorBody, ...authErrors },
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
      preValidation: plainIntegers('params', ['file_id']),
      schema: {
        summary: 'Read the details of one file',
        params: FileIdParams,
        security,
        response: { 200: DetailResponse, 400: ErrorBody, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      const file = await app.services.files.get(request.principal.account.id, request.params.file_id)
      return { success: true as const, file: presentFile(file, app.config.linkBaseUrl) }
    },
  )

  app.delete(
    '/files/:file_id',
    {
      preValidation: plainIntegers('params', ['file_id']),
      schema: {
        summary: 'Delete a file; its public link stops working at once',
        params: FileIdParams,
        security,
        response: { 200: DeleteResponse, 400: ErrorBody, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      await app.services.files.delete(request.principal.account.id, request.params.file_id)
      return { success: true as const, message: 'File deleted.' }
    },
  )
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { UploadRequestRow } from '../../db/schema.js'
import { actorOf } from '../actor.js'
import { canonicalBody } from '../canonical-body.js'
import { emptyBodyIsNoFields } from '../empty-body.js'
import { integerParameters } from '../integer-parameters.js'
import { jsonFieldsValidator } from '../json-fields-validator.js'
import { presentFile } from '../present-file.js'
import {
  authErrors,
  bodyErrors,
  ErrorBody,
  IDEMPOTENCY_KEY_HEADER,
  idempotencyErrors,
  UploadRequestBody,
  UploadRequestFilesQuery,
  UploadRequestFilesResponse,
  UploadRequestIdParams,
  UploadRequestListResponse,
  UploadRequestResponse,
} from '../schemas.js'

const DEFAULT_LIMIT = 20

/** Upload requests (../shared/spec/upload-requests.md): the holder's side, scope requests:manage. */
export const uploadRequestsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { uploadRequests } = app.services
  const { linkBaseUrl } = app.config
  const present = (request: UploadRequestRow) => ({ success: true as const, upload_request: uploadRequests.record(request) })
  const fields = { validatorCompiler: jsonFieldsValidator }
  const config = { scope: 'requests:manage' as const, bodyFieldsAreParameters: true }
  const errors = { ...bodyErrors, 404: ErrorBody, ...authErrors }

  app.post(
    '/upload-requests',
    {
      ...fields,
      config: { ...config, idempotency: canonicalBody },
      schema: {
        operationId: 'createUploadRequest',
        summary: 'Ask someone without an account for files: a guest link with its limits',
        description:
          'label and one of expires_in or expires_at are required; the expiry is at most 90 days ahead unless the operator ' +
          'allows more (FILESHARE_UPLOAD_REQUEST_MAX_DAYS). Give the url to the guest.',
        headers: Type.Object(IDEMPOTENCY_KEY_HEADER),
        body: UploadRequestBody,
        response: { 201: UploadRequestResponse, ...errors, ...idempotencyErrors },
      },
    },
    async (request, reply) => {
      const { principal } = request
      const created = await uploadRequests.create(principal.account.id, principal.limits, request.body, actorOf(request))
      return reply.code(201).header('Location', `/api/v1/upload-requests/${created.id}`).send(present(created))
    },
  )

  app.get(
    '/upload-requests',
    {
      config,
      schema: {
        operationId: 'listUploadRequests',
        summary: "The account's upload requests, newest first",
        response: { 200: UploadRequestListResponse, ...errors },
      },
    },
    async (request) => {
      const rows = await uploadRequests.list(request.principal.account.id)
      return { success: true as const, upload_requests: rows.map((row) => uploadRequests.record(row)) }
    },
  )

  app.get(
    '/upload-requests/:request_id',
    {
      config,
      preValidation: integerParameters('params', UploadRequestIdParams),
      schema: {
        operationId: 'getUploadRequest',
        summary: 'One upload request, with what it has received',
        params: UploadRequestIdParams,
        response: { 200: UploadRequestResponse, ...errors },
      },
    },
    async (request) => present(await uploadRequests.get(request.principal.account.id, request.params.request_id)),
  )

  app.patch(
    '/upload-requests/:request_id',
    {
      ...fields,
      config,
      preValidation: [integerParameters('params', UploadRequestIdParams), emptyBodyIsNoFields],
      schema: {
        operationId: 'updateUploadRequest',
        summary: 'Change an upload request; a later expiry opens an expired one again',
        params: UploadRequestIdParams,
        body: UploadRequestBody,
        response: { 200: UploadRequestResponse, ...errors },
      },
    },
    async (request) => {
      const { principal } = request
      return present(
        await uploadRequests.update(principal.account.id, request.params.request_id, principal.limits, request.body, actorOf(request)),
      )
    },
  )

  app.delete(
    '/upload-requests/:request_id',
    {
      config,
      preValidation: integerParameters('params', UploadRequestIdParams),
      schema: {
        operationId: 'deleteUploadRequest',
        summary: 'Delete an upload request; the files it brought stay',
        params: UploadRequestIdParams,
        response: { 200: UploadRequestResponse, ...errors },
      },
    },
    async (request) => present(await uploadRequests.delete(request.principal.account.id, request.params.request_id, actorOf(request))),
  )

  app.post(
    '/upload-requests/:request_id/close',
    {
      config,
      preValidation: [integerParameters('params', UploadRequestIdParams), emptyBodyIsNoFields],
      schema: {
        operationId: 'closeUploadRequest',
        summary: 'Close an upload request: guests lose access at once, their unfinished uploads end',
        params: UploadRequestIdParams,
        response: { 200: UploadRequestResponse, ...errors },
      },
    },
    async (request) => present(await uploadRequests.close(request.principal.account.id, request.params.request_id, actorOf(request))),
  )

  app.get(
    '/upload-requests/:request_id/files',
    {
      config,
      preValidation: [integerParameters('params', UploadRequestIdParams), integerParameters('query', UploadRequestFilesQuery)],
      schema: {
        operationId: 'listUploadRequestFiles',
        summary: 'The files an upload request brought in, newest first',
        params: UploadRequestIdParams,
        querystring: UploadRequestFilesQuery,
        response: { 200: UploadRequestFilesResponse, ...errors },
      },
    },
    async (request) => {
      const { limit = DEFAULT_LIMIT, before_id: beforeId } = request.query
      const page = await uploadRequests.files(request.principal.account.id, request.params.request_id, { limit, beforeId })
      return {
        success: true as const,
        files: page.files.map((file) => presentFile(file, linkBaseUrl)),
        pagination: { limit, next_before_id: page.nextBeforeId },
      }
    },
  )
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { actorOf } from '../actor.js'
import { canonicalBody } from '../canonical-body.js'
import { jsonFieldsValidator } from '../json-fields-validator.js'
import { MAX_BULK_DELETE } from '../../services/bulk-delete.js'
import { authErrors, bodyErrors, IDEMPOTENCY_KEY_HEADER, idempotencyErrors } from '../schemas.js'

const FileId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })

const BulkDeleteBody = Type.Object(
  {
    ids: Type.Array(FileId, {
      minItems: 1,
      maxItems: MAX_BULK_DELETE,
      uniqueItems: true,
      description: `The file_ids to delete: 1 to ${MAX_BULK_DELETE}, each once.`,
    }),
  },
  { additionalProperties: false },
)

const BulkDeleteResponse = Type.Object({
  success: Type.Literal(true),
  deleted: Type.Array(FileId, { description: 'The ids deleted by this call, in the order given.' }),
  not_found: Type.Array(FileId, {
    description: "The ids that name none of your files (unknown, another account's, already deleted or expired), in the order given.",
  }),
})

/** POST /files/delete: several files deleted in one call (services/bulk-delete.ts). */
export const bulkDeleteRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/files/delete',
    {
      validatorCompiler: jsonFieldsValidator,
      config: { scope: 'files:delete', bodyFieldsAreParameters: true, idempotency: canonicalBody },
      schema: {
        operationId: 'deleteFiles',
        summary: 'Delete several files',
        description:
          `JSON \`{"ids": [file_id, ...]}\`: 1 to ${MAX_BULK_DELETE} distinct ids. Each file is deleted as DELETE /files/{file_id} ` +
          'deletes one: wholly or not at all, with its own audit row and `file.deleted` webhook event. The answer says which ' +
          'were deleted and which name none of your files. A failure part-way (503) leaves the files before it deleted; with ' +
          'the same `Idempotency-Key`, a retry after a 2xx replays its answer.',
        headers: Type.Object(IDEMPOTENCY_KEY_HEADER),
        body: BulkDeleteBody,
        response: { 200: BulkDeleteResponse, ...bodyErrors, ...idempotencyErrors, ...authErrors },
      },
    },
    async (request) => {
      const { deleted, notFound } = await app.services.bulkDelete.deleteMany(
        request.principal.account.id,
        request.body.ids,
        actorOf(request),
      )
      return { success: true as const, deleted, not_found: notFound }
    },
  )
}

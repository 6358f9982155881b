import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { InsufficientScopeError } from '../../errors.js'
import type { Scope } from '../../services/key-policy.js'
import { countRequest } from '../plugins/authenticate.js'
import { jsonFieldsValidator } from '../json-fields-validator.js'
import { MAX_ARCHIVE_FILES } from '../../services/archives.js'
import { authErrors, bodyErrors, ErrorBody } from '../schemas.js'

/** `{ids}`: the JSON route's body, and what the dashboard's form route (archive-download.ts) turns its fields into. */
export const ArchiveBody = Type.Object(
  {
    ids: Type.Array(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), {
      minItems: 1,
      maxItems: MAX_ARCHIVE_FILES,
      uniqueItems: true,
      description: `The file_ids to put in the archive, in the order of its entries: 1 to ${MAX_ARCHIVE_FILES}, each once.`,
    }),
  },
  { additionalProperties: false },
)

const ZipContent = Type.String({
  format: 'binary',
  contentMediaType: 'application/zip',
  description: 'A ZIP archive (ZIP64 where a file needs it), every entry stored uncompressed.',
})

/** `files-20261127-233000.zip`: when it was made, in UTC; ASCII, so every client keeps it as it is. */
function archiveFilename(now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/\.\d+Z$/, '')
    .replace(/-|:/g, '')
    .replace('T', '-')
  return `files-${stamp}.zip`
}

/**
 * Answers with the ZIP of the account's files `ids`, in their order, as an attachment: one that is
 * not the account's, or not live, refuses the whole archive (404) before any byte.
 */
export async function sendArchive(app: FastifyInstance, reply: FastifyReply, accountId: number, ids: number[]): Promise<FastifyReply> {
  const { archives } = app.services
  const entries = await archives.plan(accountId, ids)
  // Opens the first stored file before the status goes out: the commonest failure (a blob missing
  // in the store) is then an error answer, not a 200 cut after its headers.
  const archive = await archives.open(entries)
  reply.headers({
    'Content-Type': 'application/zip',
    'Content-Disposition': `attachment; filename="${archiveFilename(new Date())}"`,
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  })
  // With the length declared, a cut stream is a short body that every HTTP client reports as an error.
  if (archive.size >= 0) reply.header('Content-Length', String(archive.size))
  return reply.send(archive.stream)
}

/**
 * The scope the archive needs besides `files:read` (the route's own, checked by authenticate.ts).
 * `files:read` alone reads metadata only (../shared/spec/keys-and-audit.md), and a key made with it
 * must not gain every file's bytes; a key that can also make public links (`links:write`) can fetch
 * every file's bytes already, so with both the archive grants nothing new.
 */
export const ARCHIVE_ALSO_NEEDS: Scope = 'links:write'

/** POST /files/archive: several files as one ZIP (services/archives.ts). */
export interface ArchiveRoutesOptions {
  /** true under /api/v1; false under /dashboard/api, whose calls count against none of the API's limits. */
  countsRequests: boolean
}

export const archiveRoutes: FastifyPluginAsyncTypebox<ArchiveRoutesOptions> = async (app, { countsRequests }) => {
  /**
   * Right after authentication, in the place of its request count (`rateLimit: 'deferred'`): a key
   * without the second scope is refused as one without the first is, 403 insufficient_scope naming
   * it, counted against no rate limit; any other key's call is counted as usual.
   */
  const requireSecondScope = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    for (const scope of request.routeOptions.config.alsoScopes ?? []) {
      if (!request.principal.allows(scope)) throw new InsufficientScopeError([scope])
    }
    if (countsRequests) await countRequest(app, request, reply)
  }

  app.post(
    '/files/archive',
    {
      validatorCompiler: jsonFieldsValidator,
      config: { scope: 'files:read', alsoScopes: [ARCHIVE_ALSO_NEEDS], rateLimit: 'deferred', bodyFieldsAreParameters: true },
      onRequest: requireSecondScope,
      schema: {
        operationId: 'downloadArchive',
        summary: 'Download several files as one ZIP',
        description:
          `Needs both scopes \`files:read\` and \`${ARCHIVE_ALSO_NEEDS}\` (a key that can list files and make public links can ` +
          `fetch their bytes anyway; \`files:read\` alone reads metadata only): a key without either gets 403 ` +
          '`insufficient_scope` naming it. ' +
          `JSON \`{"ids": [file_id, ...]}\`: 1 to ${MAX_ARCHIVE_FILES} distinct ids of your files. Every id is looked up before the ` +
          'first byte: one that does not exist, has expired or is not yours refuses the whole call with 404 `not_found`, which ' +
          'names it. The answer streams a ZIP with one entry per file, in the order of `ids`, stored without compression, with ' +
          'the exact `Content-Length`. Entry names are the file names made safe (no path, no control characters, no `.`/`..`); ' +
          'a name already used in the archive (compared without regard to case) gets ` (2)`, ` (3)`, ... before its extension. ' +
          "Nothing is counted as a download: the files' `download_count` counts what their links hand out. The first stored " +
          'file is opened before the status is sent, so a file the store cannot give (a blob missing) is a 500 `internal_error` ' +
          '(503 `service_unavailable` where the store is down) rather than a cut archive. A stored file that fails once the ' +
          'archive streams cuts the connection: the client sees a body shorter than `Content-Length`, never a ' +
          'complete-looking archive.',
        body: ArchiveBody,
        response: {
          200: {
            description: 'The ZIP archive, streamed.',
            headers: {
              'Content-Disposition': { type: 'string', description: 'attachment; filename="files-YYYYMMDD-HHMMSS.zip" (UTC).' },
              'Content-Length': { type: 'integer', description: "The archive's exact length in bytes." },
            },
            content: { 'application/zip': { schema: ZipContent } },
          },
          ...bodyErrors,
          404: ErrorBody,
          409: ErrorBody,
          ...authErrors,
        },
      },
    },
    async (request, reply) => sendArchive(app, reply, request.principal.account.id, request.body.ids),
  )
}

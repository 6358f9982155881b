import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { MAX_ARCHIVE_FILES } from '../../services/archives.js'
import { jsonFieldsValidator } from '../json-fields-validator.js'
import { checkFormCsrfToken } from '../plugins/dashboard-session.js'
import { ArchiveBody, sendArchive } from './archives.js'

const FORM = 'application/x-www-form-urlencoded'

/** Room for MAX_ARCHIVE_FILES ids of 16 digits, their commas and the token. */
const FORM_BODY_LIMIT = MAX_ARCHIVE_FILES * 17 + 1024

/**
 * `ids=3,1,2` as the JSON route's `{ids: [3, 1, 2]}`, so that its schema checks them (a part that
 * is not a plain decimal is NaN, which no integer matches); the token is checked and dropped by then.
 */
async function formIdsAsBody(request: FastifyRequest): Promise<void> {
  const ids = (request.body as Record<string, string> | undefined)?.ids ?? ''
  request.body = { ids: ids.split(',').map((part) => (/^\d{1,16}$/.test(part) ? Number(part) : Number.NaN)) }
}

/**
 * POST /dashboard/api/files/archive-download: the JSON archive route's ZIP for a plain form post
 * (fields `csrf_token`, `ids` comma-separated), so that the browser streams it to its downloads
 * instead of the page holding it (docs/dashboard.md). Under the dashboard's checkOrigin and
 * requireSession, whose header check the `csrf: 'form'` flag hands to the form field here, checked
 * before the ids (a request without the token learns nothing of them).
 */
export const archiveDownloadRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // URLSearchParams reads the form: one route with two fields needs no form-body plugin.
  app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)))
  })

  app.post(
    '/files/archive-download',
    {
      validatorCompiler: jsonFieldsValidator,
      config: { csrf: 'form', bodyFieldsAreParameters: true },
      preValidation: [checkFormCsrfToken, formIdsAsBody],
      schema: { body: ArchiveBody },
    },
    async (request, reply) => sendArchive(app, reply, request.principal.account.id, request.body.ids),
  )
}

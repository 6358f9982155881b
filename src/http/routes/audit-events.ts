import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { integerParameters } from '../integer-parameters.js'
import { formatUtcTime } from '../../lib/utc-time.js'
import { AuditEventsQuery, AuditEventsResponse, authErrors, bodyErrors } from '../schemas.js'

const DEFAULT_LIMIT = 20

/** GET /audit-events: the account's audit log, newest first, a page at a time (before_id). */
export const auditEventsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/audit-events',
    {
      config: { scope: 'audit:read' },
      preValidation: integerParameters('query', AuditEventsQuery),
      schema: {
        operationId: 'listAuditEvents',
        summary: "The account's audit log, newest first",
        description:
          'Every change to the account, its keys, sessions, files and links, with who made it and from where. ' +
          'Reads are not recorded. Events are kept FILESHARE_AUDIT_RETENTION_DAYS days (90 by default).',
        querystring: AuditEventsQuery,
        response: { 200: AuditEventsResponse, ...bodyErrors, ...authErrors },
      },
    },
    async (request) => {
      const { limit = DEFAULT_LIMIT, before_id: beforeId, action, since } = request.query
      const page = await app.services.auditLog.list(request.principal.account.id, { limit, beforeId, action, since })
      return {
        success: true as const,
        events: page.events.map((event) => ({ ...event, at: formatUtcTime(event.at) })),
        pagination: { limit, next_before_id: page.nextBeforeId },
      }
    },
  )
}

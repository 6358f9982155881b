import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { NotFoundError } from '../../errors.js'
import { corsHeaders, isPreflight, PREFLIGHT_HEADERS } from '../cors.js'
import { authenticate } from '../plugins/authenticate.js'
import { sendNotFound } from '../plugins/error-handler.js'
import { tusResponseHeaders } from '../tus-headers.js'
import { requireScopes } from '../route-scope.js'
import { archiveRoutes } from './archives.js'
import { auditEventsRoutes } from './audit-events.js'
import { bulkDeleteRoutes } from './bulk-delete.js'
import { filesRoutes } from './files.js'
import { keyRoutes } from './key.js'
import { linksRoutes } from './links.js'
import { statsRoutes } from './stats.js'
import { uploadRequestsRoutes } from './upload-requests.js'
import { webhooksRoutes } from './webhooks.js'
import { uploadDiscoveryRoutes, uploadsRoutes } from './uploads.js'

/** Everything under /api/v1. The OpenAPI document is public; every other route needs a key and names its scope (route-scope.ts). */
export const apiV1Routes: FastifyPluginAsyncTypebox = async (app) => {
  // Browsers may call the API from any origin (cors.ts says why); the headers go on before any check.
  app.addHook('onRequest', corsHeaders)
  // A preflight needs no key. Any other OPTIONS is an unknown method, as elsewhere (tus has its own).
  app.options('/*', { schema: { hide: true, security: [] } }, async (request, reply) => {
    if (!isPreflight(request)) throw new NotFoundError(`No route for OPTIONS ${request.url.split('?')[0]}.`)
    return reply.code(204).headers(PREFLIGHT_HEADERS).send()
  })

  // A path or method no route takes: answered here rather than by the app-wide handler, so that
  // the hooks of this scope (CORS) run for it too; under /uploads it is a tus answer as well.
  const uploadsPath = `${app.prefix}/uploads`
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0]!
    if (path === uploadsPath || path.startsWith(`${uploadsPath}/`)) await tusResponseHeaders(request, reply)
    return sendNotFound(request, reply)
  })

  app.get(
    '/openapi.json',
    {
      schema: {
        operationId: 'getOpenApiDocument',
        summary: 'This OpenAPI 3.1 document (no key needed)',
        security: [],
        response: { 200: Type.Object({}, { additionalProperties: true, description: 'An OpenAPI 3.1 document.' }) },
      },
    },
    async () => app.swagger(),
  )

  await app.register(async (api) => {
    api.addHook('onRoute', requireScopes)
    api.addHook('onRequest', authenticate(api))
    await api.register(keyRoutes)
    await api.register(auditEventsRoutes)
    await api.register(filesRoutes)
    await api.register(archiveRoutes, { countsRequests: true })
    await api.register(bulkDeleteRoutes)
    await api.register(linksRoutes)
    await api.register(statsRoutes)
    await api.register(webhooksRoutes)
    await api.register(uploadRequestsRoutes)
  })

  // Resumable uploads: Tus-Resumable goes on before the key is checked, so that every refusal carries it.
  await app.register(async (tus) => {
    tus.addHook('onRequest', tusResponseHeaders)
    await tus.register(uploadDiscoveryRoutes)
    await tus.register(async (api) => {
      api.addHook('onRoute', requireScopes)
      api.addHook('onRequest', authenticate(api))
      await api.register(uploadsRoutes, { countsRequests: true })
    })
  })
}

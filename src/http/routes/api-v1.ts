import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { authenticate } from '../plugins/authenticate.js'
import { tusResponseHeaders } from '../tus-headers.js'
import { filesRoutes } from './files.js'
import { statsRoutes } from './stats.js'
import { uploadDiscoveryRoutes, uploadsRoutes } from './uploads.js'

/** Everything under /api/v1. The OpenAPI document is public; every other route needs a key. */
export const apiV1Routes: FastifyPluginAsyncTypebox = async (app) => {
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
    api.addHook('onRequest', authenticate(api))
    await api.register(filesRoutes)
    await api.register(statsRoutes)
  })

  // Resumable uploads: tus and CORS headers go on before the key is checked, so that every refusal carries them.
  await app.register(async (tus) => {
    tus.addHook('onRequest', tusResponseHeaders)
    await tus.register(uploadDiscoveryRoutes)
    await tus.register(async (api) => {
      api.addHook('onRequest', authenticate(api))
      await api.register(uploadsRoutes, { countsRequests: true })
    })
  })
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { authenticate } from '../plugins/authenticate.js'
import { filesRoutes } from './files.js'
import { statsRoutes } from './stats.js'

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
}

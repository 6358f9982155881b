import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { authenticate } from '../plugins/authenticate.js'
import { filesRoutes } from './files.js'
import { statsRoutes } from './stats.js'

/** Everything under /api/v1. The OpenAPI document is public; every other route needs a key. */
export const apiV1Routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  await app.register(async (api) => {
    api.addHook('onRequest', authenticate(api))
    await api.register(filesRoutes)
    await api.register(statsRoutes)
  })
}

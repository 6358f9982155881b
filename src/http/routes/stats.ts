import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { authErrors, StatsResponse } from '../schemas.js'

export const statsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/stats',
    {
      schema: {
        summary: 'Account statistics and limits',
        security: [{ bearerAuth: [] }],
        response: { 200: StatsResponse, ...authErrors },
      },
    },
    async (request) => ({ success: true as const, ...(await app.services.accounts.stats(request.principal.account.id)) }),
  )
}

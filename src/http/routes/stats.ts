import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { presentStats } from '../present-stats.js'
import { authErrors, bodyErrors, StatsResponse } from '../schemas.js'

export const statsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/stats',
    {
      config: { scope: 'stats:read' },
      schema: {
        operationId: 'getStats',
        summary: 'Account statistics and limits',
        response: { 200: StatsResponse, ...bodyErrors, ...authErrors },
      },
    },
    async (request) => ({ success: true as const, ...presentStats(await app.services.accounts.stats(request.principal.account.id)) }),
  )
}

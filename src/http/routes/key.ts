import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { allowedIpList, grantedScopes } from '../../services/key-policy.js'
import { formatOptionalUtcTime, formatUtcTime } from '../../lib/utc-time.js'
import { authErrors, bodyErrors, CurrentKeyResponse } from '../schemas.js'

/** GET /key: the calling key as its holder may see it (any valid key; it counts against the rate limits). */
export const keyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/key',
    {
      config: { scope: 'any-key' },
      schema: {
        operationId: 'getCurrentKey',
        summary: 'The calling API key: its scopes, allowed addresses, expiry and last use',
        response: { 200: CurrentKeyResponse, ...bodyErrors, ...authErrors },
      },
    },
    async (request) => {
      const { key, account } = request.principal
      // Only API keys reach /api/v1 (the dashboard's session has routes of its own).
      const shown = key!
      return {
        success: true as const,
        key: {
          key_id: shown.id,
          name: shown.name,
          prefix: shown.prefix,
          scopes: grantedScopes(shown.scopes),
          allowed_ips: allowedIpList(shown.allowed_ips),
          created_at: formatUtcTime(shown.created_at),
          expires_at: formatOptionalUtcTime(shown.expires_at),
          last_used_at: formatOptionalUtcTime(shown.last_used_at),
        },
        plan: account.plan,
      }
    },
  )
}

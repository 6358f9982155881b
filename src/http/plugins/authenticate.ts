import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { PlanNotSupportedError, RateLimitedError, UnauthorizedError } from '../../errors.js'
import type { Principal } from '../../services/api-keys.js'

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal
  }
}

const BEARER = /^bearer +([^\s]+) *$/i

/**
 * The checks every API call passes first, in the documented order: the key (401, with a per-IP
 * guard on failures: 429), the plan (403), then the account's request rate limits (429).
 */
export function authenticate(app: FastifyInstance) {
  const { services, limiters } = app
  return async function authenticateRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const key = BEARER.exec(request.headers.authorization ?? '')?.[1]
    const principal = key ? await services.apiKeys.authenticate(key) : undefined
    if (!principal) {
      const wait = await limiters.authFailures.hit(request.ip)
      if (wait > 0) throw new RateLimitedError(wait, 'Too many failed authentications from this address.')
      throw new UnauthorizedError()
    }
    if (!principal.limits.apiAccess) throw new PlanNotSupportedError(principal.account.plan)

    const decision = await limiters.requests.consume(String(principal.account.id), {
      perMinute: principal.limits.requestsPerMinute,
      perDay: principal.limits.requestsPerDay,
    })
    reply.header('RateLimit-Limit', String(decision.limit))
    reply.header('RateLimit-Remaining', String(decision.remaining))
    reply.header('RateLimit-Reset', String(decision.resetSeconds))
    if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds ?? 1)
    request.principal = principal
  }
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { InsufficientScopeError, IpNotAllowedError, PlanNotSupportedError, RateLimitedError, UnauthorizedError } from '../../errors.js'
import type { LimitDecision } from '../../limits/request-limiter.js'
import type { Principal } from '../../services/api-keys.js'
import { actorAddress } from '../actor.js'
import { allowingScopes } from '../route-scope.js'

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal
  }
  interface FastifyContextConfig {
    /**
     * 'deferred': the key and the plan are checked first as everywhere, but the route itself decides
     * whether the request counts against the rate limits (countRequest) or not (showLimits).
     */
    rateLimit?: 'deferred'
  }
}

const BEARER = /^bearer +([^\s]+) *$/i

function limitHeaders(reply: FastifyReply, decision: LimitDecision): void {
  reply.header('RateLimit-Limit', String(decision.limit))
  reply.header('RateLimit-Remaining', String(decision.remaining))
  reply.header('RateLimit-Reset', String(decision.resetSeconds))
}

function requestLimits(principal: Principal) {
  return { perMinute: principal.limits.requestsPerMinute, perDay: principal.limits.requestsPerDay }
}

/**
 * Counts the request against the account's rate limits: 429 when they are spent. Without a
 * promise when the limiter answers at once (the in-memory one): every API call passes here.
 */
export function countRequest(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): void | Promise<void> {
  const { principal } = request
  const decision = app.limiters.requests.consume(String(principal.account.id), requestLimits(principal))
  if (decision instanceof Promise) return decision.then((settled) => applyDecision(app, principal, reply, settled))
  applyDecision(app, principal, reply, decision)
}

function applyDecision(app: FastifyInstance, principal: Principal, reply: FastifyReply, decision: LimitDecision): void {
  limitHeaders(reply, decision)
  if (!decision.allowed) {
    app.metrics.rateLimitRefused(principal.account.plan, 'requests')
    throw new RateLimitedError(decision.retryAfterSeconds ?? 1)
  }
}

/** The RateLimit-* headers of a request the limits do not count. */
export async function showLimits(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { principal } = request
  limitHeaders(reply, await app.limiters.requests.peek(String(principal.account.id), requestLimits(principal)))
}

/**
 * The checks every API call passes first, in the documented order: the key (401, with a per-IP
 * guard on failures: 429), the plan (403), the key's allowed addresses and the route's scope
 * (403, not counted against the rate limits), then the account's request rate limits (429).
 * A callback hook: with a cached key and the in-memory limiter it completes without a promise.
 */
export function authenticate(app: FastifyInstance) {
  const { services, limiters } = app

  function admit(request: FastifyRequest, reply: FastifyReply, principal: Principal): void | Promise<void> {
    if (!principal.limits.apiAccess) throw new PlanNotSupportedError(principal.account.plan)
    // request.ip is the address the rate limits use too (FILESHARE_TRUST_PROXY decides it).
    if (!principal.allowsAddress(request.ip)) throw new IpNotAllowedError()
    const scope = request.routeOptions.config.scope
    // A route without a scope cannot be registered here (route-scope.ts); refuse rather than allow if one were.
    if (scope === undefined) throw new Error(`${request.routeOptions.url} names no scope`)
    const allowing = allowingScopes(scope)
    if (allowing.length > 0 && !allowing.some(principal.allows)) throw new InsufficientScopeError(allowing)
    request.principal = principal
    services.apiKeys.recordUse(principal, request.ip)
    if (request.routeOptions.config.rateLimit !== 'deferred') return countRequest(app, request, reply)
  }

  async function lookUp(request: FastifyRequest, reply: FastifyReply, key: string | undefined): Promise<void> {
    const principal = key ? await services.apiKeys.authenticate(key, undefined, actorAddress(request)) : undefined
    if (!principal) {
      const wait = await limiters.authFailures.hit(request.ip)
      if (wait > 0) {
        app.metrics.rateLimitRefused('none', 'auth_failures')
        throw new RateLimitedError(wait, 'Too many failed authentications from this address.')
      }
      throw new UnauthorizedError()
    }
    await admit(request, reply, principal)
  }

  return function authenticateRequest(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    const key = BEARER.exec(request.headers.authorization ?? '')?.[1]
    const cached = key ? services.apiKeys.cached(key) : undefined
    let pending: void | Promise<void>
    try {
      pending = cached ? admit(request, reply, cached) : lookUp(request, reply, key)
    } catch (error) {
      return done(error as Error)
    }
    if (pending) pending.then(() => done(), done)
    else done()
  }
}

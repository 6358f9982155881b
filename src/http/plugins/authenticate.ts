import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  InsufficientScopeError,
  IpNotAllowedError,
  PlanNotSupportedError,
  RateLimitedError,
  UnauthorizedError,
  UploadRequestUnavailableError,
} from '../../errors.js'
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
    /**
     * true: a guest of an upload request may call it (`Authorization: UploadRequest <token>`), only
     * the tus routes that create, resume and terminate uploads; on any other route such a header is
     * no key (401).
     */
    guests?: boolean
  }
}

const BEARER = /^bearer +([^\s]+) *$/i

/** The key each connection sent last, with its hash (cachedPrincipal). Gone with the connection. */
const lastKeys = new WeakMap<object, { key: string; hash: string }>()

/**
 * Whether two keys are the same, in a time that does not depend on where they differ: behind a
 * proxy one connection carries many clients' requests, and a comparison that stopped at the first
 * difference would tell a client how much of its guess another's key shares.
 */
function sameKey(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}
const UPLOAD_REQUEST = /^uploadrequest +([^\s]+) *$/i

function limitHeaders(reply: FastifyReply, decision: LimitDecision): void {
  reply.header('RateLimit-Limit', String(decision.limit))
  reply.header('RateLimit-Remaining', String(decision.remaining))
  reply.header('RateLimit-Reset', String(decision.resetSeconds))
}

/**
 * Whose budget a request spends: the account's, or, for a guest of an upload request, the client
 * address's (the operator's guest limits): guests never spend their holder's request limits.
 */
function budgetOf(app: FastifyInstance, request: FastifyRequest) {
  const { principal } = request
  if (principal.uploadRequest) {
    const { guestRequestsPerMinute, guestRequestsPerDay } = app.config.uploadRequests
    return { key: `guest:${request.ip}`, limits: { perMinute: guestRequestsPerMinute, perDay: guestRequestsPerDay }, label: 'guest' }
  }
  const limits = { perMinute: principal.limits.requestsPerMinute, perDay: principal.limits.requestsPerDay }
  return { key: String(principal.account.id), limits, label: principal.account.plan }
}

/**
 * Counts the request against its rate limits: 429 when they are spent. Without a promise when the
 * limiter answers at once (the in-memory one): every API call passes here.
 */
export function countRequest(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): void | Promise<void> {
  const budget = budgetOf(app, request)
  const decision = app.limiters.requests.consume(budget.key, budget.limits)
  if (decision instanceof Promise) return decision.then((settled) => applyDecision(app, budget.label, reply, settled))
  applyDecision(app, budget.label, reply, decision)
}

function applyDecision(app: FastifyInstance, plan: string, reply: FastifyReply, decision: LimitDecision): void {
  limitHeaders(reply, decision)
  if (!decision.allowed) {
    app.metrics.rateLimitRefused(plan, 'requests')
    throw new RateLimitedError(decision.retryAfterSeconds ?? 1)
  }
}

/** The RateLimit-* headers of a request the limits do not count. */
export async function showLimits(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const budget = budgetOf(app, request)
  limitHeaders(reply, await app.limiters.requests.peek(budget.key, budget.limits))
}

/**
 * The checks every API call passes first, in the documented order: the key (401, with a per-IP
 * guard on failures: 429), the plan (403), the key's allowed addresses and the route's scope
 * (403, not counted against the rate limits), then the account's request rate limits (429).
 * A callback hook: with a cached key and the in-memory limiter it completes without a promise.
 */
export function authenticate(app: FastifyInstance) {
  const { services, limiters } = app

  /** `config` is request.routeOptions.config, read once: each read of routeOptions builds an object. */
  function admit(request: FastifyRequest, reply: FastifyReply, principal: Principal, config: FastifyContextConfig): void | Promise<void> {
    if (!principal.limits.apiAccess) throw new PlanNotSupportedError(principal.account.plan)
    // request.ip is the address the rate limits use too (FILESHARE_TRUST_PROXY decides it).
    const ip = request.ip
    if (!principal.allowsAddress(ip)) throw new IpNotAllowedError()
    const scope = config.scope
    // A route without a scope cannot be registered here (route-scope.ts); refuse rather than allow if one were.
    if (scope === undefined) throw new Error(`${request.routeOptions.url} names no scope`)
    const allowing = allowingScopes(scope)
    if (allowing.length > 0 && !allowing.some(principal.allows)) throw new InsufficientScopeError(allowing)
    request.principal = principal
    services.apiKeys.recordUse(principal, ip)
    if (config.rateLimit !== 'deferred') return countRequest(app, request, reply)
  }

  /** A failed authentication counts against the address's guard (429 once it is spent), then answers `refusal`. */
  async function failed(request: FastifyRequest, refusal: Error): Promise<never> {
    const wait = await limiters.authFailures.hit(request.ip)
    if (wait > 0) {
      app.metrics.rateLimitRefused('none', 'auth_failures')
      throw new RateLimitedError(wait, 'Too many failed authentications from this address.')
    }
    throw refusal
  }

  async function lookUp(
    request: FastifyRequest,
    reply: FastifyReply,
    key: string | undefined,
    config: FastifyContextConfig,
  ): Promise<void> {
    const principal = key ? await services.apiKeys.authenticate(key, undefined, actorAddress(request)) : undefined
    if (!principal) return failed(request, new UnauthorizedError())
    await admit(request, reply, principal, config)
  }

  /** A guest of an upload request (upload-requests.md): no scope, its own uploads only, its address's rate limits. */
  async function admitGuest(request: FastifyRequest, reply: FastifyReply, token: string): Promise<void> {
    const grant = request.headers['fileshare-upload-grant']
    let pass
    try {
      pass = await services.uploadRequests.admitGuest(token, typeof grant === 'string' ? grant : undefined, {
        creating: request.method === 'POST',
      })
    } catch (error) {
      if (error instanceof UploadRequestUnavailableError) return failed(request, error)
      throw error
    }
    request.principal = {
      keyId: 0,
      account: pass.account,
      limits: pass.limits,
      actor: { type: 'guest', id: pass.request.id, name: null },
      allows: () => false,
      allowsAddress: () => true,
      uploadRequest: { id: pass.request.id, fileExpiresIn: pass.request.file_expires_in },
    }
    if (request.routeOptions.config.rateLimit !== 'deferred') await countRequest(app, request, reply)
  }

  /**
   * The cached principal of `key`, hashing it only when the connection sent another key before: a
   * keep-alive client sends the same key on every request, and its SHA-256 was 2% of a GET /files/:id.
   */
  function cachedPrincipal(request: FastifyRequest, key: string): Principal | undefined {
    const socket = request.raw.socket as object | null
    if (!socket) return services.apiKeys.cached(key)
    let last = lastKeys.get(socket)
    if (last === undefined || !sameKey(last.key, key)) {
      const hash = services.apiKeys.hashOf(key)
      if (hash === undefined) return undefined
      last = { key, hash }
      lastKeys.set(socket, last)
    }
    return services.apiKeys.cachedByHash(last.hash)
  }

  return function authenticateRequest(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    const { config } = request.routeOptions
    if (config.guests) {
      const token = UPLOAD_REQUEST.exec(request.headers.authorization ?? '')?.[1]
      if (token !== undefined) return void admitGuest(request, reply, token).then(() => done(), done)
    }
    const key = BEARER.exec(request.headers.authorization ?? '')?.[1]
    const cached = key ? cachedPrincipal(request, key) : undefined
    let pending: void | Promise<void>
    try {
      pending = cached ? admit(request, reply, cached, config) : lookUp(request, reply, key, config)
    } catch (error) {
      return done(error as Error)
    }
    if (pending) pending.then(() => done(), done)
    else done()
  }
}

import type { RouteOptions } from 'fastify'
import type { Scope } from '../services/key-policy.js'

/**
 * Every API route names what it needs in its declaration: a scope, several of which any one will
 * do (GET /uploads/{id}: an upload-only key reads the status of its own upload), or `any-key` (any
 * valid key, GET /key). The check (plugins/authenticate.ts) and the OpenAPI document (the scope under the
 * bearer scheme, and `x-required-scope`) both read that one declaration. A route under the key
 * check that names nothing is refused when it is registered (requireScopes), and
 * test/contract/route-scopes.test.ts walks every route of the app.
 */
export type RouteScope = Scope | readonly [Scope, ...Scope[]] | 'any-key'

/** The scopes that each allow a route (any one of them will do); none for `any-key`. */
export function allowingScopes(scope: RouteScope): readonly Scope[] {
  if (scope === 'any-key') return []
  return typeof scope === 'string' ? [scope] : scope
}

declare module 'fastify' {
  interface FastifyContextConfig {
    scope?: RouteScope
    /**
     * Scopes the route needs besides `scope`, every one of them (POST /files/archive: `links:write`
     * as well as `files:read`), checked by the route itself right after authentication. Declared
     * here so that the OpenAPI document names them too.
     */
    alsoScopes?: readonly Scope[]
  }
}

/**
 * The OpenAPI security requirements of a route that needs `scope` (and every one of `also`):
 * alternatives are separate requirements, scopes needed together share one requirement's list.
 */
function security(scope: RouteScope, also: readonly Scope[]) {
  if (scope === 'any-key') return [{ bearerAuth: [] }]
  return allowingScopes(scope).map((one) => ({ bearerAuth: [one, ...also] }))
}

/** `x-required-scope`: "files:read", "files:read or files:write", "files:read and links:write". */
function requiredScopeText(scope: Exclude<RouteScope, 'any-key'>, also: readonly Scope[]): string {
  const either = allowingScopes(scope).join(' or ')
  return also.length === 0 ? either : [either, ...also].join(' and ')
}

/**
 * An onRoute hook of the whole app, added before the OpenAPI plugin (which reads each route's schema
 * as it is registered): a route's scope becomes its documented security requirement and
 * `x-required-scope`.
 */
export function documentScope(route: RouteOptions): void {
  const scope = route.config?.scope
  if (scope === undefined || !route.schema) return
  const schema = route.schema as Record<string, unknown>
  const also = route.config?.alsoScopes ?? []
  // A guest of an upload request may call it too (authenticate.ts).
  schema.security = [...security(scope, also), ...(route.config?.guests ? [{ uploadRequest: [] }] : [])]
  if (scope !== 'any-key') schema['x-required-scope'] = requiredScopeText(scope, also)
}

/** An onRoute hook for a scope whose routes all need a key: each must name its scope. */
export function requireScopes(route: RouteOptions): void {
  if (route.config?.scope === undefined) {
    throw new Error(`${String(route.method)} ${route.url} needs an API key but names no scope: add config.scope to its declaration.`)
  }
}

import type { RouteOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allowingScopes, type RouteScope } from '../../src/http/route-scope.js'
import { SCOPES } from '../../src/services/key-policy.js'
import { bearer, startTestApp, type TestApp } from '../helpers/test-app.js'

/**
 * Scoped keys (../shared/spec/keys-and-audit.md) on every route of the app: the route list is
 * Fastify's own (every route as it is registered), not a list kept here, so a route added later
 * without a scope fails this test.
 */

interface Route {
  method: string
  url: string
  scope: RouteScope | undefined
  /** Scopes the route needs besides its declared one, all of them (`config.alsoScopes`, checked right after authentication). */
  also: readonly string[]
  isPublic: boolean
}

describe('every API route is public or names the scope it needs', () => {
  let t: TestApp
  const routes: Route[] = []
  let accountId: number

  beforeAll(async () => {
    t = await startTestApp(
      {},
      {
        onRoute: (route: RouteOptions) => {
          if (!route.url.startsWith('/api/v1')) return
          const security = (route.schema as { security?: unknown[] } | undefined)?.security
          for (const method of [route.method].flat()) {
            routes.push({
              method,
              url: route.url,
              scope: route.config?.scope,
              also: route.config?.alsoScopes ?? [],
              isPublic: Array.isArray(security) && security.length === 0,
            })
          }
        },
      },
    )
    accountId = (await t.createAccount('pro')).accountId
    await t.app.services.accounts.setLimits(accountId, { requests_per_minute: 100_000, requests_per_day: 100_000 })
  })
  afterAll(async () => {
    await t.close()
  })

  const keyWith = async (scopes: string[], options: { allowedIps?: string[]; account?: number } = {}) =>
    (await t.app.services.apiKeys.create(options.account ?? accountId, 'scoped', { scopes, allowedIps: options.allowedIps })).apiKey

  /** The route's URL with its parameters filled in (ids that need not exist: the scope is checked first). */
  const concrete = (url: string) => url.replace(/:[a-z_]+/g, '1').replace('*', 'anything')

  function call(route: Pick<Route, 'method' | 'url'>, apiKey?: string) {
    return fetch(`${t.url}${concrete(route.url)}`, {
      method: route.method,
      headers: { ...(apiKey && bearer(apiKey)), 'tus-resumable': '1.0.0' },
      signal: AbortSignal.timeout(5000),
    })
  }

  it('finds the API routes, each either public or with a scope from the list', () => {
    expect(routes.length).toBeGreaterThan(20)
    const undeclared = routes.filter((route) => !route.isPublic && route.scope === undefined)
    expect(undeclared.map((route) => `${route.method} ${route.url}`)).toEqual([])
    for (const route of routes) {
      for (const scope of route.scope === undefined ? [] : allowingScopes(route.scope)) expect(SCOPES).toContain(scope)
    }
    // The table of the spec, as the routes declare it.
    const scopeOf = (method: string, url: string) => routes.find((route) => route.method === method && route.url === url)?.scope
    expect(scopeOf('GET', '/api/v1/files')).toBe('files:read')
    expect(scopeOf('GET', '/api/v1/files/:file_id')).toBe('files:read')
    // The status of an upload: a backup job's read, and an upload-only key's own upload.
    expect(scopeOf('GET', '/api/v1/uploads/:upload_id')).toEqual(['files:read', 'files:write'])
    expect(scopeOf('POST', '/api/v1/files/upload')).toBe('files:write')
    expect(scopeOf('PATCH', '/api/v1/files/:file_id')).toBe('files:write')
    for (const method of ['POST', 'PATCH', 'DELETE'])
      expect(scopeOf(method, method === 'POST' ? '/api/v1/uploads' : '/api/v1/uploads/:upload_id')).toBe('files:write')
    expect(scopeOf('HEAD', '/api/v1/uploads/:upload_id')).toBe('files:write')
    expect(scopeOf('DELETE', '/api/v1/files/:file_id')).toBe('files:delete')
    expect(scopeOf('GET', '/api/v1/files/:file_id/links')).toBe('links:read')
    expect(scopeOf('GET', '/api/v1/links/:link_id')).toBe('links:read')
    for (const [method, url] of [
      ['POST', '/api/v1/files/:file_id/links'],
      ['PATCH', '/api/v1/links/:link_id'],
      ['DELETE', '/api/v1/links/:link_id'],
      ['POST', '/api/v1/links/:link_id/rotate'],
    ] as const) {
      expect(scopeOf(method, url)).toBe('links:write')
    }
    expect(scopeOf('GET', '/api/v1/stats')).toBe('stats:read')
    expect(scopeOf('GET', '/api/v1/audit-events')).toBe('audit:read')
    expect(scopeOf('GET', '/api/v1/key')).toBe('any-key')
    // The ZIP of several files: files:read here, and links:write besides (its alsoScopes).
    expect(scopeOf('POST', '/api/v1/files/archive')).toBe('files:read')
    // The file bytes of an archive are for keys that can make public links anyway (routes/archives.ts), not for a read-only key.
    expect(routes.find((route) => route.method === 'POST' && route.url === '/api/v1/files/archive')?.also).toEqual(['links:write'])
  })

  it('a route registered under the key check without a scope stops the app from starting', async () => {
    const { requireScopes } = await import('../../src/http/route-scope.js')
    const Fastify = (await import('fastify')).default
    const app = Fastify()
    const starting = (async () => {
      await app.register(async (scope) => {
        scope.addHook('onRoute', requireScopes)
        scope.get('/forgotten', async () => 'no scope')
      })
      await app.ready()
    })()
    await expect(starting).rejects.toThrow(/GET \/forgotten needs an API key but names no scope/)
    await app.close().catch(() => {})
  })

  it('public routes answer without a key', async () => {
    const publicRoutes = routes.filter((route) => route.isPublic)
    expect(publicRoutes.length).toBeGreaterThan(0)
    for (const route of publicRoutes) {
      const response = await call(route)
      expect(response.status, `${route.method} ${route.url}`).not.toBe(401)
      await response.arrayBuffer()
    }
  })

  // Two calls on every scoped route (about 60 of them): on the scale-out stack and behind nginx that takes longer than the default 30 s.
  it(
    'a key without the scope gets 403 insufficient_scope naming it (RFC 6750), on every scoped route; with only that scope it passes',
    { timeout: 120_000 },
    async () => {
      const scoped = routes.filter((route) => route.scope !== undefined && route.scope !== 'any-key')
      for (const route of scoped) {
        const allowing = allowingScopes(route.scope!)
        const scope = allowing[0]!
        const refused = await call(route, await keyWith(SCOPES.filter((other) => !allowing.includes(other))))
        const label = `${route.method} ${route.url}`
        expect(refused.status, label).toBe(403)
        expect(refused.headers.get('www-authenticate'), label).toBe(`Bearer error="insufficient_scope", scope="${scope}"`)
        expect(refused.headers.get('ratelimit-remaining'), label).toBeNull()
        if (route.method !== 'HEAD') {
          const body = (await refused.json()) as { error: { code: string; message: string; required_scope: string } }
          expect(body.error, label).toMatchObject({ code: 'insufficient_scope', required_scope: scope })
          expect(body.error.message, label).toContain(scope)
        }
        const also = route.also
        for (const each of allowing) {
          const allowed = await call(route, await keyWith([each, ...also]))
          expect([401, 403], `${label} with ${[each, ...also].join(' ')}: ${allowed.status}`).not.toContain(allowed.status)
          // Read, not cancelled: undici's body.cancel() on the 400 of a body-less POST /files/archive or /files/delete
          // waited for the abort signal here (the body had arrived whole: reading it takes 1 ms).
          await allowed.arrayBuffer()
        }
        // With its declared scope but not all the others it needs: 403 naming the first missing one, uncounted.
        if (also.length > 0) {
          const partly = await call(route, await keyWith([...allowing]))
          expect(partly.status, label).toBe(403)
          expect(partly.headers.get('www-authenticate'), label).toBe(`Bearer error="insufficient_scope", scope="${also[0]}"`)
          expect(partly.headers.get('ratelimit-remaining'), label).toBeNull()
          expect(((await partly.json()) as { error: { required_scope: string } }).error.required_scope, label).toBe(also[0])
        }
      }
    },
  )

  it('GET /key answers any valid key, whatever its scopes', async () => {
    const response = await call({ method: 'GET', url: '/api/v1/key' }, await keyWith(['audit:read']))
    expect(response.status).toBe(200)
    expect(((await response.json()) as { key: { scopes: string[] } }).key.scopes).toEqual(['audit:read'])
  })

  it('refusals come in the documented order: 401, then the plan, then the address and the scope, and they cost no request', async () => {
    const free = await t.createAccount('free')
    const freeScoped = await keyWith(['stats:read'], { account: free.accountId })
    const files = { method: 'GET', url: '/api/v1/files' }
    expect(((await (await call(files, freeScoped)).json()) as { error: { code: string } }).error.code).toBe('plan_not_supported')
    const elsewhereScoped = await keyWith(['stats:read'], { allowedIps: ['10.0.0.0/8'] })
    expect(((await (await call(files, elsewhereScoped)).json()) as { error: { code: string } }).error.code).toBe('ip_not_allowed')
    expect((await call(files, 'fsk_' + 'x'.repeat(43))).status).toBe(401)

    // An account with three requests a minute: refusals for the scope leave all three.
    const { accountId: tight } = await t.createAccount('pro')
    await t.app.services.accounts.setLimits(tight, { requests_per_minute: 3 })
    const statsOnly = await keyWith(['stats:read'], { account: tight })
    for (let i = 0; i < 5; i++) expect((await call(files, statsOnly)).status).toBe(403)
    const stats = { method: 'GET', url: '/api/v1/stats' }
    const remaining = []
    for (let i = 0; i < 3; i++) {
      const response = await call(stats, statsOnly)
      expect(response.status).toBe(200)
      remaining.push(response.headers.get('ratelimit-remaining'))
      await response.body?.cancel()
    }
    expect(remaining).toEqual(['2', '1', '0'])
    expect((await call(stats, statsOnly)).status).toBe(429)
  })
})

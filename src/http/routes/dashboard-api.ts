import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { PLAN_NAMES } from '../../config.js'
import type { AccountRow } from '../../db/schema.js'
import { RateLimitedError, SignInFailedError } from '../../errors.js'
import type { ApiKeySummary } from '../../services/api-keys.js'
import { PASSWORD_MAX_LENGTH } from '../../services/passwords.js'
import {
  checkOrigin,
  clearSessionCookie,
  requireSession,
  SESSION_COOKIE,
  setSessionCookie,
  signInAccountKey,
} from '../plugins/dashboard-session.js'
import { filesRoutes } from './files.js'

const Password = Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH })
const SignInBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }), password: Password })
const InviteBody = Type.Object({ token: Type.String({ maxLength: 100 }), password: Password })
const KeyBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }) })
const KeyParams = Type.Object({ key_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) })

const iso = (epochMs: number | null) => (epochMs === null ? null : new Date(epochMs).toISOString())

function presentKey(key: ApiKeySummary) {
  return {
    key_id: key.key_id,
    name: key.name,
    prefix: key.prefix,
    created_at: iso(key.created_at),
    last_used_at: iso(key.last_used_at),
    revoked_at: iso(key.revoked_at),
    expires_at: iso(key.expires_at),
  }
}

/**
 * The dashboard's JSON endpoints (/dashboard/api). Signing in and accepting an invitation need a
 * same-origin request; everything else needs a session, and state changes its CSRF token too.
 * Every action goes through the services the API uses, so the account's limits apply.
 */
export const dashboardApiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services, limiters, config } = app
  const apiPlans = PLAN_NAMES.filter((name) => config.plans[name].api_access).map((name) => ({ name, ...config.plans[name] }))

  function sessionBody(account: AccountRow, sessionId: string, expiresAt: number) {
    const plan = config.plans[account.plan as keyof typeof config.plans] ?? config.plans.free
    return {
      success: true as const,
      account: { account_id: account.id, email: account.email, plan: account.plan, api_access: plan.api_access },
      csrf_token: services.sessions.csrfToken(sessionId),
      expires_at: iso(expiresAt),
      api_base_url: `${config.publicUrl}/api/v1`,
      api_plans: apiPlans,
    }
  }

  app.post('/sign-in', { onRequest: checkOrigin(app), schema: { body: SignInBody } }, async (request, reply) => {
    const { email, password } = request.body
    const accountKey = signInAccountKey(email)
    // Checked before the password: once a budget is spent, not even the right password gets in.
    const wait = Math.max(
      await limiters.signInFailuresByIp.blockedFor(request.ip),
      await limiters.signInFailuresByAccount.blockedFor(accountKey),
    )
    if (wait > 0) throw new RateLimitedError(wait, 'Too many failed sign-ins; wait a minute and try again.')
    const account = await services.accountHolders.verify(email, password)
    if (!account) {
      await Promise.all([limiters.signInFailuresByIp.hit(request.ip), limiters.signInFailuresByAccount.hit(accountKey)])
      throw new SignInFailedError()
    }
    // Always a new session id, whatever cookie came in; the old session (if any) ends.
    const { sessionId, expiresAt } = await services.sessions.create(account.id, request.cookies[SESSION_COOKIE])
    setSessionCookie(app, reply, sessionId)
    return sessionBody(account, sessionId, expiresAt)
  })

  app.post('/invite', { onRequest: checkOrigin(app), schema: { body: InviteBody } }, async (request, reply) => {
    const accountId = await services.accountHolders.acceptInvite(request.body.token, request.body.password)
    const { sessionId, expiresAt } = await services.sessions.create(accountId, request.cookies[SESSION_COOKIE])
    const signedIn = await services.sessions.find(sessionId)
    setSessionCookie(app, reply, sessionId)
    return sessionBody(signedIn!.account, sessionId, expiresAt)
  })

  const signedInRoutes: FastifyPluginAsyncTypebox = async (signedIn) => {
    signedIn.addHook('onRequest', checkOrigin(signedIn))
    signedIn.addHook('onRequest', requireSession(signedIn))

    signedIn.get('/session', async (request) => {
      const { id, signedIn: holder } = request.dashboardSession!
      return sessionBody(holder.account, id, holder.expiresAt)
    })

    signedIn.post('/sign-out', async (request, reply) => {
      await services.sessions.end(request.dashboardSession!.id)
      clearSessionCookie(app, reply)
      return { success: true as const }
    })

    signedIn.get('/keys', async (request) => {
      const keys = await services.apiKeys.list(request.principal.account.id)
      return { success: true as const, keys: keys.map(presentKey) }
    })

    signedIn.post('/keys', { schema: { body: KeyBody } }, async (request, reply) => {
      const { key, apiKey } = await services.apiKeys.create(request.principal.account.id, request.body.name.trim())
      return reply.code(201).send({ success: true as const, key: presentKey(key), api_key: apiKey })
    })

    signedIn.delete('/keys/:key_id', { schema: { params: KeyParams } }, async (request) => {
      const key = await services.apiKeys.revokeForAccount(request.principal.account.id, request.params.key_id)
      return { success: true as const, key: presentKey(key) }
    })

    signedIn.get('/usage', async (request) => {
      const accountId = request.principal.account.id
      const [usage, requestsToday] = await Promise.all([services.accounts.stats(accountId), limiters.requests.dayUsage(String(accountId))])
      return { success: true as const, ...usage, requests_today: requestsToday }
    })

    // The API's own file routes (list, details, upload, delete), with the session as the principal.
    await signedIn.register(filesRoutes)
  }
  await app.register(signedInRoutes)
}

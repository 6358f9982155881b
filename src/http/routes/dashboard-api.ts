import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { plansWithApiAccess } from '../../services/account-limits.js'
import { KEY_NAME_MAX_LENGTH } from '../../services/api-keys.js'
import { PASSWORD_MAX_LENGTH } from '../../lib/passwords.js'
import type { SessionView, SignedIn } from '../../services/sessions.js'
import type { SignInResult } from '../../services/sign-in.js'
import type { FastifyReply } from 'fastify'
import { integerParameters } from '../integer-parameters.js'
import { actorAddress, actorOf } from '../actor.js'
import { presentDashboardKey, presentSession } from '../present-dashboard.js'
import { presentStats } from '../present-stats.js'
import { checkOrigin, clearSessionCookie, requireSession, SESSION_COOKIE, setSessionCookie } from '../plugins/dashboard-session.js'
import { sameOriginTusHeaders } from '../tus-headers.js'
import { archiveDownloadRoutes } from './archive-download.js'
import { archiveRoutes } from './archives.js'
import { auditEventsRoutes } from './audit-events.js'
import { bulkDeleteRoutes } from './bulk-delete.js'
import { filePreviewRoutes } from './file-previews.js'
import { filesRoutes } from './files.js'
import { linksRoutes } from './links.js'
import { uploadsRoutes } from './uploads.js'
import { uploadRequestsRoutes } from './upload-requests.js'
import { webhooksRoutes } from './webhooks.js'

const Password = Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH })
const SignInBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }), password: Password })
const InviteBody = Type.Object({ token: Type.String({ maxLength: 100 }), password: Password })
const InviteDetailsBody = Type.Object({ token: Type.String({ maxLength: 100 }) })
const PasswordChangeBody = Type.Object({ current_password: Password, new_password: Password })
// The name's rule is the key service's (src/services/api-keys.ts keyName: trimmed first, then 1 to
// 100 characters), which refuses with 400 invalid_request as a bad body is; the schema only bounds
// what is read.
const KeyBody = Type.Object({
  name: Type.String({ maxLength: 10 * KEY_NAME_MAX_LENGTH }),
  // Absent: every scope. The rules (known names, at least one) are key-policy.ts's, with its messages.
  scopes: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20 })),
  // Absent or empty: any address.
  allowed_ips: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
  expires_in_days: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 3650 }), Type.Null()])),
})
const KeyParams = Type.Object({ key_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) })
const SessionParams = Type.Object({ session_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) })
/** A TOTP code (6 digits) or a recovery code (16 characters with dashes), with room for spaces typed. */
const Code = Type.String({ minLength: 1, maxLength: 40 })
const SecondStepBody = Type.Object({ challenge: Type.String({ maxLength: 100 }), code: Code })
const CodeBody = Type.Object({ code: Code })
const PasswordBody = Type.Object({ password: Password })
const DisableTwoFactorBody = Type.Object({ password: Password, code: Code })
const EmailChangeBody = Type.Object({ new_email: Type.String({ minLength: 1, maxLength: 400 }), password: Password })

const iso = (epochMs: number) => new Date(epochMs).toISOString()

function presentSessionView(session: SessionView) {
  return {
    session_id: session.id,
    device: session.device,
    ip: session.ip,
    created_at: iso(session.createdAt),
    last_seen_at: iso(session.lastSeenAt),
    current: session.current,
  }
}

/**
 * The dashboard's JSON endpoints (/dashboard/api). Signing in and accepting an invitation need a
 * same-origin request; everything else needs a session, and state changes its CSRF token too.
 * Every action goes through the services the API uses, so the account's limits apply.
 */
export const dashboardApiRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services, config } = app
  const apiPlans = plansWithApiAccess(config.plans)

  const sessionBody = async (signedIn: SignedIn, sessionId: string) => {
    const pending = await services.emailChanges.pending(signedIn.account.id)
    return {
      ...presentSession(signedIn, {
        csrfToken: services.sessions.csrfToken(sessionId),
        apiBaseUrl: `${config.publicUrl}/api/v1`,
        apiPlans,
        scanMode: services.scanPolicy.mode,
      }),
      // `required` and not `enabled`: every page but Settings is closed until the holder enrols.
      two_factor: { enabled: signedIn.twoFactor, required: config.requireTwoFactor },
      pending_email: pending ? { new_email: pending.newEmail, requested_at: iso(pending.requestedAt) } : null,
    }
  }

  /** A session (cookie and body), or the second step's challenge: no cookie until the code is given. */
  const signInAnswer = async (reply: FastifyReply, result: SignInResult) => {
    if (result.challenge !== undefined) return { success: true as const, two_factor_required: true as const, challenge: result.challenge }
    setSessionCookie(app, reply, result.sessionId)
    return sessionBody(result.signedIn, result.sessionId)
  }

  app.post('/sign-in', { onRequest: checkOrigin(app), schema: { body: SignInBody } }, async (request, reply) => {
    const { email, password } = request.body
    // Always a new session id, whatever cookie came in; the old session (if any) ends.
    const result = await services.signIn.signIn(email, password, actorAddress(request), request.cookies[SESSION_COOKIE])
    return signInAnswer(reply, result)
  })

  // The second step of a holder with a second factor: the challenge of the first and a code.
  app.post('/sign-in/two-factor', { onRequest: checkOrigin(app), schema: { body: SecondStepBody } }, async (request, reply) => {
    const { challenge, code } = request.body
    const result = await services.signIn.completeSignIn(challenge, code, actorAddress(request), request.cookies[SESSION_COOKIE])
    return signInAnswer(reply, result)
  })

  app.post('/invite', { onRequest: checkOrigin(app), schema: { body: InviteBody } }, async (request, reply) => {
    const accountId = await services.accountHolders.acceptInvite(
      request.body.token,
      request.body.password,
      undefined,
      actorAddress(request),
    )
    // A holder with a second factor (an operator's password reset) still gives a code.
    const account = await services.accountHolders.account(accountId)
    const result = await services.signIn.afterPassword(account, actorAddress(request), request.cookies[SESSION_COOKIE])
    return signInAnswer(reply, result)
  })

  // A POST, so that the token stays out of URLs (and access logs), as the fragment keeps it out of the browser's requests.
  app.post('/invite/details', { onRequest: checkOrigin(app), schema: { body: InviteDetailsBody } }, async (request) => {
    const { email, expiresAt } = await services.accountHolders.inviteDetails(request.body.token)
    return { success: true as const, email, expires_at: new Date(expiresAt).toISOString() }
  })

  const signedInRoutes: FastifyPluginAsyncTypebox = async (signedIn) => {
    signedIn.addHook('onRequest', checkOrigin(signedIn))
    signedIn.addHook('onRequest', requireSession(signedIn))

    signedIn.get('/session', async (request) => {
      const { id, signedIn } = request.dashboardSession!
      return sessionBody(signedIn, id)
    })

    signedIn.post('/sign-out', async (request, reply) => {
      await services.sessions.end(request.dashboardSession!.id, actorOf(request))
      clearSessionCookie(app, reply)
      return { success: true as const }
    })

    // Ends every session of the account, this one included.
    signedIn.post('/sign-out-everywhere', async (request, reply) => {
      await services.sessions.endAll(request.principal.account.id, actorOf(request))
      clearSessionCookie(app, reply)
      return { success: true as const }
    })

    // The holder's sessions (device, address and times; never a token), this one marked.
    signedIn.get('/sessions', async (request) => {
      const { id } = request.dashboardSession!
      const sessions = await services.sessions.list(request.principal.account.id, id)
      return { success: true as const, sessions: sessions.map(presentSessionView) }
    })

    // Signs one session out (another device's, or this one: then the cookie goes too).
    signedIn.delete(
      '/sessions/:session_id',
      { preValidation: integerParameters('params', SessionParams), schema: { params: SessionParams } },
      async (request, reply) => {
        const own = (await services.sessions.list(request.principal.account.id, request.dashboardSession!.id)).find((s) => s.current)
        await services.sessions.endById(request.principal.account.id, request.params.session_id, actorOf(request))
        if (own?.id === request.params.session_id) clearSessionCookie(app, reply)
        return { success: true as const }
      },
    )

    // ---- Two-factor sign-in (TOTP): enrol, confirm, recovery codes, turn off ----

    signedIn.get('/two-factor', async (request) => {
      const status = await services.twoFactor.status(request.principal.account.id)
      return {
        success: true as const,
        enabled: status.enabled,
        required: config.requireTwoFactor,
        recovery_codes_left: status.recoveryCodesLeft,
      }
    })

    // The password again (under the sign-in guard): a stolen session must not put a second factor
    // of its thief's on the account, which would keep the holder out. The secret is shown here
    // once, to the holder's own page (no-store), and never logged.
    signedIn.post('/two-factor/enrol', { schema: { body: PasswordBody } }, async (request) => {
      const { account } = request.principal
      await services.signIn.checkPassword(account.id, account.email, request.body.password, actorOf(request))
      const enrolment = await services.twoFactor.startEnrolment(account.id, account.email)
      return { success: true as const, secret: enrolment.secret, otpauth_uri: enrolment.uri, qr_svg: enrolment.qrSvg }
    })

    signedIn.post('/two-factor/confirm', { schema: { body: CodeBody } }, async (request) => {
      // The caller's session stays; every other session of the account ends (they gave no code).
      const { account } = request.principal
      const codes = await services.twoFactor.confirmEnrolment(account.id, request.body.code, actorOf(request), request.dashboardSession!.id)
      return { success: true as const, recovery_codes: codes }
    })

    signedIn.post('/two-factor/recovery-codes', { schema: { body: CodeBody } }, async (request) => {
      const codes = await services.signIn.regenerateRecoveryCodes(request.principal.account, request.body.code, actorOf(request))
      return { success: true as const, recovery_codes: codes }
    })

    // Needs the password (under the sign-in guard) and a code.
    signedIn.post('/two-factor/disable', { schema: { body: DisableTwoFactorBody } }, async (request) => {
      const { password, code } = request.body
      await services.signIn.disableTwoFactor(request.principal.account, password, code, actorOf(request), config.requireTwoFactor)
      return { success: true as const }
    })

    // ---- Email change, confirmed by the operator (no mail is sent) ----

    signedIn.post('/email', { schema: { body: EmailChangeBody } }, async (request) => {
      const { account } = request.principal
      await services.signIn.checkPassword(account.id, account.email, request.body.password, actorOf(request))
      const pending = await services.emailChanges.request(account.id, account.email, request.body.new_email, actorOf(request))
      return { success: true as const, pending_email: { new_email: pending.newEmail, requested_at: iso(pending.requestedAt) } }
    })

    signedIn.delete('/email', async (request) => {
      await services.emailChanges.cancel(request.principal.account.id, actorOf(request))
      return { success: true as const }
    })

    // The current password is checked under the sign-in guard; other sessions end, this one stays.
    signedIn.post('/password', { schema: { body: PasswordChangeBody } }, async (request) => {
      const { id, signedIn } = request.dashboardSession!
      const { current_password: current, new_password: next } = request.body
      await services.signIn.changePassword(signedIn.account.id, signedIn.account.email, id, current, next, actorOf(request))
      return { success: true as const }
    })

    signedIn.get('/keys', async (request) => {
      const keys = await services.apiKeys.list(request.principal.account.id)
      return { success: true as const, keys: keys.map(presentDashboardKey) }
    })

    signedIn.post('/keys', { schema: { body: KeyBody } }, async (request, reply) => {
      const { name, scopes, allowed_ips: allowedIps, expires_in_days: days } = request.body
      const expiresInMs = days == null ? undefined : days * 86_400_000
      const options = { scopes, allowedIps, expiresInMs }
      const { key, apiKey } = await services.apiKeys.create(request.principal.account.id, name, options, actorOf(request))
      return reply.code(201).send({ success: true as const, key: presentDashboardKey(key), api_key: apiKey })
    })

    signedIn.delete(
      '/keys/:key_id',
      { preValidation: integerParameters('params', KeyParams), schema: { params: KeyParams } },
      async (request) => {
        const key = await services.apiKeys.revokeForAccount(request.principal.account.id, request.params.key_id, actorOf(request))
        return { success: true as const, key: presentDashboardKey(key) }
      },
    )

    signedIn.get('/usage', async (request) => {
      const usage = await services.accounts.usage(request.principal.account.id)
      return { success: true as const, ...presentStats(usage), requests_today: usage.requestsToday }
    })

    // The API's own file, link, audit-log and webhook routes (list, details, upload, change, delete;
    // links; the Activity page; the Webhooks page), with the session as the principal.
    await signedIn.register(filesRoutes)
    await signedIn.register(filePreviewRoutes)
    await signedIn.register(linksRoutes)
    await signedIn.register(auditEventsRoutes)
    await signedIn.register(webhooksRoutes)
    await signedIn.register(uploadRequestsRoutes)

    // Resumable uploads (tus), as under /api/v1 but not rate limited; the page uses tus-js-client.
    // Tus-Resumable goes on in onSend, so that a refused session or CSRF token carries it too.
    await signedIn.register(async (tus) => {
      tus.addHook('onSend', sameOriginTusHeaders)
      await tus.register(uploadsRoutes, { countsRequests: false })
    })
  }
  await app.register(signedInRoutes)

  // The Files page's selection: deleting several files, and downloading them as one ZIP, through the
  // API's own routes, with the session (and its CSRF token) as everywhere else here; and the ZIP for
  // the page's plain form, whose token comes in a field (archive-download.ts).
  await app.register(async (selection) => {
    selection.addHook('onRequest', checkOrigin(selection))
    selection.addHook('onRequest', requireSession(selection))
    await selection.register(bulkDeleteRoutes)
    await selection.register(archiveRoutes, { countsRequests: false })
    await selection.register(archiveDownloadRoutes)
  })
}

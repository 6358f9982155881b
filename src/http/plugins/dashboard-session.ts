import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { CsrfFailedError, SignInRequiredError, TwoFactorEnrolmentRequiredError } from '../../errors.js'
import type { SignedIn } from '../../services/sessions.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The dashboard session behind the request's cookie, if it is valid. */
    dashboardSession?: { id: string; signedIn: SignedIn }
  }
  interface FastifyContextConfig {
    /**
     * 'form': the CSRF token comes in the form field `csrf_token`, not the header (a plain form
     * cannot send one), so requireSession leaves it to the route, which checks it once the body is
     * parsed (checkFormCsrfToken). Only POST /dashboard/api/files/archive-download.
     */
    csrf?: 'form'
  }
}

export const SESSION_COOKIE = 'fileshare_session'
export const CSRF_HEADER = 'x-csrf-token'

/** Path of the session cookie: the dashboard under the public URL's path (a proxy may serve us under one). */
export function cookiePath(publicUrl: string): string {
  return `${new URL(publicUrl).pathname.replace(/\/+$/, '')}/dashboard`
}

function cookieOptions(app: FastifyInstance) {
  return {
    path: cookiePath(app.config.publicUrl),
    httpOnly: true,
    sameSite: 'strict' as const,
    secure: app.config.publicUrl.startsWith('https:'),
  }
}

export function setSessionCookie(app: FastifyInstance, reply: FastifyReply, sessionId: string): void {
  reply.setCookie(SESSION_COOKIE, sessionId, cookieOptions(app))
}

export function clearSessionCookie(app: FastifyInstance, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, cookieOptions(app))
}

/** Loads the session named by the cookie, if any; never refuses (pages and endpoints decide). */
export function loadSession(app: FastifyInstance) {
  return async function loadDashboardSession(request: FastifyRequest): Promise<void> {
    const id = request.cookies[SESSION_COOKIE]
    // Stylesheets and scripts are the same for everyone: no database read for them.
    if (!id || request.routeOptions.url?.includes('/assets/')) return
    const signedIn = await app.services.sessions.find(id)
    if (signedIn) request.dashboardSession = { id, signedIn }
  }
}

/**
 * State changes must come from a page of ours: the browser's Origin header must be the public
 * URL's origin or this request's own. Another site cannot forge Origin, so this alone stops
 * cross-site form posts, including to the sign-in form (login CSRF), which has no session yet.
 */
export function checkOrigin(app: FastifyInstance) {
  const publicOrigin = new URL(app.config.publicUrl).origin
  return async function checkRequestOrigin(request: FastifyRequest): Promise<void> {
    if (request.method === 'GET' || request.method === 'HEAD') return
    const origin = request.headers.origin
    if (origin !== publicOrigin && origin !== `${request.protocol}://${request.host}`) {
      throw new CsrfFailedError(origin ? `Requests from ${origin} are not accepted.` : undefined)
    }
  }
}

/**
 * What a holder without a second factor may still call where FILESHARE_REQUIRE_TWO_FACTOR is set:
 * the session (the page learns it must enrol), signing out, and enrolment. Paths under /dashboard/api.
 */
const BEFORE_ENROLMENT = new Set([
  'GET /session',
  'POST /sign-out',
  'GET /two-factor',
  'POST /two-factor/enrol',
  'POST /two-factor/confirm',
])

/** Whether the holder must enrol a second factor before anything else (the setting is on, and they have none). */
export function mustEnrol(app: FastifyInstance, session: { signedIn: SignedIn } | undefined): boolean {
  return app.config.requireTwoFactor && session !== undefined && !session.signedIn.twoFactor
}

function checkCsrfToken(app: FastifyInstance, sessionId: string, token: unknown): void {
  if (typeof token !== 'string' || !app.services.sessions.checkCsrfToken(sessionId, token)) throw new CsrfFailedError()
}

/**
 * The CSRF check of a `csrf: 'form'` route, after requireSession and the body's parsing: the
 * session's token in the form field `csrf_token`.
 */
export async function checkFormCsrfToken(request: FastifyRequest): Promise<void> {
  const field = (request.body as Record<string, unknown> | undefined)?.csrf_token
  checkCsrfToken(request.server, request.dashboardSession!.id, field)
}

/**
 * For endpoints of a signed-in holder: 401 without a valid session; on state changes, the session's
 * CSRF token in the X-CSRF-Token header too (a `csrf: 'form'` route checks its form field instead).
 * Sets `request.principal` so that the API's own file routes serve the dashboard unchanged.
 */
export function requireSession(app: FastifyInstance) {
  return async function requireDashboardSession(request: FastifyRequest): Promise<void> {
    const session = request.dashboardSession
    if (!session) throw new SignInRequiredError()
    if (request.method !== 'GET' && request.method !== 'HEAD' && request.routeOptions.config.csrf !== 'form') {
      checkCsrfToken(app, session.id, request.headers[CSRF_HEADER])
    }
    if (mustEnrol(app, session)) {
      const path = (request.routeOptions.url ?? '').replace(/^.*\/dashboard\/api/, '')
      if (!BEFORE_ENROLMENT.has(`${request.method} ${path}`)) throw new TwoFactorEnrolmentRequiredError()
    }
    // No API key is involved: key id 0 stands for "the dashboard", which may do what any scope allows.
    const { account, limits } = session.signedIn
    request.principal = {
      keyId: 0,
      account,
      limits,
      actor: { type: 'session', id: account.id, name: account.email },
      allows: () => true,
      allowsAddress: () => true,
    }
  }
}

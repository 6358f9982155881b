import type { FastifyRequest } from 'fastify'
import type { Actor } from '../services/audit.js'

/** Where a request comes from, as the audit log records it: the client address the rate limits use, and the user agent. */
export function actorAddress(request: FastifyRequest): Pick<Actor, 'ip' | 'userAgent'> {
  return { ip: request.ip, userAgent: request.headers['user-agent'] ?? null }
}

/** The caller of an authenticated request (a key, or a dashboard session) as the author of its changes. */
export function actorOf(request: FastifyRequest): Actor {
  return { ...request.principal.actor, ...actorAddress(request) }
}

/** Someone without a key (a download link's visitor, a sign-in form). */
export function publicActor(request: FastifyRequest): Actor {
  return { type: 'public', id: null, ...actorAddress(request) }
}

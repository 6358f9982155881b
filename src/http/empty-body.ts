import type { FastifyRequest } from 'fastify'

/**
 * A preValidation hook for routes whose JSON body is all optional fields: a request without a body
 * (no Content-Type, no bytes) is the same as `{}`. Fastify validates a missing body against the
 * object schema otherwise, and refuses it.
 */
export async function emptyBodyIsNoFields(request: FastifyRequest) {
  if (request.body === undefined) request.body = {}
}

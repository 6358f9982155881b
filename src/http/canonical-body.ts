import type { FastifyRequest } from 'fastify'

/**
 * A JSON body with its fields in one order: the fingerprint of an Idempotency-Key, so that the same
 * resource asked for twice, its fields in another order, is the same request.
 */
export function canonicalBody(request: FastifyRequest): string {
  return JSON.stringify(Object.fromEntries(Object.entries(request.body as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))))
}

import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { StoredAnswer } from '../../db/repositories/idempotency-keys-repository.js'
import type { HeldKey } from '../../services/idempotency.js'
import { setAsideUnreadBody } from '../refused-body.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route takes an Idempotency-Key (../shared/spec/api-semantics.md); this gives what the
     * server knows of the request before its body, which with the method and path is the request's
     * fingerprint: the same key with another fingerprint is 422 idempotency_key_reused.
     */
    idempotency?: (request: FastifyRequest) => string
  }
  interface FastifyRequest {
    /** The Idempotency-Key this request holds while it runs. */
    heldIdempotencyKey: HeldKey | null
  }
}

/** The headers of a first answer that a replay repeats (besides the body and status). */
const REPLAYED_HEADERS = ['location', 'fileshare-file-id', 'upload-offset', 'upload-expires', 'upload-length']

function storedAnswer(reply: FastifyReply, payload: unknown): StoredAnswer {
  const headers: Record<string, string> = {}
  for (const name of REPLAYED_HEADERS) {
    const value = reply.getHeader(name)
    if (value !== undefined) headers[name] = String(value)
  }
  const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null
  return { status: reply.statusCode, headers, body }
}

/**
 * Idempotency-Key on the creating routes that declare it (config.idempotency): after the checks of
 * the key, the plan and the rate limits, before the body is read. The first request holds the key
 * while it runs; its 2xx answer is stored on its way out (onSend), so that a client that lost it
 * gets it again, with `Idempotent-Replayed: true`, instead of a second file or link.
 */
export default fp(
  async (app) => {
    app.decorateRequest('heldIdempotencyKey', null)

    /** Holds the request's key, or answers a replay. */
    async function claim(request: FastifyRequest, reply: FastifyReply, key: string | string[]): Promise<unknown> {
      const fingerprintOf = request.routeOptions.config.idempotency
      if (!fingerprintOf || !request.principal) return
      const fingerprint = `${request.method} ${request.url.split('?')[0]}\n${fingerprintOf(request)}`
      // A guest of an upload request has keys of its own: it never meets the holder's stored answers
      // (their uploads), nor another request's guests'.
      const guest = request.principal.uploadRequest
      const started = await app.services.idempotency.begin(
        request.principal.account.id,
        Array.isArray(key) ? key.join(',') : key,
        fingerprint,
        guest ? `upload_request:${guest.id}` : undefined,
      )
      if ('held' in started) {
        request.heldIdempotencyKey = started.held
        return
      }
      // The same request again: its first answer, and its body (an upload's bytes) is not read.
      const { status, headers, body } = started.replay
      await setAsideUnreadBody(request.raw, reply)
      reply.code(status).headers({ ...headers, 'Idempotent-Replayed': 'true' })
      if (body === null) return reply.send()
      return reply.type('application/json; charset=utf-8').send(body)
    }

    // Callback hooks, each passing at once when there is nothing to do (every call without an
    // Idempotency-Key, every GET): three async hooks cost three promises on every request.
    app.addHook('preHandler', (request, reply, done) => {
      const key = request.headers['idempotency-key']
      if (key === undefined) return done()
      claim(request, reply, key).then(() => done(), done)
    })

    app.addHook('onSend', (request, reply, payload, done) => {
      const held = request.heldIdempotencyKey
      if (!held) return done(null, payload)
      request.heldIdempotencyKey = null
      const ok = reply.statusCode >= 200 && reply.statusCode < 300
      held.finish(ok ? storedAnswer(reply, payload) : undefined).then(() => done(null, payload), done)
    })

    // A request that never got to answer (its connection went first) frees its key.
    app.addHook('onResponse', (request, _reply, done) => {
      const held = request.heldIdempotencyKey
      if (!held) return done()
      request.heldIdempotencyKey = null
      held.finish(undefined).then(() => done(), done)
    })
  },
  { name: 'idempotency', dependencies: ['backends'] },
)

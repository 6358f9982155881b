import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { withTimeout } from '../../lib/with-timeout.js'

const Checks = Type.Record(Type.String(), Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]))

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        summary: 'The process is up',
        security: [],
        response: { 200: Type.Object({ success: Type.Literal(true), status: Type.Literal('ok') }) },
      },
    },
    async () => ({ success: true as const, status: 'ok' as const }),
  )

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        summary: 'Every dependency answers (database, storage, and Redis when configured)',
        security: [],
        response: {
          200: Type.Object({ success: Type.Literal(true), checks: Checks }),
          503: Type.Object({
            success: Type.Literal(false),
            error: Type.Object({ code: Type.String(), message: Type.String() }),
            checks: Checks,
          }),
        },
      },
    },
    async (request, reply) => {
      const probes: Record<string, () => Promise<unknown>> = {
        database: () => app.database.check(),
        storage: () => app.blobStore.check(),
        ...(app.redis ? { redis: () => app.redis!.ping() } : {}),
      }
      const names = Object.keys(probes)
      // A dependency that stalls is as unavailable as one that refuses: each probe gets the time a
      // request would wait for it.
      const results = await Promise.allSettled(
        names.map((name) =>
          withTimeout(probes[name]!(), app.config.backendTimeoutMs, () => new Error(`no answer within ${app.config.backendTimeoutMs} ms`)),
        ),
      )
      const checks = Object.fromEntries(
        names.map((name, i) => [name, results[i]!.status === 'fulfilled' ? ('ok' as const) : ('unavailable' as const)]),
      )
      const down = names.filter((name) => checks[name] !== 'ok')
      if (down.length > 0) {
        request.log.warn({ checks }, 'not ready')
        const message = `Not ready: ${down.join(', ')} unavailable.`
        return reply.code(503).send({ success: false as const, error: { code: 'service_unavailable', message }, checks })
      }
      return { success: true as const, checks }
    },
  )
}

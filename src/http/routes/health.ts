import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sql } from 'kysely'
import { Type } from 'typebox'
import { ServiceUnavailableError } from '../../errors.js'

const Checks = Type.Record(Type.String(), Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]))

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/healthz',
    { schema: { summary: 'The process is up', response: { 200: Type.Object({ success: Type.Literal(true), status: Type.Literal('ok') }) } } },
    async () => ({ success: true as const, status: 'ok' as const }),
  )

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'The database and the blob store answer',
        response: { 200: Type.Object({ success: Type.Literal(true), checks: Checks }) },
      },
    },
    async (request) => {
      const results = await Promise.allSettled([
        sql`select 1`.execute(app.database.db),
        app.blobStore.check(),
      ])
      const [database, storage] = results.map((r) => (r.status === 'fulfilled' ? 'ok' : 'unavailable'))
      if (database !== 'ok' || storage !== 'ok') {
        request.log.warn({ database, storage }, 'not ready')
        throw new ServiceUnavailableError(`Not ready: database ${database}, storage ${storage}.`)
      }
      return { success: true as const, checks: { database: 'ok' as const, storage: 'ok' as const } }
    },
  )
}

import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyServerOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.js'
import backends from './http/plugins/backends.js'
import errorHandler from './http/plugins/error-handler.js'
import openapi from './http/plugins/openapi.js'
import { apiV1Routes } from './http/routes/api-v1.js'
import { downloadRoutes } from './http/routes/download.js'
import { healthRoutes } from './http/routes/health.js'

export interface BuildOptions {
  /** Overrides of Fastify's logger (tests capture or silence it). */
  logger?: FastifyServerOptions['logger']
}

/** Builds the whole service from a validated config. Never listens: server.ts and tests do that. */
export async function buildApp(config: Config, options: BuildOptions = {}) {
  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      // Keys travel only in this header; never let them reach a log line.
      redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
    },
    genReqId: () => randomUUID(),
    trustProxy: config.trustProxy,
    // A 5 GiB upload may take long: no whole-request deadline, but idle sockets and slow headers time out.
    requestTimeout: 0,
    connectionTimeout: config.idleTimeoutMs,
    keepAliveTimeout: 5_000,
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false } },
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.server.headersTimeout = config.headersTimeoutMs

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id)
  })
  await app.register(errorHandler)
  await app.register(backends, { config })
  await app.register(openapi)
  await app.register(healthRoutes)
  await app.register(downloadRoutes)
  await app.register(apiV1Routes, { prefix: '/api/v1' })
  return app
}

export type App = Awaited<ReturnType<typeof buildApp>>

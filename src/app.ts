import { documentScope } from './http/route-scope.js'
import { randomUUID } from 'node:crypto'
import Fastify, { LogController, type FastifyServerOptions, type RouteOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.js'
import { batchedStdout } from './http/batched-stdout.js'
import type { ScryptCost } from './lib/passwords.js'
import backends, { type BackendsOptions } from './http/plugins/backends.js'
import downloadHost from './http/plugins/download-host.js'
import { ServiceUnavailableError } from './errors.js'
import errorHandler, { sendError, writeClientError } from './http/plugins/error-handler.js'
import { continueIfExpected } from './http/refused-body.js'
import garbageCollection from './http/plugins/garbage-collection.js'
import scanning from './http/plugins/scanning.js'
import webhookDispatch from './http/plugins/webhook-dispatch.js'
import idempotency from './http/plugins/idempotency.js'
import observability from './http/plugins/observability.js'
import openapi from './http/plugins/openapi.js'
import { apiV1Routes } from './http/routes/api-v1.js'
import { dashboardRoutes, rootRedirect } from './http/routes/dashboard.js'
import { uploadRequestPageRoutes } from './http/routes/upload-request-page.js'
import { downloadRoutes } from './http/routes/download.js'
import { healthRoutes } from './http/routes/health.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route sends `100 Continue` itself, after checks of its own (the upload's declared size). */
    continuesItself?: boolean
  }
}

/**
 * Fastify's own per-request lines give way to the access log (plugins/observability.ts): no
 * "incoming request" and "request completed" pair, and no "Route ... not found", which would show
 * a raw URL (a whole download token). Its other lines (stream errors and the like) stay.
 */
class AccessLogInstead extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(): void {}
  override routeNotFound(): void {}
}

/** The request headers that carry secrets, as pino redaction path segments. */
const SECRET_HEADERS = ['.authorization', '.cookie', '["x-csrf-token"]']

export interface BuildOptions {
  /** Overrides of Fastify's logger (tests capture or silence it). */
  logger?: FastifyServerOptions['logger']
  /** Where the app's own logger writes (default stdout); tests capture its lines here, redaction intact. */
  logStream?: { write(line: string): void }
  /** scrypt cost of new dashboard password hashes: only tests lower it. */
  passwordHashCost?: ScryptCost
  /** The services' clock (key and invitation expiry, gc grace): Date.now unless a test moves it. */
  now?: () => number
  /** Lease and hand-over timing of resumable uploads: only tests shorten them. */
  resumableTiming?: BackendsOptions['resumableTiming']
  /** The webhook dispatcher's timing: only tests shorten it. */
  webhookDispatch?: BackendsOptions['webhookDispatch']
  /** The virus scanner's timing (poll, lease, retry): only tests shorten it. */
  scanning?: BackendsOptions['scanning']
  /** Told of every route as it is registered (a test walks them all: test/contract/route-scopes.test.ts). */
  onRoute?: (route: RouteOptions) => void
}

/** Builds the whole service from a validated config. Never listens: server.ts and tests do that. */
export async function buildApp(config: Config, options: BuildOptions = {}) {
  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      // Keys travel only in Authorization, dashboard sessions in the cookie and their CSRF token in
      // its header: none may reach a log line. The wildcards also cover plugins' own trace lines
      // (@fastify/multipart logs `busboyOptions.headers`).
      redact: { paths: SECRET_HEADERS.flatMap((name) => [`headers${name}`, `*.headers${name}`]), censor: '[redacted]' },
      stream: options.logStream ?? batchedStdout(),
    },
    // One access-log line per request instead of Fastify's two (plugins/observability.ts).
    logController: new AccessLogInstead(),
    genReqId: () => randomUUID(),
    trustProxy: config.trustProxy,
    // Fastify answers 414 past 100 characters; a long unknown token must still be a 404 (and a long file_id a 400).
    routerOptions: { maxParamLength: 2048 },
    // Errors the router raises before any route (a badly encoded URL) get the API's error body too.
    frameworkErrors: (error, request, reply) => void sendError(request, reply, error),
    // A 5 GiB upload may take long: no whole-request deadline, but idle sockets and slow headers time out.
    requestTimeout: 0,
    connectionTimeout: config.idleTimeoutMs,
    keepAliveTimeout: 5_000,
    forceCloseConnections: 'idle',
    // Requests arriving while we shut down get the API's 503 body from the hook below instead.
    return503OnClosing: false,
    clientErrorHandler: writeClientError,
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false } },
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.server.headersTimeout = config.headersTimeoutMs
  // Node answers an Expect other than 100-continue with a bare 417 of its own (no JSON body):
  // serve such a request like any other instead, as RFC 9110 allows.
  app.server.on('checkExpectation', (request, response) => app.server.emit('request', request, response))
  // And it would send `100 Continue` before any check: a refused client would then send its whole
  // body for nothing. `100 Continue` goes out only once the request is going to be read (below,
  // and in the upload route after its own checks); a refusal goes out as the final answer instead.
  app.server.on('checkContinue', (request, response) => app.server.emit('request', request, response))

  if (options.onRoute) app.addHook('onRoute', options.onRoute)
  // Before the OpenAPI plugin, which reads each route's schema as it is registered.
  app.addHook('onRoute', documentScope)
  // First: its hooks see every request, even those the hooks below refuse.
  await app.register(observability, { metricsOn: config.metrics !== undefined })

  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  // Callback hooks, not async ones: they run on every request, and a promise per hook costs.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id)
    if (!closing) return done()
    reply.header('Connection', 'close')
    done(new ServiceUnavailableError('The server is shutting down; retry on another instance.'))
  })
  // Runs after authentication, plan and rate limits (onRequest): the body is about to be parsed.
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (!request.routeOptions.config.continuesItself) continueIfExpected(request.raw, reply.raw)
    done(null, payload)
  })
  await app.register(errorHandler)
  await app.register(downloadHost, { downloadHost: config.downloadHost })
  await app.register(backends, {
    config,
    ...(options.passwordHashCost ? { passwordHashCost: options.passwordHashCost } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.resumableTiming ? { resumableTiming: options.resumableTiming } : {}),
    ...(options.webhookDispatch ? { webhookDispatch: options.webhookDispatch } : {}),
    ...(options.scanning ? { scanning: options.scanning } : {}),
  })
  await app.register(garbageCollection)
  await app.register(webhookDispatch)
  await app.register(scanning)
  await app.register(idempotency)
  await app.register(openapi)
  await app.register(healthRoutes)
  await app.register(downloadRoutes)
  await app.register(apiV1Routes, { prefix: '/api/v1' })
  await app.register(dashboardRoutes, { prefix: '/dashboard' })
  await app.register(uploadRequestPageRoutes, { prefix: '/r' })
  await app.register(rootRedirect)
  return app
}

export type App = Awaited<ReturnType<typeof buildApp>>

import fp from 'fastify-plugin'
import { openBackends, type Backends, type OpenBackendsOptions } from '../../backends.js'
import type { Config } from '../../config.js'

declare module 'fastify' {
  // The app carries every backend of the composition root but its close(), which the app's own close runs.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging adds the members
  interface FastifyInstance extends Omit<Backends, 'close'> {}
}

/** Hands the backends of the composition root (src/backends.ts) to the routes, and closes them with the app. */
/** What the app may tune in the backends (tests: a low password cost, their own clock, short leases). */
export type BackendsOptions = Pick<OpenBackendsOptions, 'passwordHashCost' | 'now' | 'resumableTiming' | 'webhookDispatch' | 'scanning'>

export default fp(
  async (app, { config, passwordHashCost, now, resumableTiming, webhookDispatch, scanning }: { config: Config } & BackendsOptions) => {
    const backends = await openBackends(config, {
      ...(passwordHashCost ? { passwordHashCost } : {}),
      ...(now ? { now } : {}),
      ...(resumableTiming ? { resumableTiming } : {}),
      ...(webhookDispatch ? { webhookDispatch } : {}),
      ...(scanning ? { scanning } : {}),
      webhookEvents: app.metrics.webhookEvents,
      scanEvents: {
        scanned: (result, durationMs, failure) => {
          app.metrics.scanEvents.scanned(result, durationMs)
          // No verdict (clamd down, a timeout): the file stays pending and is tried again.
          if (failure) app.log.warn({ err: failure }, 'virus scan without a verdict; the file stays pending')
        },
      },
      onBackgroundError: (error) => app.log.error({ err: error }, 'background task failed'),
      onRedisError: (error) => app.log.warn({ err: error }, 'redis connection error'),
      uploadEvents: app.metrics.uploadEvents,
    })
    app.decorate('config', config)
    app.decorate('database', backends.database)
    app.decorate('blobStore', backends.blobStore)
    app.decorate('services', backends.services)
    app.decorate('redis', backends.redis)
    app.decorate('limiters', backends.limiters)
    app.addHook('onClose', () => backends.close())
  },
  { name: 'backends', dependencies: ['observability'] },
)

import fp from 'fastify-plugin'
import { Redis } from 'ioredis'
import type { Config } from '../../config.js'
import type { DatabaseHandle } from '../../db/dialect.js'
import { openDatabase } from '../../db/open-database.js'
import { IpLimiter } from '../../limits/ip-limiter.js'
import { MemoryRequestLimiter } from '../../limits/memory-request-limiter.js'
import { RedisRequestLimiter } from '../../limits/redis-request-limiter.js'
import type { RequestLimiter } from '../../limits/request-limiter.js'
import { createServices, type Services } from '../../services/create-services.js'
import type { BlobStore } from '../../storage/blob-store.js'
import { openBlobStore } from '../../storage/open-blob-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    database: DatabaseHandle
    blobStore: BlobStore
    services: Services
    /** Present when FILESHARE_REDIS_URL is set: the shared rate-limit state. */
    redis: Redis | undefined
    limiters: {
      requests: RequestLimiter
      authFailures: IpLimiter
      downloads: IpLimiter
      /** Failed dashboard sign-ins, per client IP and per email address tried. */
      signInFailuresByIp: IpLimiter
      signInFailuresByAccount: IpLimiter
    }
  }
}

/** Opens the database, the blob store and the limiters chosen by config, and closes them with the app. */
export default fp(
  async (app, { config }: { config: Config }) => {
    const database = await openDatabase(config)
    const blobStore = await openBlobStore(config)
    const logBackgroundError = (error: unknown) => app.log.error({ err: error }, 'background task failed')
    app.decorate('config', config)
    app.decorate('database', database)
    app.decorate('blobStore', blobStore)
    app.decorate('services', createServices(database, blobStore, config, logBackgroundError))
    // Without Redis each instance counts on its own, which is exact only for a single instance.
    const redis = config.redisUrl
      ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true })
      : undefined
    if (redis) {
      redis.on('error', (error) => app.log.warn({ err: error }, 'redis connection error'))
      await redis.connect()
    }
    const prefix = config.redisPrefix
    app.decorate('redis', redis)
    app.decorate('limiters', {
      requests: redis ? new RedisRequestLimiter(redis, `${prefix}requests:`) : new MemoryRequestLimiter(),
      authFailures: new IpLimiter(config.authFailuresPerMinute, `${prefix}auth-failures`, redis),
      downloads: new IpLimiter(config.downloadsPerMinute, `${prefix}downloads`, redis),
      signInFailuresByIp: new IpLimiter(config.signInFailuresPerMinute, `${prefix}sign-in-failures-ip`, redis),
      signInFailuresByAccount: new IpLimiter(config.signInAccountFailuresPerMinute, `${prefix}sign-in-failures-account`, redis),
    })
    app.addHook('onClose', async () => {
      await app.limiters.requests.close()
      redis?.disconnect()
      await Promise.all([database.db.destroy(), blobStore.close()])
    })
  },
  { name: 'backends' },
)

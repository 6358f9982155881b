import fp from 'fastify-plugin'
import type { Config } from '../../config.js'
import type { DatabaseHandle } from '../../db/dialect.js'
import { openDatabase } from '../../db/open-database.js'
import { IpLimiter } from '../../limits/ip-limiter.js'
import { MemoryRequestLimiter } from '../../limits/memory-request-limiter.js'
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
    limiters: {
      requests: RequestLimiter
      authFailures: IpLimiter
      downloads: IpLimiter
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
    app.decorate('limiters', {
      requests: new MemoryRequestLimiter(),
      authFailures: new IpLimiter(config.authFailuresPerMinute, 'auth-failures'),
      downloads: new IpLimiter(config.downloadsPerMinute, 'downloads'),
    })
    app.addHook('onClose', async () => {
      await app.limiters.requests.close()
      await database.db.destroy()
    })
  },
  { name: 'backends' },
)

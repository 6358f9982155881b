import type { Redis } from 'ioredis'
import type { Config } from './config.js'
import type { DatabaseHandle } from './db/dialect.js'
import { openDatabase } from './db/open-database.js'
import { MemoryRequestLimiter } from './limits/memory-request-limiter.js'
import { PerKeyLimiter } from './limits/per-key-limiter.js'
import { RedisRequestLimiter } from './limits/redis-request-limiter.js'
import type { RequestLimiter } from './limits/request-limiter.js'
import { createServices, type ServiceOptions, type Services } from './services/create-services.js'
import type { BlobStore } from './storage/blob-store.js'
import { openBlobStore } from './storage/open-blob-store.js'
import { BackendUnreachableError } from './errors.js'
import { isConnectionError } from './lib/network-errors.js'
import { LINK_PASSWORD_FAILURES, LINK_PASSWORD_FAILURE_WINDOW_S } from './services/links.js'

/** Runs `open`, turning a failed connection into BackendUnreachableError. */
async function reaching<T>(backend: string, open: () => Promise<T>): Promise<T> {
  try {
    return await open()
  } catch (error) {
    throw isConnectionError(error) ? new BackendUnreachableError(backend, error) : error
  }
}

export interface Limiters {
  requests: RequestLimiter
  authFailures: PerKeyLimiter
  downloads: PerKeyLimiter
  /** Failed dashboard sign-ins: per client IP, per client IP and email pair, and per email (hourly). */
  signInFailuresByIp: PerKeyLimiter
  signInFailuresByIpAndEmail: PerKeyLimiter
  signInFailuresByEmail: PerKeyLimiter
  linkPasswordFailures: PerKeyLimiter
}

/** Everything the service runs on, chosen once from config. */
export interface Backends {
  config: Config
  database: DatabaseHandle
  blobStore: BlobStore
  services: Services
  /** Present when FILESHARE_REDIS_URL is set (and not opened with `sharedLimits: false`): the shared rate-limit state. */
  redis: Redis | undefined
  limiters: Limiters
  /** Closes everything that was opened. */
  close(): Promise<void>
}

export interface OpenBackendsOptions extends ServiceOptions {
  /**
   * Keep rate-limit state in Redis when FILESHARE_REDIS_URL is set (default true). The CLI serves no
   * requests: it says false, so it neither needs nor waits for Redis.
   */
  sharedLimits?: boolean
  /** A Redis connection error after start-up (the limiters then answer 503 until it is back). */
  onRedisError?: (error: unknown) => void
}

/**
 * The one composition root: the server, the CLI and the tests all open their backends here. When
 * a step fails, whatever the earlier steps opened is closed before the error is thrown.
 */
export async function openBackends(config: Config, options: OpenBackendsOptions = {}): Promise<Backends> {
  const closers: Array<() => Promise<void> | void> = []
  const closeAll = async () => {
    // Last opened, first closed; every closer runs even if an earlier one fails.
    const results = await Promise.allSettled(
      closers
        .splice(0)
        .reverse()
        .map(async (close) => close()),
    )
    const failure = results.find((result) => result.status === 'rejected')
    if (failure) throw failure.reason
  }
  try {
    const database = await reaching('The database (FILESHARE_DATABASE_URL)', () => openDatabase(config))
    closers.push(() => database.db.destroy())
    const blobStore = await openBlobStore(config)
    closers.push(() => blobStore.close())
    // Without Redis each instance counts on its own, which is exact only for a single instance.
    let redis: Redis | undefined
    if (config.redisUrl && (options.sharedLimits ?? true)) {
      // Loaded only here: the embedded stack never needs it, and it costs every start about 0.15 s.
      const { Redis } = await import('ioredis')
      const client = new Redis(config.redisUrl, {
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        lazyConnect: true,
        // A Redis that stalls (rather than refuses) fails the command, hence the request with 503.
        commandTimeout: config.backendTimeoutMs,
      })
      closers.push(() => client.disconnect())
      // connect() itself fails only with "Connection is closed": the reason came as an 'error' event.
      let lastError: unknown
      client.on('error', (error: unknown) => {
        lastError = error
        ;(options.onRedisError ?? (() => {}))(error)
      })
      await reaching('Redis (FILESHARE_REDIS_URL)', () => client.connect().catch((error: unknown) => Promise.reject(lastError ?? error)))
      redis = client
    }
    const limiters = openLimiters(config, redis)
    closers.push(() => limiters.requests.close())
    const services = createServices(database, blobStore, limiters, config, options)
    return { config, database, blobStore, services, redis, limiters, close: closeAll }
  } catch (error) {
    await closeAll().catch(() => {})
    throw error
  }
}

function openLimiters(config: Config, redis: Redis | undefined): Limiters {
  const prefix = config.redisPrefix
  return {
    requests: redis ? new RedisRequestLimiter(redis, `${prefix}requests:`) : new MemoryRequestLimiter(),
    authFailures: new PerKeyLimiter(config.authFailuresPerMinute, `${prefix}auth-failures`, redis),
    downloads: new PerKeyLimiter(config.downloadsPerMinute, `${prefix}downloads`, redis),
    signInFailuresByIp: new PerKeyLimiter(config.signInFailuresPerMinute, `${prefix}sign-in-failures-ip`, redis),
    signInFailuresByIpAndEmail: new PerKeyLimiter(config.signInAccountFailuresPerMinute, `${prefix}sign-in-failures-ip-email`, redis),
    signInFailuresByEmail: new PerKeyLimiter(config.signInEmailFailuresPerHour, `${prefix}sign-in-failures-email`, redis, 3600),
    linkPasswordFailures: new PerKeyLimiter(
      LINK_PASSWORD_FAILURES,
      `${prefix}link-password-failures`,
      redis,
      LINK_PASSWORD_FAILURE_WINDOW_S,
    ),
  }
}

import type { Redis } from 'ioredis'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import { redisUnavailable } from './redis-unavailable.js'

/**
 * A fixed per-minute budget per key: a client IP (failed authentications, downloads, failed
 * sign-ins) or a hashed email address (failed sign-ins per account). From rate-limiter-flexible:
 * in this process, or in Redis when the service runs as several instances.
 */
export class PerKeyLimiter {
  private readonly limiter: RateLimiterAbstract

  constructor(perMinute: number, keyPrefix: string, redis?: Redis) {
    const options = { points: perMinute, duration: 60, keyPrefix }
    this.limiter = redis ? new RateLimiterRedis({ ...options, storeClient: redis }) : new RateLimiterMemory(options)
  }

  /** Seconds to wait when `key`'s budget is already spent, else 0; counts nothing. */
  async blockedFor(key: string): Promise<number> {
    try {
      const result = await this.limiter.get(key)
      return result && result.consumedPoints >= this.limiter.points ? Math.max(1, Math.ceil(result.msBeforeNext / 1000)) : 0
    } catch (error) {
      throw redisUnavailable(error)
    }
  }

  /** Counts one event for `key`; resolves to the seconds to wait when the budget is spent, else 0. */
  async hit(key: string): Promise<number> {
    try {
      await this.limiter.consume(key)
      return 0
    } catch (result) {
      if (result instanceof RateLimiterRes) return Math.max(1, Math.ceil(result.msBeforeNext / 1000))
      // Only the Redis store fails; the in-memory one always answers.
      throw redisUnavailable(result)
    }
  }
}

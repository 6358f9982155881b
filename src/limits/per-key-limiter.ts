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

  /** `perMinute` events per window of `windowSeconds` (60 unless told: a per-minute budget). */
  constructor(perMinute: number, keyPrefix: string, redis?: Redis, windowSeconds = 60) {
    const options = { points: perMinute, duration: windowSeconds, keyPrefix }
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

  /**
   * Counts one event for `key` first, atomically (in Redis too), and resolves to the seconds to
   * wait when that went past the budget, else 0. Concurrent callers cannot all slip under the
   * budget, as they could with blockedFor then hit; a past-budget call counts too, but a fixed
   * window never grows. `giveBack` undoes the count when the event turns out not to be a failure.
   */
  async take(key: string): Promise<number> {
    return this.hit(key)
  }

  /** Gives back one event counted for `key` by `take` (a sign-in that succeeded). */
  async giveBack(key: string): Promise<void> {
    try {
      await this.limiter.reward(key, 1)
    } catch (error) {
      throw redisUnavailable(error)
    }
  }
}

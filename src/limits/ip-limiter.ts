import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible'

/** A fixed per-minute budget per client IP (failed authentications, downloads). */
export class IpLimiter {
  private readonly limiter: RateLimiterMemory

  constructor(perMinute: number, keyPrefix: string) {
    this.limiter = new RateLimiterMemory({ points: perMinute, duration: 60, keyPrefix })
  }

  /** Counts one event for `ip`; resolves to the seconds to wait when the budget is spent, else 0. */
  async hit(ip: string): Promise<number> {
    try {
      await this.limiter.consume(ip)
      return 0
    } catch (result) {
      if (result instanceof RateLimiterRes) return Math.max(1, Math.ceil(result.msBeforeNext / 1000))
      throw result
    }
  }
}

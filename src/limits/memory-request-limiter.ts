import { decide, type LimitDecision, type RequestLimiter, type RequestLimits } from './request-limiter.js'
import { secondsUntilUtcMidnight, utcDay } from '../lib/utc-day.js'

const WINDOW_MS = 60_000

interface AccountWindow {
  /** Times of the requests counted in the last 60 s, oldest first. */
  times: number[]
  day: string
  dayCount: number
}

/**
 * An exact sliding-log limiter for one process. rate-limiter-flexible only offers fixed windows
 * and counts refused requests, which the API contract rules out; this keeps the log instead.
 */
export class MemoryRequestLimiter implements RequestLimiter {
  private readonly windows = new Map<string, AccountWindow>()
  private calls = 0

  consume(accountKey: string, limits: RequestLimits, now = Date.now()): LimitDecision | Promise<LimitDecision> {
    const day = utcDay(now)
    let window = this.windows.get(accountKey)
    if (!window) {
      window = { times: [], day, dayCount: 0 }
      this.windows.set(accountKey, window)
    }
    if (window.day !== day) {
      window.day = day
      window.dayCount = 0
    }
    const { times } = window
    while (times.length > 0 && times[0]! <= now - WINDOW_MS) times.shift()

    const allowed = times.length < limits.perMinute && window.dayCount < limits.perDay
    if (allowed) {
      times.push(now)
      window.dayCount += 1
    }
    if (++this.calls % 10_000 === 0) this.sweep(now)
    return decide({
      limits,
      allowed,
      minuteUsed: times.length,
      minuteResetMs: times.length > 0 ? times[0]! + WINDOW_MS - now : WINDOW_MS,
      dayUsed: window.dayCount,
      dayResetSeconds: secondsUntilUtcMidnight(now),
    })
  }

  async peek(accountKey: string, limits: RequestLimits, now = Date.now()): Promise<LimitDecision> {
    const window = this.windows.get(accountKey)
    const times = window?.times.filter((time) => time > now - WINDOW_MS) ?? []
    const dayUsed = window && window.day === utcDay(now) ? window.dayCount : 0
    return decide({
      limits,
      allowed: times.length < limits.perMinute && dayUsed < limits.perDay,
      minuteUsed: times.length,
      minuteResetMs: times.length > 0 ? times[0]! + WINDOW_MS - now : WINDOW_MS,
      dayUsed,
      dayResetSeconds: secondsUntilUtcMidnight(now),
    })
  }

  async dayUsage(accountKey: string, now = Date.now()): Promise<number> {
    const window = this.windows.get(accountKey)
    return window && window.day === utcDay(now) ? window.dayCount : 0
  }

  /** Drops accounts idle for a minute whose day has passed, so memory follows active accounts. */
  private sweep(now: number): void {
    const day = utcDay(now)
    for (const [key, window] of this.windows) {
      const idle = window.times.length === 0 || window.times[window.times.length - 1]! <= now - WINDOW_MS
      if (idle && window.day !== day) this.windows.delete(key)
    }
  }

  async close(): Promise<void> {}
}

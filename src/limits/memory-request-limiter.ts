import { decide, type LimitDecision, type RequestLimiter, type RequestLimits } from './request-limiter.js'
import { secondsUntilUtcMidnight, utcDay } from '../lib/utc-day.js'

const WINDOW_MS = 60_000

interface AccountWindow {
  /** Times of the requests counted in the last 60 s, oldest first, from `head` on. */
  times: number[]
  /** Where the window starts in `times`: entries before it have left the window. */
  head: number
  day: string
  dayCount: number
}

/**
 * Moves the window's start past the requests older than 60 s. Advancing an index, not
 * `Array.prototype.shift`: at a high per-minute limit the log outgrows V8's regular heap pages, and
 * there every shift copied the whole array, so each request cost a copy of a minute's log (a
 * server at 15,000 requests/s slowed to a crawl 60 s after its first). The dropped part is cut off
 * once it is half of the array, so each entry is copied at most once on average.
 */
function expire(window: AccountWindow, now: number): void {
  const { times } = window
  let { head } = window
  while (head < times.length && times[head]! <= now - WINDOW_MS) head++
  if (head > 0 && head * 2 >= times.length) {
    window.times = times.slice(head)
    head = 0
  }
  window.head = head
}

/** Requests counted in the last 60 s (after expire). */
function minuteUsed(window: AccountWindow): number {
  return window.times.length - window.head
}

/** ms until the oldest request in the window leaves it; a whole window when it is empty. */
function minuteResetMs(window: AccountWindow, now: number): number {
  return window.head < window.times.length ? window.times[window.head]! + WINDOW_MS - now : WINDOW_MS
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
      window = { times: [], head: 0, day, dayCount: 0 }
      this.windows.set(accountKey, window)
    }
    if (window.day !== day) {
      window.day = day
      window.dayCount = 0
    }
    expire(window, now)
    const allowed = minuteUsed(window) < limits.perMinute && window.dayCount < limits.perDay
    if (allowed) {
      window.times.push(now)
      window.dayCount += 1
    }
    if (++this.calls % 10_000 === 0) this.sweep(now)
    return decide({
      limits,
      allowed,
      minuteUsed: minuteUsed(window),
      minuteResetMs: minuteResetMs(window, now),
      dayUsed: window.dayCount,
      dayResetSeconds: secondsUntilUtcMidnight(now),
    })
  }

  async peek(accountKey: string, limits: RequestLimits, now = Date.now()): Promise<LimitDecision> {
    const window = this.windows.get(accountKey)
    // Dropping what has left the window changes no count; the entries were dead already.
    if (window) expire(window, now)
    const used = window ? minuteUsed(window) : 0
    const dayUsed = window && window.day === utcDay(now) ? window.dayCount : 0
    return decide({
      limits,
      allowed: used < limits.perMinute && dayUsed < limits.perDay,
      minuteUsed: used,
      minuteResetMs: window ? minuteResetMs(window, now) : WINDOW_MS,
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
      const idle = minuteUsed(window) === 0 || window.times[window.times.length - 1]! <= now - WINDOW_MS
      if (idle && window.day !== day) this.windows.delete(key)
    }
  }

  async close(): Promise<void> {}
}

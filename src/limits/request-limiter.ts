export interface RequestLimits {
  perMinute: number
  perDay: number
}

/** The outcome of one request against an account's limits, for the RateLimit-* headers. */
export interface LimitDecision {
  allowed: boolean
  /** The window that binds first: its limit, what is left of it, and seconds until it frees up. */
  limit: number
  remaining: number
  resetSeconds: number
  /** Set when refused: whole seconds until a request can pass. */
  retryAfterSeconds?: number
}

/**
 * Counts an account's requests in a rolling 60-second window and in the UTC calendar day.
 * A refused request counts in neither window.
 */
export interface RequestLimiter {
  /** A limiter that knows at once (the in-memory one) answers without a promise: every API call asks. */
  consume(accountKey: string, limits: RequestLimits, now?: number): LimitDecision | Promise<LimitDecision>
  /**
   * The decision consume would give, without counting anything: the RateLimit-* figures of a
   * response the limits do not count (a resumable upload's chunk, docs/api.md).
   */
  peek(accountKey: string, limits: RequestLimits, now?: number): Promise<LimitDecision>
  /** Requests counted for the account in the current UTC day; counts nothing (the dashboard's usage page). */
  dayUsage(accountKey: string, now?: number): Promise<number>
  close(): Promise<void>
}

/** The shared arithmetic of every limiter: from the counts in both windows to a decision. */
export function decide(input: {
  limits: RequestLimits
  minuteUsed: number
  /** ms until the oldest request of the minute window leaves it (0 when the window is empty). */
  minuteResetMs: number
  dayUsed: number
  dayResetSeconds: number
  allowed: boolean
}): LimitDecision {
  const { limits, minuteUsed, dayUsed, dayResetSeconds, allowed } = input
  const minuteReset = Math.max(1, Math.ceil(input.minuteResetMs / 1000))
  const minuteRemaining = Math.max(0, limits.perMinute - minuteUsed)
  const dayRemaining = Math.max(0, limits.perDay - dayUsed)
  // The window with fewer requests left binds first; on a tie, the one that frees up later.
  const minuteBinds = minuteRemaining < dayRemaining || (minuteRemaining === dayRemaining && minuteReset >= dayResetSeconds)
  const decision: LimitDecision = minuteBinds
    ? { allowed, limit: limits.perMinute, remaining: minuteRemaining, resetSeconds: minuteReset }
    : { allowed, limit: limits.perDay, remaining: dayRemaining, resetSeconds: dayResetSeconds }
  if (!allowed) {
    const waits = []
    if (minuteUsed >= limits.perMinute) waits.push(minuteReset)
    if (dayUsed >= limits.perDay) waits.push(dayResetSeconds)
    decision.retryAfterSeconds = Math.max(1, ...waits)
  }
  return decision
}

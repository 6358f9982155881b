const DAY_MS = 86_400_000

/** The UTC calendar day of `now`, as YYYY-MM-DD. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10)
}

/** Whole seconds until the next UTC midnight (at least 1). */
export function secondsUntilUtcMidnight(now: number): number {
  return Math.max(1, Math.ceil((DAY_MS - (now % DAY_MS)) / 1000))
}

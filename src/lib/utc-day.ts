const DAY_MS = 86_400_000

let lastDay = NaN
let lastDayText = ''

/**
 * The UTC calendar day of `now`, as YYYY-MM-DD. The last day's text is kept: every API request asks
 * (the rate limiter), a list page asks a hundred times (upload dates), and the day rarely changes.
 */
export function utcDay(now: number): string {
  const day = Math.floor(now / DAY_MS)
  if (day !== lastDay) {
    lastDayText = new Date(now).toISOString().slice(0, 10)
    lastDay = day
  }
  return lastDayText
}

/** Whole seconds until the next UTC midnight (at least 1). */
export function secondsUntilUtcMidnight(now: number): number {
  return Math.max(1, Math.ceil((DAY_MS - (now % DAY_MS)) / 1000))
}

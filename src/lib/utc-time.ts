import { utcDay } from './utc-day.js'

const DAY_MS = 86_400_000
/** Where toISOString stops writing four-digit years (10000-01-01). */
const YEAR_10000_MS = 253_402_300_800_000
const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'))

/**
 * `YYYY-MM-DD HH:MM:SS` in UTC, as `toISOString().slice(0, 19).replace('T', ' ')` writes it: every
 * time the API shows. A list page formats a hundred dates, mostly of the same day: utcDay keeps the
 * day's text and the time is plain arithmetic (toISOString per row was a tenth of GET /files' CPU).
 */
export function formatUtcTime(epochMs: number): string {
  if (!(epochMs >= 0 && epochMs < YEAR_10000_MS)) return new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ')
  const seconds = Math.floor((epochMs % DAY_MS) / 1000)
  return `${utcDay(epochMs)} ${TWO_DIGITS[Math.floor(seconds / 3600)]}:${TWO_DIGITS[Math.floor(seconds / 60) % 60]}:${TWO_DIGITS[seconds % 60]}`
}

/** formatUtcTime, or null for no time. */
export function formatOptionalUtcTime(epochMs: number | null): string | null {
  return epochMs === null ? null : formatUtcTime(epochMs)
}

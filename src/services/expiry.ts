import { InvalidParameterError } from '../errors.js'

/** The longest lifetime a file or link can be given: 10 years, in seconds. */
export const MAX_EXPIRES_IN_SECONDS = 315_360_000

/** An expiry as the API takes it: seconds from now, or a UTC time (`null` removes one). */
export interface ExpiryInput {
  expires_in?: number
  expires_at?: string | null
}

const UTC_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/

/** Epoch ms of `YYYY-MM-DD HH:MM:SS` in UTC; undefined unless it is a real time in that exact form. */
export function parseUtcTime(text: string): number | undefined {
  const match = UTC_TIME.exec(text)
  if (!match) return undefined
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, number, number, number, number, number]
  const ms = Date.UTC(year, month - 1, day, hour, minute, second)
  const back = new Date(ms)
  // Date.UTC rolls 2026-02-30 over to March: only a date that reads back the same is real.
  const real =
    back.getUTCFullYear() === year &&
    back.getUTCMonth() === month - 1 &&
    back.getUTCDate() === day &&
    back.getUTCHours() === hour &&
    back.getUTCMinutes() === minute &&
    back.getUTCSeconds() === second
  return real ? ms : undefined
}

/** Checks an expiry in seconds (1..315360000); `name` is the field or header it came in. */
export function checkExpiresIn(seconds: number, name = 'expires_in'): number {
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > MAX_EXPIRES_IN_SECONDS) {
    throw new InvalidParameterError(`${name} must be a whole number of seconds from 1 to ${MAX_EXPIRES_IN_SECONDS} (10 years).`)
  }
  return seconds
}

/**
 * The expiry (epoch ms) that `input` asks for at `now`: undefined when it names none, null when it
 * removes one (`expires_at: null`). Refuses both fields together, a malformed time, and a time that
 * is not in the future.
 */
export function expiryFromInput(input: ExpiryInput, now: number): number | null | undefined {
  if (input.expires_in !== undefined && input.expires_at !== undefined) {
    throw new InvalidParameterError('expires_in and expires_at cannot be given together; give one of them.')
  }
  if (input.expires_in !== undefined) return now + checkExpiresIn(input.expires_in) * 1000
  if (input.expires_at === undefined || input.expires_at === null) return input.expires_at
  const at = parseUtcTime(input.expires_at)
  if (at === undefined) throw new InvalidParameterError('expires_at must be a UTC time in the form YYYY-MM-DD HH:MM:SS.')
  if (at <= now) throw new InvalidParameterError('expires_at must be in the future.')
  if (at > now + MAX_EXPIRES_IN_SECONDS * 1000) throw new InvalidParameterError('expires_at must be at most 10 years ahead.')
  return at
}

import { InvalidParameterError } from '../errors.js'

/** Plain decimal digits: no sign, exponent, hex, spaces or leading zeros (Number() would take them all). */
const DECIMAL = /^(0|[1-9][0-9]*)$/
/** Echoed values are cut here, so that a 400-digit number does not come back whole. */
const SHOWN_LENGTH = 40

/** The value as a message shows it: quoted, escaped, and cut to 40 characters. */
export function shownValue(raw: string): string {
  return JSON.stringify(raw.length > SHOWN_LENGTH ? `${raw.slice(0, SHOWN_LENGTH)}…` : raw)
}

/**
 * Reads an integer parameter given as text (query, path, CLI). Anything but plain decimal digits
 * within [min, max] (at most 2^53 - 1, whatever its length) is refused with the one message style
 * of the API: `limit must be an integer from 1 to 100, got "500".`
 */
export function parseInteger(name: string, raw: string, min: number, max: number): number {
  const value = DECIMAL.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidParameterError(`${name} must be an integer from ${min} to ${max}, got ${shownValue(raw)}.`)
  }
  return value
}

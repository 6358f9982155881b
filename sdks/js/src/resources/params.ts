// What the resources send: ids in paths, and JSON bodies built from the caller's options.
import { ConfigurationError } from '../errors.js'
import { formatApiDate } from '../records.js'
import type { DateInput } from '../types.js'

/** A file or link id for a path: a positive integer, checked before anything is sent. */
export function resourceId(id: number | string, what: 'file' | 'link'): string {
  const text = String(id)
  if (!/^[1-9]\d*$/.test(text)) throw new ConfigurationError(`a ${what} id is a positive integer, got ${JSON.stringify(text).slice(0, 40)}`)
  return text
}

/**
 * The JSON body of a create or update: every field the caller gave (so that the server refuses a
 * misspelt one with 400 rather than the SDK dropping it), `null` kept (it clears a field), fields
 * left `undefined` and `signal` left out; `expires_at` may be a `Date`.
 */
export function jsonBody(options: object): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(options)) {
    if (name === 'signal' || value === undefined) continue
    body[name] = name === 'expires_at' && value !== null ? formatApiDate(value as DateInput) : value
  }
  return body
}

/** `Fileshare-Expires-In` for an upload's `expires_in`, when given (multipart and tus creation alike). */
export function expiryHeader(expiresIn: number | undefined): Record<string, string> {
  return expiresIn === undefined ? {} : { 'fileshare-expires-in': String(expiresIn) }
}

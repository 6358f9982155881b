// What the resources send: ids in paths, and JSON bodies built from the caller's options.
import { ConfigurationError } from '../errors.js'
import { formatApiDate } from '../records.js'
import type { DateInput, FileQuery } from '../types.js'

/** A file, link, webhook, delivery or upload request id for a path: a positive integer, checked before anything is sent. */
export function resourceId(id: number | string, what: 'file' | 'link' | 'webhook' | 'delivery' | 'upload request'): string {
  const text = String(id)
  if (!/^[1-9]\d*$/.test(text))
    throw new ConfigurationError(
      `${/^[aeiou]/.test(what) ? 'an' : 'a'} ${what} id is a positive integer, got ${JSON.stringify(text).slice(0, 40)}`,
    )
  return text
}

/** Options of a call that are not fields of the API. */
const CALL_OPTIONS = new Set(['signal', 'idempotencyKey', 'timeoutMs', 'maxRetries', 'headers'])

/**
 * The JSON body of a create or update: every field the caller gave (so that the server refuses a
 * misspelt one with 400 rather than the SDK dropping it), `null` kept (it clears a field), fields
 * left `undefined` and the call's own options (`signal`, `idempotencyKey`) left out; `expires_at`
 * may be a `Date`.
 */
export function jsonBody(options: object): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(options)) {
    if (CALL_OPTIONS.has(name) || value === undefined) continue
    body[name] = name === 'expires_at' && value !== null ? formatApiDate(value as DateInput) : value
  }
  return body
}

/** `Fileshare-Expires-In` for an upload's `expires_in`, when given (multipart and tus creation alike). */
export function expiryHeader(expiresIn: number | undefined): Record<string, string> {
  return expiresIn === undefined ? {} : { 'fileshare-expires-in': String(expiresIn) }
}

/** Where a UUID v4 cannot come from `crypto.randomUUID` (browser pages served over plain http). */
function uuidV4(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * The `Idempotency-Key` header of one creating call: the caller's key (1 to 255 printable ASCII
 * characters, checked before anything is sent), else a new UUID v4. Made once per call and sent on
 * every attempt of it, so that the server answers a retry with its first answer.
 */
export function idempotencyHeader(key: string | undefined): { 'idempotency-key': string } {
  if (key === undefined) {
    return { 'idempotency-key': typeof globalThis.crypto.randomUUID === 'function' ? globalThis.crypto.randomUUID() : uuidV4() }
  }
  if (typeof key !== 'string' || !/^[\x20-\x7e]{1,255}$/.test(key)) {
    throw new ConfigurationError('idempotencyKey must be 1 to 255 printable ASCII characters')
  }
  return { 'idempotency-key': key }
}

/** `before_id` or its alias `beforeId` (the same value when both are given). */
export function beforeIdOption(options: { before_id?: number | undefined; beforeId?: number | undefined }): number | undefined {
  const { before_id: snake, beforeId: camel } = options
  if (snake !== undefined && camel !== undefined && snake !== camel) {
    throw new ConfigurationError('before_id and beforeId are the same option: give one')
  }
  return snake ?? camel
}

/** Whether a file list is in upload order (either direction): the orders that page by `before_id`. */
export function byUploadDate({ sort }: FileQuery): boolean {
  return sort === undefined || sort === 'upload_date'
}

/** One value or several, as the list a repeated query parameter is sent from. */
export function listOf<T extends string>(value: T | readonly T[] | undefined): readonly T[] | undefined {
  return value === undefined ? undefined : typeof value === 'string' ? [value] : value
}

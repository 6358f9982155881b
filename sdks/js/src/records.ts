// Turning the API's JSON into the SDK's records.
import { ConfigurationError, FileshareError } from './errors.js'
import type {
  ApiAuditEvent,
  ApiCurrentKey,
  ApiFile,
  ApiLink,
  AuditEvent,
  AuditEventList,
  CurrentKey,
  DateInput,
  FileList,
  FileRecord,
  Link,
  StatsResult,
  UploadRequest,
  UploadRequestFileList,
  ApiUploadRequest,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookWithSecret,
  ApiWebhook,
  ApiWebhookDelivery,
} from './types.js'

export type RawFile = ApiFile & Record<string, unknown>
export type RawLink = ApiLink & Record<string, unknown>
export type RawAuditEvent = ApiAuditEvent & Record<string, unknown>
export type RawWebhook = ApiWebhook & Record<string, unknown>
export type RawWebhookDelivery = ApiWebhookDelivery & Record<string, unknown>
export type RawUploadRequest = ApiUploadRequest & Record<string, unknown>

/** `YYYY-MM-DD HH:MM:SS` (UTC) as a Date; also accepts ISO 8601. */
export function parseUploadDate(value: string): Date {
  const match = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/.exec(value)
  if (!match) return new Date(Number.NaN)
  const zone = match[8] ?? 'Z'
  return new Date(`${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}${match[7] ?? ''}${zone}`)
}

/** A time as the API writes it: `YYYY-MM-DD HH:MM:SS` (UTC). A string is sent as it is. */
export function formatApiDate(value: DateInput): string {
  if (typeof value === 'string') return value
  if (Number.isNaN(value.getTime())) throw new ConfigurationError('an invalid Date')
  return value.toISOString().slice(0, 19).replace('T', ' ')
}

function optionalDate(value: string | null | undefined): Date | null {
  return typeof value === 'string' ? parseUploadDate(value) : null
}

/**
 * The API's object with `success` dropped and every other field kept (also ones this SDK does not
 * know), plus `extras`, which are not enumerable: JSON.stringify(record) gives the API's object back.
 */
function record<T>(raw: Record<string, unknown>, idField: string, what: string, extras: Record<string, unknown>): T {
  if (!raw || typeof raw !== 'object' || typeof raw[idField] !== 'number') throw new FileshareError(`the answer holds no ${what} object`)
  const { success: _success, ...fields } = raw
  for (const [name, value] of Object.entries(extras)) Object.defineProperty(fields, name, { value, enumerable: false })
  return fields as T
}

/**
 * A file record from the API's object. A server from before virus scanning sends no `scan`: the
 * record has `scan: null` then, as from a server that does not scan.
 */
export function toFileRecord(raw: RawFile): FileRecord {
  const withScan: RawFile = raw !== null && typeof raw === 'object' && !('scan' in raw) ? { ...(raw as RawFile), scan: null } : raw
  return record<FileRecord>(withScan, 'file_id', 'file', {
    uploaded_at: parseUploadDate(raw?.upload_date),
    expiry: optionalDate(raw?.expires_at),
  })
}

/** A link record from the API's object. */
export function toLink(raw: RawLink): Link {
  const max = raw?.max_downloads
  return record<Link>(raw, 'link_id', 'link', {
    created: parseUploadDate(raw?.created_at),
    expiry: optionalDate(raw?.expires_at),
    downloads_left: typeof max === 'number' ? Math.max(0, max - raw.download_count) : null,
  })
}

export function toFileList(raw: { files?: RawFile[]; pagination?: FileList['pagination'] }): FileList {
  if (!raw || !Array.isArray(raw.files) || !raw.pagination) throw new FileshareError('the answer holds no file list')
  return { files: raw.files.map(toFileRecord), pagination: { ...raw.pagination } }
}

export function toStats(raw: Record<string, unknown>): StatsResult {
  const { success: _success, ...fields } = raw
  if (!fields.stats || !fields.limits) throw new FileshareError('the answer holds no statistics')
  return fields as unknown as StatsResult
}

/** `GET /key`'s answer as a {@link CurrentKey}: the `key` object's fields and `plan`. */
export function toCurrentKey(raw: { key?: ApiCurrentKey & Record<string, unknown>; plan?: unknown }): CurrentKey {
  const key = raw?.key
  if (!key || typeof key !== 'object' || typeof key.key_id !== 'number') throw new FileshareError('the answer holds no key object')
  return record<CurrentKey>({ ...key, plan: raw.plan }, 'key_id', 'key', {
    created: parseUploadDate(key.created_at),
    expiry: optionalDate(key.expires_at),
    last_used: optionalDate(key.last_used_at),
  })
}

/** An audit event from the API's object. */
export function toAuditEvent(raw: RawAuditEvent): AuditEvent {
  return record<AuditEvent>(raw, 'event_id', 'audit event', { occurred_at: parseUploadDate(raw?.at) })
}

export function toAuditEventList(raw: { events?: RawAuditEvent[]; pagination?: AuditEventList['pagination'] }): AuditEventList {
  if (!raw || !Array.isArray(raw.events) || !raw.pagination) throw new FileshareError('the answer holds no audit event list')
  return { events: raw.events.map(toAuditEvent), pagination: { ...raw.pagination } }
}

/** A webhook endpoint from the API's object (a `secret` in it is kept). */
export function toWebhook(raw: RawWebhook): Webhook {
  return record<Webhook>(raw, 'webhook_id', 'webhook', { created: parseUploadDate(raw?.created_at) })
}

/** The endpoint of a create or rotate-secret answer, which must hold its `secret`. */
export function toWebhookWithSecret(raw: RawWebhook): WebhookWithSecret {
  const webhook = toWebhook(raw) as Webhook & { secret?: unknown }
  if (typeof webhook.secret !== 'string' || webhook.secret === '') throw new FileshareError('the answer holds no webhook secret')
  return webhook as WebhookWithSecret
}

/** A delivery from the API's object. */
export function toWebhookDelivery(raw: RawWebhookDelivery): WebhookDelivery {
  return record<WebhookDelivery>(raw, 'delivery_id', 'delivery', {
    created: parseUploadDate(raw?.created_at),
    next_attempt: optionalDate(raw?.next_attempt_at),
  })
}

export function toWebhookDeliveryList(raw: {
  deliveries?: RawWebhookDelivery[]
  pagination?: WebhookDeliveryList['pagination']
}): WebhookDeliveryList {
  if (!raw || !Array.isArray(raw.deliveries) || !raw.pagination) throw new FileshareError('the answer holds no delivery list')
  return { deliveries: raw.deliveries.map(toWebhookDelivery), pagination: { ...raw.pagination } }
}

/** An upload request from the API's object. */
export function toUploadRequest(raw: RawUploadRequest): UploadRequest {
  const left = (max: unknown, used: unknown) => (typeof max === 'number' ? Math.max(0, max - Number(used ?? 0)) : null)
  return record<UploadRequest>(raw, 'request_id', 'upload request', {
    created: parseUploadDate(raw?.created_at),
    expiry: parseUploadDate(raw?.expires_at),
    files_left: left(raw?.max_files, raw?.files_received),
    bytes_left: left(raw?.max_total_size, raw?.bytes_received),
  })
}

export function toUploadRequestFileList(raw: {
  files?: RawFile[]
  pagination?: UploadRequestFileList['pagination']
}): UploadRequestFileList {
  if (!raw || !Array.isArray(raw.files) || !raw.pagination) throw new FileshareError('the answer holds no file list')
  return { files: raw.files.map(toFileRecord), pagination: { ...raw.pagination } }
}

/**
 * An audit `since` for the query: a `Date` as `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds, rounded
 * down); a string is sent as it is.
 */
export function formatSince(value: Date | string): string {
  if (typeof value === 'string') return value
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new ConfigurationError('since must be a valid Date or a string')
  return `${value.toISOString().slice(0, 19)}Z`
}

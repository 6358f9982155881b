// Turning the API's JSON into the SDK's records.
import { FileshareError } from './errors.js'
import type { ApiFile, FileList, FileRecord, StatsResult } from './types.js'

export type RawFile = ApiFile & Record<string, unknown>

/** `YYYY-MM-DD HH:MM:SS` (UTC) as a Date; also accepts ISO 8601. */
export function parseUploadDate(value: string): Date {
  const match = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/.exec(value)
  if (!match) return new Date(Number.NaN)
  const zone = match[8] ?? 'Z'
  return new Date(`${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}${match[7] ?? ''}${zone}`)
}

/** A file record from the API's object: every field kept (also ones this SDK does not know). */
export function toFileRecord(raw: RawFile): FileRecord {
  if (!raw || typeof raw !== 'object' || typeof raw.file_id !== 'number') {
    throw new FileshareError('the answer holds no file object')
  }
  const { success: _success, ...fields } = raw as RawFile & { success?: unknown }
  const record = { ...fields } as FileRecord & Record<string, unknown>
  // Not enumerable: JSON.stringify(record) gives back the API's object.
  Object.defineProperty(record, 'uploaded_at', { value: parseUploadDate(raw.upload_date), enumerable: false })
  return record
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

import type { ListedFile, UploadRequestRow } from '../db/schema.js'
import { formatOptionalUtcTime, formatUtcTime } from '../lib/utc-time.js'
import type { LinkView } from './links.js'

/**
 * A file and a link as the API shows them (the file and link objects of docs/api.md): the answers
 * of the API and the `data` of webhook messages are the same records.
 */
export interface FileRecord {
  file_id: number
  filename: string
  size: number
  upload_date: string
  download_count: number
  public_link: string
  content_type: string
  sha256: string
  expires_at: string | null
  source: FileSource
  scan: FileScan | null
}

/** A file's virus scan; null when the server does not scan (or did not, before scanning was turned on). */
export interface FileScan {
  status: 'pending' | 'clean' | 'infected' | 'error' | 'skipped'
  /** The signature clamd found (infected only). */
  signature: string | null
  scanned_at: string | null
}

export function fileScan(file: Pick<ListedFile, 'scan_status' | 'scan_signature' | 'scanned_at'>): FileScan | null {
  if (file.scan_status === null) return null
  return { status: file.scan_status, signature: file.scan_signature, scanned_at: formatOptionalUtcTime(file.scanned_at) }
}

/** How a file came in: through the API, the dashboard, or a guest of an upload request. */
export type FileSource = { type: 'api' } | { type: 'dashboard' } | { type: 'upload_request'; request_id: number }

export function fileSource(file: Pick<ListedFile, 'source_type' | 'upload_request_id'>): FileSource {
  if (file.source_type === 'upload_request') return { type: 'upload_request', request_id: Number(file.upload_request_id) }
  return { type: file.source_type }
}

export type UploadRequestStatus = 'active' | 'expired' | 'closed' | 'full'

/** closed (by its holder), expired, full (its max_files or max_total_size received), else active. */
export function uploadRequestStatus(request: UploadRequestRow, now: number): UploadRequestStatus {
  if (request.closed_at !== null) return 'closed'
  if (request.expires_at <= now) return 'expired'
  return isFull(request) ? 'full' : 'active'
}

/** Whether the request has received its max_files, or its max_total_size. */
export function isFull(request: Pick<UploadRequestRow, 'max_files' | 'files_received' | 'max_total_size' | 'bytes_received'>): boolean {
  return (
    (request.max_files !== null && request.files_received >= request.max_files) ||
    (request.max_total_size !== null && request.bytes_received >= request.max_total_size)
  )
}

export interface UploadRequestRecord {
  request_id: number
  url: string
  label: string
  message: string | null
  expires_at: string
  max_files: number | null
  max_file_size: number | null
  max_total_size: number | null
  file_expires_in: number | null
  password_protected: boolean
  files_received: number
  bytes_received: number
  status: UploadRequestStatus
  created_at: string
}

/** An upload request as its holder sees it; `publicUrl` is where its guest page is. */
export function uploadRequestRecord(request: UploadRequestRow, publicUrl: string, now: number): UploadRequestRecord {
  return {
    request_id: request.id,
    url: `${publicUrl}/r/${request.token}`,
    label: request.label,
    message: request.message,
    expires_at: formatUtcTime(request.expires_at),
    max_files: request.max_files,
    max_file_size: request.max_file_size,
    max_total_size: request.max_total_size,
    file_expires_in: request.file_expires_in,
    password_protected: request.password_hash !== null,
    files_received: request.files_received,
    bytes_received: request.bytes_received,
    status: uploadRequestStatus(request, now),
    created_at: formatUtcTime(request.created_at),
  }
}

export interface LinkRecord {
  link_id: number
  file_id: number
  url: string
  default: boolean
  label: string | null
  expires_at: string | null
  max_downloads: number | null
  download_count: number
  password_protected: boolean
  status: LinkView['status']
  created_at: string
}

export function fileRecord(file: ListedFile, linkBaseUrl: string): FileRecord {
  return {
    file_id: file.id,
    filename: file.filename,
    size: file.size,
    upload_date: formatUtcTime(file.created_at),
    download_count: file.download_count,
    public_link: `${linkBaseUrl}/download/${file.token}`,
    content_type: file.content_type,
    sha256: file.sha256,
    expires_at: formatOptionalUtcTime(file.expires_at),
    source: fileSource(file),
    scan: fileScan(file),
  }
}

export function linkRecord({ link, status }: LinkView, linkBaseUrl: string): LinkRecord {
  return {
    link_id: link.id,
    file_id: link.file_id,
    url: `${linkBaseUrl}/download/${link.token}`,
    default: link.is_default === 1,
    label: link.label,
    expires_at: formatOptionalUtcTime(link.expires_at),
    max_downloads: link.max_downloads,
    download_count: link.download_count,
    password_protected: link.password_hash !== null,
    status,
    created_at: formatUtcTime(link.created_at),
  }
}

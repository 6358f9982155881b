import type { ListedFile } from '../db/schema.js'
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

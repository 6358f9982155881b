import type { FileRow } from '../db/schema.js'
import type { FileObject } from './schemas.js'

/** `YYYY-MM-DD HH:MM:SS` in UTC. */
export function formatUploadDate(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ')
}

export function presentFile(file: FileRow, linkBaseUrl: string): FileObject {
  return {
    file_id: file.id,
    filename: file.filename,
    size: file.size,
    upload_date: formatUploadDate(file.created_at),
    download_count: file.download_count,
    public_link: `${linkBaseUrl}/download/${file.token}`,
    content_type: file.content_type,
    sha256: file.sha256,
  }
}

import type { LinkView } from '../services/links.js'
import { formatUploadDate } from './present-file.js'
import type { LinkObject } from './schemas.js'

export function presentLink({ link, status }: LinkView, linkBaseUrl: string): LinkObject {
  return {
    link_id: link.id,
    file_id: link.file_id,
    url: `${linkBaseUrl}/download/${link.token}`,
    default: link.is_default === 1,
    label: link.label,
    expires_at: link.expires_at === null ? null : formatUploadDate(link.expires_at),
    max_downloads: link.max_downloads,
    download_count: link.download_count,
    password_protected: link.password_hash !== null,
    status,
    created_at: formatUploadDate(link.created_at),
  }
}

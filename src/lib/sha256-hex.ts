import { hash } from 'node:crypto'

/**
 * SHA-256 of a UTF-8 string or of bytes, as 64 hex digits. node:crypto's one-shot hash: no Hash
 * object per call (every API call hashes its key).
 */
export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex')
}

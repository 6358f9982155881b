import { createHash } from 'node:crypto'

/** SHA-256 of a UTF-8 string or of bytes, as 64 hex digits. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}

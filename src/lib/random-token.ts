import { randomBytes } from 'node:crypto'

/** `bytes` from the CSPRNG as base64url (no padding). */
export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url')
}

import { isNode, loadNodeIo } from './runtime.js'

/** An incremental SHA-256. */
export interface Sha256 {
  update(data: Uint8Array): void
  /** Lower-case hex. */
  digestHex(): string
}

function toHex(bytes: Uint8Array): string {
  let hex = ''
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0')
  return hex
}

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  }
  return btoa(binary)
}

/**
 * A new incremental SHA-256: node:crypto in Node; in browsers @noble/hashes, because WebCrypto
 * can only hash a whole buffer at once.
 */
export async function createSha256(): Promise<Sha256> {
  if (isNode) return (await loadNodeIo()).createNodeSha256()
  const { sha256 } = await import('@noble/hashes/sha2.js')
  const hash = sha256.create()
  return {
    update: (data) => void hash.update(data),
    digestHex: () => toHex(hash.digest()),
  }
}

/** SHA-256 of one buffer, base64 (for `Upload-Checksum`). */
export async function sha256Base64(data: Uint8Array): Promise<string> {
  if (isNode) return (await loadNodeIo()).sha256Base64(data)
  const digest = await globalThis.crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>)
  return toBase64(new Uint8Array(digest))
}

export { toBase64 }

import { IntegrityError } from './errors.js'
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

/** The SHA-256 (hex) of every byte of a source that can be read again. */
export async function sha256OfSource(source: { read(start?: number): AsyncIterable<Uint8Array> }): Promise<string> {
  const hasher = await createSha256()
  for await (const chunk of source.read(0)) hasher.update(chunk)
  return hasher.digestHex()
}

/**
 * Compares the SHA-256 the server stored for an upload with the one of the bytes sent: a mismatch
 * is an {@link IntegrityError}. `replayed`: the answer was the stored one of the idempotency key.
 */
export function checkUploadSha256(file: { file_id: number; sha256: string }, actual: string, replayed = false): void {
  if (file.sha256 === actual) return
  const hint = replayed ? ' (the answer was replayed for the idempotency key, which was first used for other bytes)' : ''
  throw new IntegrityError(
    `the server stored file ${file.file_id} with SHA-256 ${file.sha256}, but the bytes sent hash to ${actual}${hint}`,
    {
      expected: file.sha256,
      actual,
    },
  )
}

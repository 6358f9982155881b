import { createCipheriv, randomBytes, randomInt } from 'node:crypto'
import { SETTINGS } from './settings.js'

/*
 * File contents: an AES-CTR key stream per file, so any byte range can be regenerated on demand
 * and the soak needs no copy of the files in memory.
 */

export function contentRange(seed: Buffer, start: number, endInclusive: number): Buffer {
  if (endInclusive < start) return Buffer.alloc(0)
  const block = Math.floor(start / 16)
  const iv = Buffer.alloc(16)
  iv.writeBigUInt64BE(BigInt(block), 8)
  const cipher = createCipheriv('aes-128-ctr', seed, iv)
  const skip = start - block * 16
  return cipher.update(Buffer.alloc(skip + endInclusive - start + 1)).subarray(skip)
}

/** Mostly small files, some large ones: about 400 KiB on average with the default 4 MiB cap. */
export function randomSize(): number {
  const roll = Math.random()
  const cap = roll < 0.6 ? 64 * 1024 : roll < 0.9 ? 1024 * 1024 : SETTINGS.maxFileBytes
  return randomInt(0, Math.min(cap, SETTINGS.maxFileBytes) + 1)
}

const NAME_PARTS = ['report', 'photo', 'Übersicht', 'café', 'données', '日本語', 'файл', '😀', 'a b', 'x-y_z', '2026', '.v2']
const EXTENSIONS = ['.txt', '.bin', '.jpg', '.pdf', '.html', '.json', '', '.tar.gz', '.csv']
export function randomName(): string {
  const parts = Array.from({ length: randomInt(1, 4) }, () => NAME_PARTS[randomInt(NAME_PARTS.length)]!)
  return `${parts.join('-')}-${randomBytes(3).toString('hex')}${EXTENSIONS[randomInt(EXTENSIONS.length)]!}`
}

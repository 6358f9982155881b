import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { inject } from 'vitest'
import { Fileshare, type FileshareOptions } from '../../src/index.js'

export function server() {
  return inject('fileshare')
}

export function client(account: 'pro' | 'free' | 'limited' = 'pro', options: FileshareOptions = {}): Fileshare {
  const info = server()
  return new Fileshare({ baseUrl: info.base_url, apiKey: info.keys[account], ...options })
}

export function tempDir(): { dir: string; file: (name: string) => string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'fileshare-sdk-js-test-'))
  return { dir, file: (name) => path.join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) }
}

export function randomBytes(size: number, seed = 1): Uint8Array {
  const bytes = new Uint8Array(size)
  let x = seed * 2654435761
  for (let i = 0; i < size; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    bytes[i] = x & 0xff
  }
  return bytes
}

/** The SHA-256 of `data` in lower-case hex, as the API reports a file's. */
export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}

import { createHash, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { UploadHashes } from '../../src/services/upload-hashes.js'

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')
const hashOf = (data: Buffer) => createHash('sha256').update(data)

describe('UploadHashes', () => {
  it('gives a new hash at offset 0, a copy of the kept one at its offset, nothing elsewhere', () => {
    const hashes = new UploadHashes()
    const content = randomBytes(1000)
    expect(hashes.resume('a', 0)!.digest('hex')).toBe(sha256(Buffer.alloc(0)))
    expect(hashes.resume('a', 400)).toBeUndefined()
    hashes.keep('a', 400, hashOf(content.subarray(0, 400)))
    expect(hashes.resume('a', 399)).toBeUndefined()
    expect(hashes.resume('a', 401)).toBeUndefined()
    // A writer's copy runs on without moving what is kept.
    const writer = hashes.resume('a', 400)!
    writer.update(content.subarray(400))
    expect(writer.digest('hex')).toBe(sha256(content))
    expect(hashes.digest('a', 400)).toBe(sha256(content.subarray(0, 400)))
    // digest leaves the entry for a retried completion.
    expect(hashes.digest('a', 400)).toBe(sha256(content.subarray(0, 400)))
  })

  it('keeps a copy: the hash given keeps running for its writer', () => {
    const hashes = new UploadHashes()
    const content = randomBytes(300)
    const running = hashOf(content.subarray(0, 100))
    hashes.keep('a', 100, running)
    running.update(content.subarray(100))
    expect(hashes.digest('a', 100)).toBe(sha256(content.subarray(0, 100)))
    expect(running.digest('hex')).toBe(sha256(content))
  })

  it('never goes back: a slower commit does not replace a later one', () => {
    const hashes = new UploadHashes()
    const content = randomBytes(300)
    hashes.keep('a', 200, hashOf(content.subarray(0, 200)))
    hashes.keep('a', 100, hashOf(content.subarray(0, 100)))
    expect(hashes.resume('a', 100)).toBeUndefined()
    expect(hashes.digest('a', 200)).toBe(sha256(content.subarray(0, 200)))
  })

  it('holds at most `cap` uploads, dropping the least recently committed; forget drops one', () => {
    const hashes = new UploadHashes(2)
    const bytes = randomBytes(10)
    hashes.keep('a', 10, hashOf(bytes))
    hashes.keep('b', 10, hashOf(bytes))
    hashes.keep('a', 10, hashOf(bytes)) // a commits again: b is now the oldest
    hashes.keep('c', 10, hashOf(bytes))
    expect(hashes.size).toBe(2)
    expect(hashes.resume('b', 10)).toBeUndefined()
    expect(hashes.digest('a', 10)).toBe(sha256(bytes))
    expect(hashes.digest('c', 10)).toBe(sha256(bytes))
    hashes.forget('a')
    hashes.forget('unknown')
    expect(hashes.size).toBe(1)
  })
})

import { createHash, randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { OffThreadSha256, sha256Workers } from '../../src/lib/sha256-off-thread.js'

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** Feeds `chunks` in order, waiting whenever the hash asks to, and returns the digest. */
async function hashChunks(chunks: Uint8Array[]): Promise<string> {
  const hash = new OffThreadSha256()
  for (const chunk of chunks) await hash.update(chunk)
  return hash.digest()
}

/** `bytes` cut into pieces of varying sizes, as a socket would hand them over. */
function pieces(bytes: Buffer): Buffer[] {
  const sizes = [1, 65_536, 7, 300_000, 262_144, 100, 1_048_577]
  const result: Buffer[] = []
  for (let offset = 0, i = 0; offset < bytes.length; i++) {
    const size = sizes[i % sizes.length]!
    result.push(bytes.subarray(offset, offset + size))
    offset += size
  }
  return result
}

describe('OffThreadSha256', () => {
  afterAll(async () => {
    expect(sha256Workers.openSessions).toBe(0)
  })

  it('digests no bytes, one byte, and a batch exactly, like node:crypto', async () => {
    expect(await hashChunks([])).toBe(sha256(Buffer.alloc(0)))
    expect(await hashChunks([Buffer.from([0x61])])).toBe(sha256(Buffer.from([0x61])))
    const batch = randomBytes(256 * 1024)
    expect(await hashChunks([batch])).toBe(sha256(batch))
  })

  it('digests many chunks of any size across many batches in order', async () => {
    const bytes = randomBytes(9 * 1024 * 1024 + 13)
    expect(await hashChunks(pieces(bytes))).toBe(sha256(bytes))
  })

  it('keeps hashes apart when many run at once on the shared workers', async () => {
    const inputs = Array.from({ length: 24 }, (_, i) => randomBytes(i * 97_003))
    const digests = await Promise.all(inputs.map((bytes) => hashChunks(pieces(bytes))))
    expect(digests).toEqual(inputs.map(sha256))
    expect(sha256Workers.openSessions).toBe(0)
  })

  it('does not keep the bytes it was given: the caller may reuse its buffer at once', async () => {
    const hash = new OffThreadSha256()
    const buffer = Buffer.alloc(100_000)
    const expected = createHash('sha256')
    for (let i = 0; i < 40; i++) {
      buffer.fill(i)
      expected.update(buffer)
      await hash.update(buffer)
    }
    expect(await hash.digest()).toBe(expected.digest('hex'))
  })

  it('an aborted hash frees its place on the worker, and many uploads leave no session and no extra thread', async () => {
    for (let i = 0; i < 200; i++) {
      const hash = new OffThreadSha256()
      await hash.update(randomBytes(300_000))
      if (i % 2 === 0) hash.abort()
      else await hash.digest()
    }
    expect(sha256Workers.openSessions).toBe(0)
    expect(sha256Workers.threads).toBeGreaterThanOrEqual(1)
    expect(sha256Workers.threads).toBeLessThanOrEqual(4)
  })

  it('a worker that dies fails the hashes it held, and the next hash gets a new worker', async () => {
    const held = new OffThreadSha256()
    await held.update(randomBytes(600_000))
    await sha256Workers.terminate()
    await expect(held.digest()).rejects.toThrow(/worker/)
    expect(sha256Workers.openSessions).toBe(0)
    const bytes = randomBytes(2_000_000)
    expect(await hashChunks(pieces(bytes))).toBe(sha256(bytes))
  })
})

import { createHash, randomBytes } from 'node:crypto'
import { Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { describe, expect, it } from 'vitest'
import { FileTooLargeError } from '../../src/errors.js'
import { ByteMeter } from '../../src/storage/byte-meter.js'

function counting(): Writable & { received: number } {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      sink.received += chunk.length
      done()
    },
  }) as Writable & { received: number }
  sink.received = 0
  return sink
}

function source(bytes: Buffer, size: number, failAfter = Infinity): Readable {
  return Readable.from(
    (function* () {
      for (let offset = 0; offset < bytes.length; offset += size) {
        if (offset >= failAfter) throw new Error('client gone')
        yield bytes.subarray(offset, offset + size)
      }
    })(),
  )
}

describe('ByteMeter', () => {
  it('passes every byte on and knows their size and SHA-256 once it has ended', async () => {
    for (const length of [0, 1, 5 * 1024 * 1024 + 3]) {
      const bytes = randomBytes(length)
      const meter = new ByteMeter(length)
      const sink = counting()
      await pipeline(source(bytes, 65_536), meter, sink)
      expect(sink.received).toBe(length)
      expect(meter.size).toBe(length)
      expect(meter.digest()).toBe(createHash('sha256').update(bytes).digest('hex'))
    }
  })

  it('fails at the first byte over the limit, passing on none of the chunk that holds it', async () => {
    const meter = new ByteMeter(1024 * 1024)
    const sink = counting()
    await expect(pipeline(source(randomBytes(3 * 1024 * 1024), 65_536 + 1), meter, sink)).rejects.toBeInstanceOf(FileTooLargeError)
    expect(sink.received).toBeLessThanOrEqual(1024 * 1024)
    expect(meter.size).toBeGreaterThan(1024 * 1024)
    expect(meter.size - 65_537).toBeLessThanOrEqual(1024 * 1024)
  })

  it('has no digest when its source fails mid-stream', async () => {
    const meter = new ByteMeter(Infinity)
    await expect(pipeline(source(randomBytes(4 * 1024 * 1024), 65_536, 2 * 1024 * 1024), meter, counting())).rejects.toThrow('client gone')
    expect(() => meter.digest()).toThrow()
  })
})

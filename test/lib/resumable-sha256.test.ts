import { createHash, randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { IncompatibleHashStateError, RESUMABLE_SHA256_IMPLEMENTATION, ResumableSha256 } from '../../src/lib/resumable-sha256.js'
import packageJson from '../../package.json' with { type: 'json' }

const nodeSha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex')

/** A saved state whose implementation name is replaced by `name`. */
function withImplementation(state: Uint8Array, name: string): Uint8Array {
  const nameLength = state[0]!
  const newName = Buffer.from(name, 'latin1')
  return Buffer.concat([Buffer.from([newName.length]), newName, state.subarray(1 + nameLength)])
}

describe('ResumableSha256', () => {
  it('names the exact hash-wasm version that package.json pins', () => {
    expect(packageJson.dependencies['hash-wasm']).toMatch(/^\d+\.\d+\.\d+$/)
    expect(RESUMABLE_SHA256_IMPLEMENTATION).toBe(`hash-wasm@${packageJson.dependencies['hash-wasm']}/sha256`)
  })

  it('gives the digest of node:crypto, for the empty input and across block boundaries', async () => {
    for (const size of [0, 1, 55, 56, 63, 64, 65, 127, 128, 1000, 1 << 20]) {
      const data = randomBytes(size)
      const hash = await ResumableSha256.create()
      expect(hash.update(data).digestHex()).toBe(nodeSha256(data))
    }
  })

  it('gives the same digest whatever the split points, saved and loaded at each one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 0, maxLength: 3000 }),
        fc.array(fc.nat({ max: 3000 }), { maxLength: 12 }),
        async (data, cuts) => {
          const points = [...new Set(cuts.map((cut) => cut % (data.length + 1)))].sort((a, b) => a - b)
          let hash = await ResumableSha256.create()
          let from = 0
          for (const point of [...points, data.length]) {
            hash.update(data.subarray(from, point))
            from = point
            // As if each piece came in a request of its own, possibly to another process.
            hash = await ResumableSha256.load(hash.save())
          }
          expect(hash.digestHex()).toBe(nodeSha256(data))
        },
      ),
      { numRuns: 200 },
    )
  })

  it('save leaves the hasher usable, and a loaded copy goes on independently', async () => {
    const first = randomBytes(100)
    const second = randomBytes(200)
    const hash = await ResumableSha256.create()
    hash.update(first)
    const state = hash.save()
    const copy = await ResumableSha256.load(state)
    hash.update(second)
    copy.update(second)
    const expected = nodeSha256(Buffer.concat([first, second]))
    expect(hash.digestHex()).toBe(expected)
    expect(copy.digestHex()).toBe(expected)
    // The state itself can be loaded again: it is a value, not a handle.
    expect((await ResumableSha256.load(state)).digestHex()).toBe(nodeSha256(first))
  })

  it('a state is small and starts with the implementation name', async () => {
    const state = (await ResumableSha256.create()).update(randomBytes(5000)).save()
    expect(state.length).toBeLessThan(200)
    expect(Buffer.from(state.subarray(1, 1 + state[0]!)).toString('latin1')).toBe(RESUMABLE_SHA256_IMPLEMENTATION)
  })

  it('refuses a state saved by another version, naming both', async () => {
    const state = (await ResumableSha256.create()).update(Buffer.from('abc')).save()
    const other = withImplementation(state, 'hash-wasm@4.12.0/sha256')
    const error = await ResumableSha256.load(other).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(IncompatibleHashStateError)
    expect((error as IncompatibleHashStateError).implementation).toBe('hash-wasm@4.12.0/sha256')
    expect((error as Error).message).toContain('hash-wasm@4.12.0/sha256')
    expect((error as Error).message).toContain(RESUMABLE_SHA256_IMPLEMENTATION)
  })

  it('refuses what is not a state: empty, cut short, or damaged', async () => {
    const state = (await ResumableSha256.create()).update(Buffer.from('abc')).save()
    for (const bad of [new Uint8Array(0), state.subarray(0, 10), state.subarray(0, state.length - 1), new Uint8Array(state.length)]) {
      await expect(ResumableSha256.load(bad)).rejects.toBeInstanceOf(IncompatibleHashStateError)
    }
  })

  it('is finished after digestHex', async () => {
    const hash = await ResumableSha256.create()
    hash.digestHex()
    expect(() => hash.update(Buffer.from('x'))).toThrow(/finished/)
    expect(() => hash.save()).toThrow(/finished/)
  })
})

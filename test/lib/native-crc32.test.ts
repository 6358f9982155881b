import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { crc32, useNativeCrc32InYazl } from '../../src/lib/native-crc32.js'

/**
 * buffer-crc32's own algorithm from its ES module build: a module instance of its own, which
 * useNativeCrc32InYazl never touches (it switches the CommonJS one yazl loads, in Node's require
 * cache, shared by every test file of this worker).
 */
const fromYazl = createRequire(createRequire(import.meta.url).resolve('yazl'))
const bufferCrc32 = fromYazl('buffer-crc32') as { unsigned(buffer: Buffer, previous?: number): number }
const javascriptBuild = fromYazl.resolve('buffer-crc32').replace(/index\.cjs$/, 'index.mjs')
const javascriptCrc32 = ((await import(javascriptBuild)) as { default: typeof bufferCrc32 }).default.unsigned

describe('CRC-32 by zlib for yazl (src/lib/native-crc32.ts)', () => {
  it("gives buffer-crc32's value, chunk after chunk, empty chunks and CRCs of 2^31 and more included", () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926)
    for (let round = 0; round < 300; round++) {
      const chunks = [0, 1, 5, 100, 70_000].map((most) => randomBytes(Math.floor(Math.random() * most)))
      let ours = 0
      let theirs = 0
      for (const chunk of chunks) {
        ours = crc32(chunk, ours)
        theirs = javascriptCrc32(chunk, theirs)
        expect(ours).toBe(theirs)
      }
    }
    // Node's zlib.crc32 answers 0 here; the CRC must stay what it was.
    expect(crc32(Buffer.alloc(0), 0xd5dd_4b10)).toBe(0xd5dd_4b10)
  })

  it('replaces the function in the very module yazl calls, giving the same values', () => {
    useNativeCrc32InYazl()
    expect(bufferCrc32.unsigned.toString()).toContain('crc32(buffer')
    const chunk = randomBytes(4096)
    expect(bufferCrc32.unsigned(chunk, 0xffff_ffff)).toBe(javascriptCrc32(chunk, 0xffff_ffff))
  })
})

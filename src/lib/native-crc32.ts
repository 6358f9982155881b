import { createRequire } from 'node:module'
import zlib from 'node:zlib'

/** buffer-crc32's API as yazl 3.3.1 calls it: `unsigned(chunk, previousCrc)`. */
interface BufferCrc32 {
  unsigned(buffer: Buffer, previous?: number): number
}

/**
 * CRC-32 continued over `buffer` from `previous`, by Node's zlib (native): the same value as
 * buffer-crc32's. An empty buffer leaves the CRC as it is; Node 24's zlib.crc32 answers 0 for an
 * empty buffer when `previous` is 2^31 or more, so that case is not handed to it.
 */
export function crc32(buffer: Buffer, previous = 0): number {
  return buffer.length === 0 ? previous >>> 0 : zlib.crc32(buffer, previous)
}

/**
 * yazl computes every entry's CRC-32 with buffer-crc32, in JavaScript: about 400 MiB/s here, which
 * held a ZIP download to 137 MiB/s while a plain download ran at 488 (docs/benchmarks.md, round 10).
 * zlib's is native (about 4.6 GiB/s). yazl has no option to take another, so the one buffer-crc32
 * function it calls is replaced in the module instance yazl itself loads; called once, before the
 * first archive. (yazl passes numbers as `previous`, never the Buffer form buffer-crc32 also takes.)
 */
export function useNativeCrc32InYazl(): void {
  const fromYazl = createRequire(createRequire(import.meta.url).resolve('yazl'))
  const bufferCrc32 = fromYazl('buffer-crc32') as BufferCrc32
  bufferCrc32.unsigned = (buffer: Buffer, previous?: number) => crc32(buffer, previous ?? 0)
}

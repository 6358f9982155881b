import { createHash } from 'node:crypto'
import { Transform, type TransformCallback } from 'node:stream'
import { FileTooLargeError } from '../errors.js'

/**
 * Counts and hashes bytes on their way to storage, failing at the first byte over the limit. The
 * hash runs on the event loop: each chunk is hashed and passed on at once, so no chunk outlives its
 * turn here (a worker thread fed copies of the chunks was measured no faster, issue 36).
 */
export class ByteMeter extends Transform {
  size = 0
  private readonly hash = createHash('sha256')
  private hexDigest: string | undefined

  constructor(private readonly maxBytes: number) {
    super()
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length
    if (this.size > this.maxBytes) {
      callback(new FileTooLargeError(this.maxBytes))
      return
    }
    this.hash.update(chunk)
    callback(null, chunk)
  }

  /** The SHA-256 of the bytes, in hex, once the meter has ended. */
  digest(): string {
    if (!this.writableFinished) throw new Error('ByteMeter.digest() before the meter ended.')
    this.hexDigest ??= this.hash.digest('hex')
    return this.hexDigest
  }
}

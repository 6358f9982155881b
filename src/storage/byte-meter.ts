import { createHash } from 'node:crypto'
import { Transform, type TransformCallback } from 'node:stream'
import { FileTooLargeError } from '../errors.js'

/** Counts and hashes bytes on their way to storage, failing at the first byte over the limit. */
export class ByteMeter extends Transform {
  size = 0
  private readonly hash = createHash('sha256')

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

  digest(): string {
    return this.hash.digest('hex')
  }
}

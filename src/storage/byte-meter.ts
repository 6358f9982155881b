import { Transform, type TransformCallback } from 'node:stream'
import { FileTooLargeError } from '../errors.js'
import { OffThreadSha256 } from '../lib/sha256-off-thread.js'

/**
 * Counts and hashes bytes on their way to storage, failing at the first byte over the limit. The
 * hash runs on a worker thread (lib/sha256-off-thread.ts); it is complete when the meter ends, so
 * digest() is ready for whoever saw the stream finish.
 */
export class ByteMeter extends Transform {
  size = 0
  private readonly hash = new OffThreadSha256()
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
    const copied = this.hash.update(chunk)
    if (copied === undefined) callback(null, chunk)
    else copied.then(() => callback(null, chunk), callback)
  }

  override _flush(callback: TransformCallback): void {
    this.hash.digest().then((digest) => {
      this.hexDigest = digest
      callback()
    }, callback)
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.hash.abort()
    callback(error)
  }

  /** The SHA-256 of the bytes, in hex, once the meter has ended. */
  digest(): string {
    if (this.hexDigest === undefined) throw new Error('ByteMeter.digest() before the meter ended.')
    return this.hexDigest
  }
}

import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import type { Writable } from 'node:stream'

const CHUNK = randomBytes(1024 * 1024)

/**
 * A request body of `bytes` pseudo-random bytes, produced as it is sent (one 1 MiB chunk reused),
 * so that a 5 GiB upload never needs 5 GiB of client memory. With `multipart`, the bytes are
 * framed by hand as the single file part named `file` of a multipart/form-data body.
 */
export class StreamedBody {
  readonly contentType: string
  readonly contentLength: number
  private readonly head: Buffer
  private readonly tail: Buffer

  constructor(
    private readonly bytes: number,
    multipart: boolean,
  ) {
    const boundary = `----fileshare-bench-${randomBytes(16).toString('hex')}`
    this.head = multipart
      ? Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.bin"\r\n` +
            'Content-Type: application/octet-stream\r\n\r\n',
        )
      : Buffer.alloc(0)
    this.tail = multipart ? Buffer.from(`\r\n--${boundary}--\r\n`) : Buffer.alloc(0)
    this.contentType = multipart ? `multipart/form-data; boundary=${boundary}` : 'application/octet-stream'
    this.contentLength = this.head.length + bytes + this.tail.length
  }

  /** Writes the whole body, waiting for 'drain' whenever the destination's buffer is full. */
  async writeTo(destination: Writable): Promise<void> {
    const write = async (chunk: Buffer) => {
      if (chunk.length > 0 && !destination.write(chunk)) await once(destination, 'drain')
    }
    await write(this.head)
    for (let left = this.bytes; left > 0; left -= CHUNK.length) {
      await write(left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left))
    }
    await write(this.tail)
    destination.end()
  }
}

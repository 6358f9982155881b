import { close, read } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { Readable, type Writable } from 'node:stream'

/** Bytes per read when a blob is sent: 4x fs's 64 KiB, a quarter of the reads and socket writes (buffers are reused). */
const READ_CHUNK_BYTES = 256 * 1024
/** Spare read buffers a download keeps for reuse. */
const MAX_SPARE_BUFFERS = 4

/**
 * A blob's bytes (start to end, inclusive), read with callbacks. Once told its sink
 * (drainsInto) and piped straight into it, it reuses the buffers the sink has finished writing:
 * the sink's writableLength and its own buffer say how many of the bytes pushed are still held.
 * A fresh buffer per read (as fs streams allocate) is memory outside the V8 heap, and every 64 MiB
 * of it set off a full GC of the server's heap: most of a download's CPU. Read by anything else,
 * every read gets a new buffer.
 */
export class BlobReadStream extends Readable {
  private position: number
  private sink: Pick<Writable, 'writableLength'> | undefined
  private pipedTo: unknown
  private recycling = true
  private pushedBytes = 0
  private readonly held: { buffer: Buffer; endsAt: number }[] = []
  private readonly spare: Buffer[] = []
  private reading = false
  private afterRead: (() => void) | undefined

  constructor(
    private readonly fd: number,
    start: number,
    private readonly end: number,
  ) {
    super({ highWaterMark: READ_CHUNK_BYTES })
    this.position = start
  }

  /**
   * The response this stream will be piped into. Its writableLength counts the bytes it still
   * holds only on a real socket (a test's injected response copies chunks on its own terms).
   */
  drainsInto(sink: ServerResponse): void {
    if (sink.socket instanceof Socket) this.sink = sink
  }

  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    this.pipedTo = this.pipedTo === undefined ? destination : null
    return super.pipe(destination, options)
  }

  private takeBuffer(wanted: number): Buffer {
    if (this.recycling && this.sink !== undefined) {
      // Only the pipe's own listener: nobody else may keep a chunk.
      if (this.pipedTo === this.sink && this.listenerCount('data') === 1) {
        const stillHeld = this.readableLength + this.sink.writableLength
        while (this.held.length > 0 && this.pushedBytes - this.held[0]!.endsAt >= stillHeld) {
          const { buffer } = this.held.shift()!
          if (this.spare.length < MAX_SPARE_BUFFERS) this.spare.push(buffer)
        }
      } else {
        this.recycling = false
        this.held.length = 0
        this.spare.length = 0
      }
    }
    return this.spare.pop() ?? Buffer.allocUnsafeSlow(Math.min(wanted, READ_CHUNK_BYTES))
  }

  override _read(): void {
    const wanted = Math.min(READ_CHUNK_BYTES, this.end - this.position + 1)
    if (wanted <= 0) {
      this.push(null)
      return
    }
    const buffer = this.takeBuffer(wanted)
    this.reading = true
    read(this.fd, buffer, 0, Math.min(wanted, buffer.length), this.position, (error, bytesRead) => {
      this.reading = false
      if (this.afterRead) return this.afterRead()
      if (error) return this.destroy(error)
      if (bytesRead === 0) {
        this.push(null)
        return
      }
      this.position += bytesRead
      this.pushedBytes += bytesRead
      if (this.recycling && this.sink !== undefined) this.held.push({ buffer, endsAt: this.pushedBytes })
      this.push(bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead))
    })
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Never close the descriptor under a read still running: the number could be reused meanwhile.
    const closeFd = () => close(this.fd, (closeError) => callback(error ?? closeError))
    if (this.reading) this.afterRead = closeFd
    else closeFd()
  }
}

import fs from 'node:fs/promises'
import { Writable } from 'node:stream'

export interface DurableFileWriterOptions {
  /** Bytes written between two background fdatasyncs (default 16 MiB). */
  syncEveryBytes?: number
  /** Bytes buffered while a write is in flight, written together by the next one (default 1 MiB). */
  highWaterMark?: number
}

/**
 * Writes a new file (created exclusively) from a stream and makes it durable before the stream
 * finishes: 'finish' means the bytes and the file's size are on disk.
 *
 * While the bytes stream in, an fdatasync runs in the background every `syncEveryBytes`, so that
 * the disk writes back alongside the upload instead of all at the end: the final fsync then waits
 * for the last stretch only. (A write-back started with the whole file still dirty cost about
 * 0.4 s a 512 MiB file on the machine of issue 36.) A background sync that fails fails the write:
 * Linux reports a write-back error to one sync call per descriptor, so the final fsync could
 * otherwise succeed over lost pages.
 *
 * Chunks that arrive while a write is in flight are written together by the next one (writev), up
 * to `highWaterMark` bytes: fewer system calls and thread-pool round trips than one per chunk.
 */
export class DurableFileWriter extends Writable {
  private handle: fs.FileHandle | undefined
  private position = 0
  private syncedUpTo = 0
  private readonly syncEveryBytes: number
  private backgroundSync: Promise<void> | undefined
  private backgroundSyncError: Error | undefined

  constructor(
    readonly path: string,
    options: DurableFileWriterOptions = {},
  ) {
    super({ highWaterMark: options.highWaterMark ?? 1024 * 1024 })
    this.syncEveryBytes = options.syncEveryBytes ?? 16 * 1024 * 1024
  }

  /** Bytes written to the file so far. */
  get bytesWritten(): number {
    return this.position
  }

  override _construct(callback: (error?: Error | null) => void): void {
    fs.open(this.path, 'wx').then(
      (handle) => {
        this.handle = handle
        callback()
      },
      (error: Error) => callback(error),
    )
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.writeAll([chunk]).then(() => callback(), callback)
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    this.writeAll(chunks.map(({ chunk }) => chunk)).then(() => callback(), callback)
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.finish().then(() => callback(), callback)
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // The descriptor stays open until a background sync using it is done with it.
    const closing = (this.backgroundSync ?? Promise.resolve()).then(() => this.handle?.close())
    closing.then(
      () => callback(error),
      (closeError: Error) => callback(error ?? closeError),
    )
  }

  private async writeAll(buffers: Buffer[]): Promise<void> {
    if (this.backgroundSyncError) throw this.backgroundSyncError
    const handle = this.handle!
    let pending = buffers
    let length = buffers.reduce((sum, buffer) => sum + buffer.length, 0)
    while (length > 0) {
      // A write may take only part of the bytes (a full disk, a signal): go on with the rest.
      const { bytesWritten } = await handle.writev(pending, this.position)
      this.position += bytesWritten
      length -= bytesWritten
      pending = rest(pending, bytesWritten)
    }
    if (this.backgroundSync === undefined && this.position - this.syncedUpTo >= this.syncEveryBytes) this.startBackgroundSync(handle)
  }

  private startBackgroundSync(handle: fs.FileHandle): void {
    const upTo = this.position
    this.backgroundSync = handle.datasync().then(
      () => {
        this.syncedUpTo = upTo
        this.backgroundSync = undefined
      },
      (error: Error) => {
        this.backgroundSyncError = error
        this.backgroundSync = undefined
      },
    )
  }

  private async finish(): Promise<void> {
    await this.backgroundSync
    if (this.backgroundSyncError) throw this.backgroundSyncError
    await this.handle!.sync()
  }
}

/** `buffers` without their first `skip` bytes. */
function rest(buffers: Buffer[], skip: number): Buffer[] {
  let index = 0
  while (index < buffers.length && skip >= buffers[index]!.length) skip -= buffers[index++]!.length
  if (index === buffers.length) return []
  return [buffers[index]!.subarray(skip), ...buffers.slice(index + 1)]
}

// Everything files.upload() accepts, behind one interface.
import { ConfigurationError } from './errors.js'
import { isNode, loadNodeIo } from './runtime.js'

/**
 * What can be uploaded: a path (Node), bytes, a Blob/File, a web ReadableStream, a Node Readable
 * (an async iterable of Buffers), or any (async) iterable of bytes.
 */
export type UploadInput =
  | string
  | URL
  | Uint8Array
  | ArrayBuffer
  | ArrayBufferView
  | Blob
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array>
  | Iterable<Uint8Array>

export interface UploadSource {
  /** Bytes in all, when known. */
  readonly size: number | undefined
  /** A name found in the source (a path's base name, a File's name). */
  readonly name: string | undefined
  /** True when the bytes can be read again (path, bytes, Blob): a failed upload may be sent again. */
  readonly replayable: boolean
  /** The source as a Blob, when it is one or is bytes in memory (browser request bodies). */
  readonly blob: Blob | undefined
  /** The bytes from `start` on. One-shot sources can be read once, from 0. */
  read(start?: number): AsyncIterable<Uint8Array>
}

const SLICE = 1024 * 1024

async function* fromReader(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      yield value
    }
  } finally {
    reader.releaseLock()
  }
}

function toBytes(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk
  if (typeof chunk === 'string') return new TextEncoder().encode(chunk)
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk)
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
  throw new ConfigurationError('a stream source must yield bytes (Uint8Array/Buffer)')
}

function oneShot(iterable: AsyncIterable<unknown> | Iterable<unknown>, size: number | undefined): UploadSource {
  let used = false
  return {
    size,
    name: undefined,
    replayable: false,
    blob: undefined,
    async *read(start = 0) {
      if (used || start !== 0) throw new ConfigurationError('a stream source can be read only once, from its start')
      used = true
      for await (const chunk of iterable as AsyncIterable<unknown>) yield toBytes(chunk)
    },
  }
}

function fromBytes(bytes: Uint8Array): UploadSource {
  let blob: Blob | undefined
  return {
    size: bytes.byteLength,
    name: undefined,
    replayable: true,
    get blob() {
      blob ??= new Blob([bytes as Uint8Array<ArrayBuffer>])
      return blob
    },
    async *read(start = 0) {
      for (let at = start; at < bytes.byteLength; at += SLICE) yield bytes.subarray(at, Math.min(at + SLICE, bytes.byteLength))
    },
  }
}

function fromBlob(blob: Blob): UploadSource {
  const name = typeof (blob as File).name === 'string' && (blob as File).name !== '' ? (blob as File).name : undefined
  return {
    size: blob.size,
    name,
    replayable: true,
    blob,
    read: (start = 0) => fromReader(blob.slice(start).stream()),
  }
}

/** Normalizes an upload input. `size` states the length of a stream. */
export async function toUploadSource(input: UploadInput, size?: number): Promise<UploadSource> {
  if (typeof input === 'string' || input instanceof URL) {
    if (!isNode) throw new ConfigurationError('uploading a path needs Node.js; in a browser pass a File or Blob')
    const io = await loadNodeIo()
    const path = input instanceof URL ? decodeURIComponent(input.pathname) : input
    if (input instanceof URL && input.protocol !== 'file:') throw new ConfigurationError('only file: URLs can be uploaded')
    const described = await io.describePath(path)
    return {
      size: described.size,
      name: described.name,
      replayable: true,
      blob: undefined,
      read: (start = 0) => io.readPath(path, start),
    }
  }
  if (typeof Blob !== 'undefined' && input instanceof Blob) return fromBlob(input)
  if (input instanceof ArrayBuffer) return fromBytes(new Uint8Array(input))
  if (ArrayBuffer.isView(input)) return fromBytes(new Uint8Array(input.buffer, input.byteOffset, input.byteLength))
  if (typeof ReadableStream !== 'undefined' && input instanceof ReadableStream) return oneShot(fromReader(input), size)
  if (isNode && (await loadNodeIo()).isNodeReadable(input)) {
    const source = oneShot(input as AsyncIterable<unknown>, size)
    const path = (input as { path?: unknown }).path
    if (typeof path === 'string') return { ...source, name: path.split(/[\\/]/).pop(), read: source.read }
    return source
  }
  if (typeof input === 'object' && input !== null && (Symbol.asyncIterator in input || Symbol.iterator in input)) {
    return oneShot(input as AsyncIterable<unknown>, size)
  }
  throw new ConfigurationError('unsupported upload source: pass a path, bytes, a Blob/File or a stream')
}

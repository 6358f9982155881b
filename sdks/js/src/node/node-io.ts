// Node-only helpers: paths, Node streams, node:crypto. Loaded on first use (see runtime.ts).
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { open, rm, stat } from 'node:fs/promises'
import { basename } from 'node:path'
import { Readable, Writable } from 'node:stream'
import type { Sha256 } from '../hash.js'

export function createNodeSha256(): Sha256 {
  const hash = createHash('sha256')
  return {
    update: (data) => void hash.update(data),
    digestHex: () => hash.digest('hex'),
  }
}

export function sha256Base64(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('base64')
}

export async function describePath(path: string): Promise<{ size: number; name: string }> {
  const info = await stat(path)
  if (!info.isFile()) throw new Error(`${path} is not a regular file`)
  return { size: info.size, name: basename(path) }
}

/** The bytes of a file from `start` on, in chunks of up to 1 MiB, with flat memory. */
export async function* readPath(path: string, start = 0): AsyncGenerator<Uint8Array> {
  const stream = createReadStream(path, { start, highWaterMark: 1024 * 1024 })
  try {
    for await (const chunk of stream) yield chunk as Buffer
  } finally {
    stream.destroy()
  }
}

export function isNodeReadable(value: unknown): value is Readable {
  return value instanceof Readable
}

export function isNodeWritable(value: unknown): value is Writable {
  return value instanceof Writable
}

/** Size of a file, or -1 when there is none. */
export async function fileSize(path: string): Promise<number> {
  try {
    const info = await stat(path)
    return info.isFile() ? info.size : -1
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return -1
    throw error
  }
}

/** Removes a file that is there (an unfinished download nobody should mistake for a finished one). */
export async function removePath(path: string): Promise<void> {
  await rm(path, { force: true })
}

/** A sink that writes to a file, appending from `offset` (the file is cut there first). */
export interface FileSink {
  write(chunk: Uint8Array): Promise<void>
  truncate(length: number): Promise<void>
  close(): Promise<void>
}

export async function openFileSink(path: string, offset: number): Promise<FileSink> {
  const handle = await open(path, offset > 0 ? 'r+' : 'w')
  await handle.truncate(offset)
  let position = offset
  return {
    async write(chunk) {
      let done = 0
      while (done < chunk.length) {
        const { bytesWritten } = await handle.write(chunk, done, chunk.length - done, position)
        done += bytesWritten
        position += bytesWritten
      }
    },
    async truncate(length) {
      await handle.truncate(length)
      position = length
    },
    close: () => handle.close(),
  }
}

/** Writes to a Node Writable, waiting for 'drain' when it asks to. */
export function writeToNodeStream(stream: Writable, chunk: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    if (stream.destroyed) return reject(new Error('the destination stream is closed'))
    const ok = stream.write(chunk, (error) => {
      if (error) reject(error)
    })
    if (ok) resolve()
    else {
      const onDrain = () => {
        stream.off('error', onError)
        resolve()
      }
      const onError = (error: Error) => {
        stream.off('drain', onDrain)
        reject(error)
      }
      stream.once('drain', onDrain)
      stream.once('error', onError)
    }
  })
}

/**
 * Sends a request whose body is a stream with node:http(s) and answers a web Response. Node's
 * fetch (undici) keeps every chunk of a streamed request body in memory until the request ends
 * (nodejs/undici#4058), so a 5 GiB upload through it would need 5 GiB of memory.
 */
export async function sendStreamed(
  url: string,
  method: string,
  headers: Headers,
  body: ReadableStream<Uint8Array> | Uint8Array | Blob | string | undefined,
  signal: AbortSignal,
  agent?: unknown,
): Promise<Response> {
  const target = new URL(url)
  const { request } = target.protocol === 'https:' ? await import('node:https') : await import('node:http')
  const flat: Record<string, string> = {}
  headers.forEach((value, name) => (flat[name] = value))
  if (body !== undefined && !(body instanceof ReadableStream)) {
    const blob = body instanceof Blob ? body : new Blob([body as Uint8Array<ArrayBuffer> | string])
    if (body instanceof Blob && body.type && !('content-type' in flat)) flat['content-type'] = body.type
    flat['content-length'] = String(blob.size)
    body = blob.stream()
  }
  if (body !== undefined && !('content-length' in flat)) flat['transfer-encoding'] = 'chunked'
  return new Promise<Response>((resolve, reject) => {
    let settled = false
    const fail = (error: unknown) => {
      if (settled) return
      settled = true
      reject(error)
    }
    const reader = body?.getReader()
    const req = request(target, {
      method,
      headers: flat,
      signal,
      ...(agent === undefined ? {} : { agent: agent as import('node:http').Agent }),
    })
    req.on('error', (error) => fail(signal.aborted ? signal.reason : new TypeError('fetch failed', { cause: error })))
    req.on('response', (res) => {
      settled = true
      const responseHeaders = new Headers()
      for (let i = 0; i < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!)
      const status = res.statusCode ?? 0
      const nullBody = status === 204 || status === 205 || status === 304 || method === 'HEAD'
      // The server answered (maybe before the whole body went, e.g. a refusal): stop sending.
      void reader?.cancel().catch(() => {})
      if (nullBody) res.resume()
      resolve(new Response(nullBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, headers: responseHeaders }))
    })
    if (!reader) return void req.end()
    const pump = async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done || settled) break
          if (!req.write(value)) await new Promise<void>((ok) => req.once('drain', ok))
        }
        if (!settled) req.end()
      } catch (error) {
        req.destroy()
        fail(new TypeError('fetch failed', { cause: error }))
      }
    }
    void pump()
  })
}

// The one-request upload (POST /files/upload) as a multipart/form-data body built on the fly:
// a stream in Node (flat memory, SHA-256 and progress as the bytes go out), a Blob in browsers.
import { SourceError } from './http.js'
import type { Sha256 } from './hash.js'
import type { UploadSource } from './upload-source.js'

const encoder = new TextEncoder()

export interface MultipartFrame {
  boundary: string
  contentType: string
  head: Uint8Array
  tail: Uint8Array
}

/** Quotes a file name the way browsers' form encoding does (and the server decodes). */
export function formFilename(name: string): string {
  return name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
}

function randomBoundary(): string {
  const bytes = new Uint8Array(18)
  globalThis.crypto.getRandomValues(bytes)
  let hex = ''
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0')
  return `----fileshare-sdk-js-${hex}`
}

export function multipartFrame(filename: string, partType: string): MultipartFrame {
  const boundary = randomBoundary()
  const safeType = partType.replace(/[\r\n]/g, '')
  const head = encoder.encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${formFilename(filename)}"\r\n` +
      `Content-Type: ${safeType}\r\n\r\n`,
  )
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`)
  return { boundary, contentType: `multipart/form-data; boundary=${boundary}`, head, tail }
}

/**
 * The whole body as a stream: the head, the source's bytes (each one hashed and counted as it is
 * pulled, so memory stays flat), the tail. Pulled by fetch as the socket drains. `onEnd` is called
 * once every byte of the source went into the hasher (a replayed answer may come before that).
 */
export function multipartStream(
  frame: MultipartFrame,
  source: UploadSource,
  hasher: Sha256,
  onBytes: (sent: number) => void,
  onEnd: () => void = () => {},
): ReadableStream<Uint8Array> {
  let iterator: AsyncIterator<Uint8Array> | undefined
  let stage: 'head' | 'body' | 'tail' | 'done' = 'head'
  let sent = 0
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          if (stage === 'head') {
            stage = 'body'
            controller.enqueue(frame.head)
            return
          }
          if (stage === 'body') {
            iterator ??= source.read(0)[Symbol.asyncIterator]()
            const { done, value } = await iterator.next()
            if (!done) {
              if (value.byteLength === 0) return
              hasher.update(value)
              sent += value.byteLength
              controller.enqueue(value)
              onBytes(sent)
              return
            }
            stage = 'tail'
          }
          if (stage === 'tail') {
            stage = 'done'
            onEnd()
            controller.enqueue(frame.tail)
            controller.close()
          }
        } catch (error) {
          controller.error(new SourceError(`could not read the upload source: ${(error as Error).message}`, { cause: error }))
        }
      },
      async cancel() {
        await iterator?.return?.()
      },
    },
    { highWaterMark: 0 },
  )
}

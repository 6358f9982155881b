import type { EventEmitter } from 'node:events'
import { PassThrough, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Multipart } from '@fastify/multipart'
import { AppError, InvalidRequestError, MissingFileError } from '../errors.js'
import { decodeFormFilename } from './form-filename.js'

/** Room for the multipart boundaries and part headers around the file's bytes. */
export const MULTIPART_FRAMING_ALLOWANCE = 64 * 1024
/** Parts (fields and files) one upload request may carry; the rest are ignored fields anyway. */
export const MAX_PARTS = 100

/**
 * A boundary RFC 2046 allows: 1 to 70 of its characters, quoted or not (space only inside quotes,
 * never last). The parser would take an empty one and cut the body at the wrong places.
 */
const MULTIPART_BOUNDARY =
  /;\s*boundary=(?:"([0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?])"|([0-9A-Za-z'()+_,\-./:=?]{1,70}))\s*(?:;|$)/i

/** The boundary of a multipart Content-Type, unquoted; undefined when it has none RFC 2046 allows. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  const match = MULTIPART_BOUNDARY.exec(contentType ?? '')
  return match ? (match[1] ?? match[2]) : undefined
}

/**
 * Watches a multipart body for its close delimiter (RFC 2046: CRLF, `--`, the boundary, `--`) and
 * tells whether it has arrived. @fastify/multipart ends the parts quietly when a body stops before
 * it, exactly as when the form is whole; without this, a body cut after its file part would be
 * stored or refused depending on how far the store had read. The first such delimiter is the one
 * the parser stops at too (no part may contain it), and a body may open with it (an empty form).
 * Cost: one Buffer.indexOf per chunk, under 0.1 s a GiB of random bytes.
 */
export function watchCloseDelimiter(body: Readable, boundary: string): () => boolean {
  const delimiter = Buffer.from(`\r\n--${boundary}--`, 'latin1')
  const overlap = delimiter.length - 1
  let tail: Buffer = Buffer.from('\r\n')
  let arrived = false
  const onData = (chunk: Buffer) => {
    // The delimiter may straddle two chunks: look across the seam, then inside the chunk.
    const seam = Buffer.concat([tail, chunk.subarray(0, overlap)])
    if (seam.includes(delimiter) || chunk.includes(delimiter)) {
      arrived = true
      body.off('data', onData)
      return
    }
    tail = (chunk.length >= overlap ? chunk : seam).subarray(-overlap)
  }
  body.on('data', onData)
  return () => arrived
}

/** The client's body at fault (malformed, cut off, gone): 400, with the parser's own words. */
function malformedBody(error: unknown): AppError {
  const message = error instanceof Error ? error.message : String(error)
  return new InvalidRequestError(`The multipart body is malformed: ${message}`, { cause: error })
}

/**
 * Reads a multipart body holding exactly one file part named `file` and hands that part's bytes,
 * as they arrive, to `stage` (which stores them). Other fields and file parts are read and ignored;
 * more than MAX_PARTS parts, a second `file` part, none at all, or a body that ends before its close
 * delimiter (`closeDelimiterArrived`, from watchCloseDelimiter) refuse the upload, and whatever was
 * staged is discarded first.
 */
export async function receiveFilePart<Staged>(
  request: EventEmitter & { destroyed: boolean },
  parts: AsyncIterableIterator<Multipart>,
  stage: (source: Readable, filename: string | undefined) => Promise<Staged>,
  discard: (staged: Staged) => Promise<void>,
  closeDelimiterArrived: () => boolean,
): Promise<Staged> {
  let staged: Staged | undefined
  // Errors are classified by where they came from, never by their text: whatever the parser throws
  // or the file part's stream fails with is the body's fault (400), even after the store rethrew
  // it; anything else (the store's own failures) keeps its code.
  const bodyErrors = new WeakSet<object>()
  /** The file part ended before its closing delimiter: the client's body was cut or malformed. */
  let partCut = false
  const fromBody = (error: unknown) => {
    if (typeof error === 'object' && error !== null) bodyErrors.add(error)
  }
  const cutBy = (error: unknown) => {
    partCut = true
    fromBody(error)
  }
  try {
    for (let partCount = 1; ; partCount++) {
      const next = await parts.next().catch((error: unknown) => {
        fromBody(error)
        throw error
      })
      if (next.done) {
        if (!closeDelimiterArrived()) throw new InvalidRequestError('The multipart body ends before its closing delimiter.')
        break
      }
      const part = next.value
      if (partCount > MAX_PARTS) {
        if (part.type === 'file') part.file.resume()
        throw new InvalidRequestError(`A multipart body may carry at most ${MAX_PARTS} parts.`)
      }
      if (part.type !== 'file') continue
      if (part.fieldname !== 'file') {
        part.file.resume()
      } else if (staged !== undefined) {
        part.file.resume()
        throw new InvalidRequestError('The request must carry exactly one file part named "file".')
      } else {
        // A body cut off inside this part may already have ended it: the parser destroys the
        // stream without an error (and ends the iteration), so it must be caught here.
        if (part.file.destroyed) throw new InvalidRequestError('The multipart body ends inside the file part.')
        // From now on a pipeline listens, so a cut that happens while the daily slot is being
        // reserved still fails the upload instead of leaving it waiting for bytes.
        part.file.on('error', cutBy)
        endOrphanedPart(request, part.file)
        const source = new PassThrough()
        // A malformed body further on makes @fastify/multipart destroy this part, even one whose
        // bytes had all arrived but were not yet read; the pipeline below then waits for an 'end'
        // that never comes (nodejs/node#29724), and the upload with its temp file with it.
        part.file.once('close', () => {
          if (part.file.readableEnded) return
          const error = new Error('The file part was closed before all of its bytes were read.')
          cutBy(error)
          source.destroy(error)
        })
        pipeline(part.file, source).catch((error: unknown) => {
          // The parser ends a part cut off by the client without an error: a premature close.
          // (A store that gives up fails the pipeline with its own error instead.)
          if (isPrematureClose(error)) cutBy(error)
          source.destroy(error as Error)
        })
        staged = await stage(source, decodeFormFilename(part.filename))
      }
    }
  } catch (error) {
    // The pipeline above settles a turn after the store's: let a cut of the file part be recorded.
    await new Promise((resolve) => setImmediate(resolve))
    if (staged !== undefined) await discard(staged)
    await parts.return?.().catch(() => {})
    const fromTheBody = typeof error === 'object' && error !== null && bodyErrors.has(error)
    // A cut file part also fails the store's own pipeline, with a premature close of its own.
    const storeSawTheCut = partCut && isPrematureClose(error)
    throw error instanceof AppError || !(fromTheBody || storeSawTheCut) ? error : malformedBody(error)
  }
  if (staged === undefined) throw new MissingFileError()
  return staged
}

function isPrematureClose(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === 'ERR_STREAM_PREMATURE_CLOSE'
}

/** How long a file part may keep asking for bytes after its request has closed. */
export const ORPHANED_PART_MS = 1_000

/**
 * Ends a file part that can no longer get its bytes. When the request closes, @fastify/multipart
 * unpipes the parser from it and destroys the current part only if the request was aborted: a
 * request that ended (a short Content-Length whose extra bytes the server refused as a second
 * request) can leave the part open forever, and the upload waiting on it with its temp file. Once
 * the request has closed, a part that keeps asking for bytes (flowing, nothing buffered) for
 * ORPHANED_PART_MS will get none: it is destroyed, which fails the upload as a cut body. A part
 * the store is slow to read is paused or holds bytes, and is left alone.
 */
export function endOrphanedPart(request: EventEmitter & { destroyed: boolean }, file: Readable, orphanedMs = ORPHANED_PART_MS): void {
  const watch = () => {
    let askingSince: number | undefined
    const timer = setInterval(
      () => {
        if (file.readableEnded || file.destroyed) return clearInterval(timer)
        if (file.isPaused() || file.readableLength > 0) {
          askingSince = undefined
          return
        }
        askingSince ??= Date.now()
        if (Date.now() - askingSince >= orphanedMs) {
          clearInterval(timer)
          file.destroy()
        }
      },
      Math.max(10, Math.floor(orphanedMs / 10)),
    )
    timer.unref()
  }
  if (request.destroyed) watch()
  else request.once('close', watch)
}

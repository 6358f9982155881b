import type { IncomingMessage } from 'node:http'
import { PassThrough, type Readable } from 'node:stream'

/**
 * An object's bytes as GetObject streams them, guarded against a store that stalls mid-body: when
 * no byte comes for `stallMs` while the reader is ready for more, the stream fails with
 * `stalled()`, and every failure of the body is passed through `translate` (a 503 rather than a
 * socket error). Time the reader itself takes does not count: a download whose client reads
 * slowly (or pauses) holds the object's socket as long as it needs, so the socket's own idle
 * timeout is switched off for the body.
 */
export function watchedBody(body: Readable, stallMs: number, stalled: () => Error, translate: (error: unknown) => unknown): Readable {
  ;(body as Partial<IncomingMessage>).socket?.setTimeout(0)
  const out = new PassThrough({ readableHighWaterMark: body.readableHighWaterMark })
  // Waiting for the reader: time that is not the store's. The timer then lapses without effect,
  // and the reader's next drain starts it again (refresh() revives a timer that ran, not a cleared one).
  let waitingForReader = false
  const timer = setTimeout(() => {
    if (!waitingForReader) body.destroy(stalled())
  }, stallMs)
  body.on('data', (chunk: Buffer) => {
    timer.refresh()
    if (out.write(chunk)) return
    waitingForReader = true
    body.pause()
  })
  out.on('drain', () => {
    if (!waitingForReader) return
    waitingForReader = false
    timer.refresh()
    body.resume()
  })
  body.once('end', () => {
    clearTimeout(timer)
    out.end()
  })
  body.once('error', (error) => {
    clearTimeout(timer)
    out.destroy(translate(error) as Error)
  })
  // The reader stopped early (or the bytes all went): the object's connection is released.
  out.once('close', () => {
    clearTimeout(timer)
    if (!body.destroyed) body.destroy()
  })
  return out
}

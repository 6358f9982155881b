import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'

/**
 * What happens to the unread body of a request we refuse (401, 403, 429, 413, ...).
 *
 * Closing the connection at once loses the answer: the client is still writing, our kernel
 * answers its next bytes with a reset, and a reset makes the client's kernel drop our answer
 * before the client has read it (Node's fetch then fails with EPIPE, httpx with WriteError).
 * So, as nginx does:
 * - a small rest of the body is read and thrown away before answering, and the connection stays
 *   open for the next request;
 * - a larger one is not read to its end for nothing: the answer goes out with `Connection: close`,
 *   then our side stops writing (FIN) and keeps reading and discarding until the client closes,
 *   for a bounded time and number of bytes (lingering close), and only then closes.
 * Nothing read here is ever stored. Both phases are bounded, so no client can hold a connection
 * open with them: at most drainMs + lingerMs and drainBytes + lingerBytes per refusal, and a
 * client that stops sending is closed after lingerIdleMs. The linger bounds are nginx's defaults
 * (lingering_time 30 s, lingering_timeout 5 s): some clients (Debian's httpx 0.23) read no answer
 * before their whole body is sent, so the total must leave room for a slow machine to take tens of
 * MiB; a 5 s total lost a 20 MiB refusal under load.
 */
export interface RefusedBodyLimits {
  drainBytes: number
  drainMs: number
  lingerBytes: number
  lingerMs: number
  lingerIdleMs: number
}

export const REFUSED_BODY_LIMITS: Readonly<RefusedBodyLimits> = Object.freeze({
  /** Largest rest of a body read before answering (a declared length, or what a chunked body sends). */
  drainBytes: 1024 * 1024,
  /** Longest wait for that rest; a slower client gets the close path. */
  drainMs: 2_000,
  /** After an answer with `Connection: close`: bytes read and discarded until the client closes. */
  lingerBytes: 64 * 1024 * 1024,
  /** ... for at most this long in all ... */
  lingerMs: 30_000,
  /** ... and this long without a byte from the client. */
  lingerIdleMs: 5_000,
})

type Limits = Readonly<RefusedBodyLimits>

/** Whether the request still has body bytes we have not read. */
export function hasUnreadBody(request: IncomingMessage): boolean {
  if (request.complete || request.readableEnded) return false
  const length = request.headers['content-length']
  return length === undefined ? request.headers['transfer-encoding'] !== undefined : Number(length) > 0
}

/** At most this many body bytes are still to come (the declared length), or undefined for a chunked body. */
function remainingBytes(request: IncomingMessage): number | undefined {
  const length = request.headers['content-length']
  return length === undefined ? undefined : Number(length)
}

/**
 * Reads and discards the rest of a refused body when it is small: resolves true once it has
 * ended (the connection can then be kept), false when it is too large, too slow, or fails.
 */
export function discardSmallBody(request: IncomingMessage, limits: Limits = REFUSED_BODY_LIMITS): Promise<boolean> {
  const remaining = remainingBytes(request)
  if (remaining !== undefined && remaining > limits.drainBytes) return Promise.resolve(false)
  // A client that waits for `100 Continue` sends nothing: do not wait for it.
  if (expectsContinue(request)) return Promise.resolve(false)
  return new Promise((resolve) => {
    let received = 0
    const finish = (drained: boolean) => {
      clearTimeout(timer)
      request.off('data', onData)
      request.off('end', onEnd)
      request.off('error', onError)
      request.off('close', onError)
      resolve(drained)
    }
    const onData = (chunk: Buffer) => {
      received += chunk.length
      if (received > limits.drainBytes) finish(false)
    }
    const onEnd = () => finish(true)
    const onError = () => finish(false)
    const timer = setTimeout(() => finish(false), limits.drainMs)
    request.on('data', onData)
    request.once('end', onEnd)
    request.once('error', onError)
    request.once('close', onError)
    request.unpipe()
    request.resume()
  })
}

/** The libuv handle under a net.Socket, as Node's own HTTP server drives it. */
type SocketHandle = { reading: boolean; readStart(): number }

/**
 * Arranges a lingering close for the connection of a refused request whose body we do not read:
 * once the answer is written, our side stops writing (FIN); we keep reading and discarding until
 * the client closes, or the bounds are reached, and only then close the socket.
 */
export function lingerAfterAnswer(request: IncomingMessage, limits: Limits = REFUSED_BODY_LIMITS): void {
  // The body goes nowhere: keep it flowing so that the client's writes do not stall meanwhile.
  request.unpipe()
  request.resume()
  const socket = request.socket as Socket & { lingering?: boolean; _handle?: SocketHandle | null }
  if (socket.lingering || socket.destroyed) return
  socket.lingering = true
  // Node ends a `Connection: close` answer with socket.destroySoon(), which closes the socket while
  // the client's bytes still arrive: the reset to avoid. Shadow it for this socket only.
  socket.destroySoon = function lingeringClose() {
    if (socket.writable) socket.end()
    let received = 0
    const stop = () => socket.destroy()
    const timer = setTimeout(stop, limits.lingerMs)
    timer.unref()
    const idle = setTimeout(stop, limits.lingerIdleMs)
    idle.unref()
    // The HTTP parser is done with this connection: take the socket from it (adding a 'data'
    // listener makes Node hand the socket back from its parser) and read into nothing.
    socket.removeAllListeners('data')
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length
      if (received > limits.lingerBytes) stop()
      else idle.refresh()
    })
    socket.once('end', stop)
    socket.once('close', () => {
      clearTimeout(timer)
      clearTimeout(idle)
    })
    // Node stopped reading when the refused request's stream filled up; start again, as Node's own
    // HTTP server does when it resumes a socket it consumes (onSocketResume in _http_server.js).
    const handle = socket._handle
    if (handle && !handle.reading) {
      handle.reading = true
      handle.readStart()
    }
    socket.resume()
  }
}

/** Whether the client waits for `100 Continue` before it sends the body. */
export function expectsContinue(request: IncomingMessage): boolean {
  return (request.headers.expect ?? '').toLowerCase() === '100-continue'
}

/**
 * Sends `100 Continue` to a client that waits for it, once the request is going to be read: only
 * requests that passed authentication, plan, rate limits and size checks get it (RFC 9110 10.1.1).
 */
export function continueIfExpected(request: IncomingMessage & { continueSent?: boolean }, response: { writeContinue(): void }): void {
  if (!expectsContinue(request) || request.continueSent || request.complete) return
  request.continueSent = true
  response.writeContinue()
}

/**
 * Before an answer that does not read the request's body (a refusal, a replayed answer): a small
 * rest is read and thrown away, a larger one gets `Connection: close` and a lingering close.
 */
export async function setAsideUnreadBody(request: IncomingMessage, reply: { header(name: string, value: string): unknown }): Promise<void> {
  if (hasUnreadBody(request) && !(await discardSmallBody(request))) {
    reply.header('Connection', 'close')
    lingerAfterAnswer(request)
  }
}

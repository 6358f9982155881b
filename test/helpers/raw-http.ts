import net from 'node:net'
import type { SeenResponse } from './documented-responses.js'

export interface RawExchange {
  /** Every byte the server sent. */
  received: Buffer
  /** The first response in `received`, if a whole one arrived. */
  response?: SeenResponse
  /** Bytes after the first response (a second response would be a framing bug). */
  trailing: Buffer
  /** The server closed the connection (rather than our deadline firing). */
  closedByServer: boolean
}

/**
 * Writes `chunks` to a fresh TCP connection exactly as given (no HTTP client in between, so the
 * framing can be broken on purpose), optionally half-closes, and reads until the server closes the
 * connection or `deadlineMs` passes. A reset after the server answered is not an error.
 */
export function rawExchange(
  url: string,
  chunks: Buffer[],
  options: { halfClose?: boolean; deadlineMs?: number; head?: boolean } = {},
): Promise<RawExchange> {
  const { hostname, port } = new URL(url)
  const { halfClose = true, deadlineMs = 10_000 } = options
  return new Promise((resolve) => {
    const received: Buffer[] = []
    let closedByServer = false
    const socket = net.connect(Number(port), hostname, () => {
      for (const chunk of chunks) socket.write(chunk)
      if (halfClose) socket.end()
    })
    const deadline = setTimeout(() => socket.destroy(), deadlineMs)
    socket.on('data', (chunk: Buffer) => received.push(chunk))
    socket.on('end', () => (closedByServer = true))
    // EPIPE / ECONNRESET: the server answered early and closed while we were still writing.
    socket.on('error', () => (closedByServer = true))
    socket.on('close', () => {
      clearTimeout(deadline)
      const all = Buffer.concat(received)
      resolve({ received: all, ...parseFirstResponse(all, options.head), closedByServer })
    })
  })
}

/**
 * Parses one HTTP/1.1 response (Content-Length or chunked body) off the front of `bytes`.
 * `head`: the answer to a HEAD request, which has no body whatever its headers say.
 */
export function parseFirstResponse(bytes: Buffer, head = false): { response?: SeenResponse; trailing: Buffer } {
  const headEnd = bytes.indexOf('\r\n\r\n')
  if (headEnd < 0) return { trailing: bytes }
  const [statusLine = '', ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n')
  const status = /^HTTP\/1\.[01] ([0-9]{3})/.exec(statusLine)?.[1]
  if (!status) return { trailing: bytes }
  // Interim answers (100 Continue) precede the response proper.
  if (status.startsWith('1')) return parseFirstResponse(bytes.subarray(headEnd + 4), head)
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  let offset = headEnd + 4
  let body: Buffer = Buffer.alloc(0)
  const bodiless = head || status === '304' || status === '204'
  if (bodiless) {
    // No body to read.
  } else if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = []
    for (;;) {
      const lineEnd = bytes.indexOf('\r\n', offset)
      if (lineEnd < 0) return { trailing: bytes }
      const size = parseInt(bytes.subarray(offset, lineEnd).toString('latin1'), 16)
      offset = lineEnd + 2
      if (size === 0) {
        offset += 2
        break
      }
      parts.push(bytes.subarray(offset, offset + size))
      offset += size + 2
    }
    body = Buffer.concat(parts)
  } else if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length'])
    if (bytes.length < offset + length) return { trailing: bytes }
    body = bytes.subarray(offset, offset + length)
    offset += length
  }
  return {
    response: { status: Number(status), headers, body: body.toString('utf8') },
    trailing: bytes.subarray(Math.min(offset, bytes.length)),
  }
}

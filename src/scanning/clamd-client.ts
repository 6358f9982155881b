import net from 'node:net'
import type { Readable } from 'node:stream'
import type { ClamdAddress } from '../config.js'

/**
 * clamd's INSTREAM command (clamd(8)): the bytes go to clamd as length-prefixed chunks over one
 * connection, and clamd answers `stream: OK`, `stream: <signature> FOUND`, or an error. Nothing is
 * written to our disk: the source is read with backpressure, so memory stays flat whatever the size.
 *
 * Written here rather than taken from npm (clamdjs, clamav.js, clamscan): the protocol is a few
 * lines, and failing closed depends on telling its outcomes apart exactly, which those libraries
 * blur: they resolve clamd's raw reply (an ERROR reads as neither clean nor found), time out after
 * 5 s of silence on long scans, or lose the size-limit answer when clamd closes the socket
 * mid-stream (a write's EPIPE wins over the answer already on its way).
 */

export type ScanVerdict = { result: 'clean' } | { result: 'infected'; signature: string } | { result: 'too_large' }

/** clamd could not be reached, did not answer in time, or answered something other than a verdict: try again later. */
export class ClamdUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'ClamdUnavailableError'
  }
}

const SIZE_LIMIT = /INSTREAM size limit exceeded/i
const FOUND = /^stream: (.+) FOUND$/
const END = Buffer.alloc(4)

/** Reads one z-command answer (terminated by NUL) or whatever came before the connection closed. */
function answerOf(chunks: Buffer[]): string {
  return Buffer.concat(chunks).toString('utf8').replace(/\0+$/, '').trim()
}

export function parseVerdict(answer: string): ScanVerdict {
  if (answer === 'stream: OK') return { result: 'clean' }
  const found = FOUND.exec(answer)
  if (found) return { result: 'infected', signature: found[1]! }
  if (SIZE_LIMIT.test(answer)) return { result: 'too_large' }
  throw new ClamdUnavailableError(`clamd answered ${JSON.stringify(answer.slice(0, 200))}`)
}

export class ClamdClient {
  constructor(
    private readonly address: ClamdAddress,
    /** No connection, answer or progress for this long: the scan fails (and is tried again later). */
    private readonly timeoutMs: number,
  ) {}

  private connect(): net.Socket {
    const socket = 'path' in this.address ? net.connect(this.address.path) : net.connect(this.address.port, this.address.host)
    socket.setTimeout(this.timeoutMs)
    return socket
  }

  /** One command with a short answer (PING, VERSION). */
  command(name: 'PING' | 'VERSION'): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = this.connect()
      const chunks: Buffer[] = []
      socket.on('connect', () => socket.write(`z${name}\0`))
      socket.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        if (chunk.includes(0)) socket.end()
      })
      socket.on('timeout', () => socket.destroy(new ClamdUnavailableError(`clamd did not answer ${name} within ${this.timeoutMs} ms`)))
      socket.on('error', (error) =>
        reject(error instanceof ClamdUnavailableError ? error : new ClamdUnavailableError(error.message, { cause: error })),
      )
      socket.on('close', () => resolve(answerOf(chunks)))
    })
  }

  async ping(): Promise<void> {
    const answer = await this.command('PING')
    if (answer !== 'PONG') throw new ClamdUnavailableError(`clamd answered PING with ${JSON.stringify(answer)}`)
  }

  /** Streams `source` to clamd and gives its verdict; ClamdUnavailableError when there is none. */
  scan(source: Readable, signal?: AbortSignal): Promise<ScanVerdict> {
    return new Promise<ScanVerdict>((resolve, reject) => {
      if (signal?.aborted) return reject(new ClamdUnavailableError('the scan was stopped'))
      const socket = this.connect()
      const chunks: Buffer[] = []
      let settled = false
      let writeError: Error | undefined
      const fail = (error: Error) => {
        if (settled) return
        settled = true
        source.destroy()
        socket.destroy()
        reject(error)
      }
      signal?.addEventListener('abort', () => fail(new ClamdUnavailableError('the scan was stopped')), { once: true })
      socket.on('data', (chunk: Buffer) => chunks.push(chunk))
      socket.on('timeout', () => fail(new ClamdUnavailableError(`clamd gave no answer or progress for ${this.timeoutMs} ms`)))
      // A write that fails (EPIPE, ECONNRESET) usually means clamd answered and closed (its size
      // limit): the answer decides at 'close'; only without one is it an outage.
      socket.on('error', (error) => {
        writeError ??= error
      })
      socket.on('close', () => {
        if (settled) return
        const answer = answerOf(chunks)
        if (!answer)
          return fail(
            new ClamdUnavailableError(`clamd closed the connection without an answer${writeError ? `: ${writeError.message}` : ''}`, {
              cause: writeError,
            }),
          )
        try {
          settled = true
          source.destroy()
          resolve(parseVerdict(answer))
        } catch (error) {
          reject(error as Error)
        }
      })
      socket.on('connect', () => {
        void (async () => {
          try {
            socket.write('zINSTREAM\0')
            for await (const data of source) {
              const chunk = data as Buffer
              if (chunk.length === 0) continue
              if (socket.destroyed || settled || chunks.length > 0) return
              const header = Buffer.alloc(4)
              header.writeUInt32BE(chunk.length)
              socket.write(header)
              if (!socket.write(chunk)) {
                await new Promise<void>((drained) => {
                  const done = () => {
                    socket.off('drain', done)
                    socket.off('close', done)
                    drained()
                  }
                  socket.on('drain', done)
                  socket.on('close', done)
                })
              }
            }
            if (!socket.destroyed) socket.write(END)
          } catch (error) {
            // The source failed (the store could not be read): no verdict, try again later.
            fail(error as Error)
          }
        })()
      })
    })
  }
}

import { EventEmitter } from 'node:events'
import { PassThrough, Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Multipart } from '@fastify/multipart'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { InvalidRequestError } from '../../src/errors.js'
import { endOrphanedPart, multipartBoundary, receiveFilePart, watchCloseDelimiter } from '../../src/http/multipart-upload.js'

/** A stand-in for the raw request: only its 'close' and `destroyed` matter here. */
function fakeRequest() {
  const request = Object.assign(new EventEmitter(), { destroyed: false })
  return { request, close: () => ((request.destroyed = true), request.emit('close')) }
}

describe('endOrphanedPart: a file part that can no longer get bytes once its request closed', () => {
  const orphanedMs = 100
  // The watch runs on timers: fake ones make "within the grace" exact on a loaded machine, where a
  // real 50 ms sleep once outlasted the 100 ms grace.
  const sleep = (ms: number) => vi.advanceTimersByTimeAsync(ms)
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  it('destroys a part that keeps asking for bytes after the request closed', async () => {
    const { request, close } = fakeRequest()
    const part = new PassThrough()
    part.resume() // a consumer that wants bytes, as the store's pipeline does
    endOrphanedPart(request, part, orphanedMs)
    await sleep(orphanedMs * 2)
    expect(part.destroyed).toBe(false) // the request is still open: bytes may come
    close()
    await sleep(orphanedMs * 3)
    expect(part.destroyed).toBe(true)
  })

  it('leaves alone a part that ends, and a part the consumer has paused (a slow store)', async () => {
    const { request, close } = fakeRequest()
    const ended = new PassThrough()
    ended.resume()
    const paused = new PassThrough()
    paused.write(Buffer.alloc(10))
    paused.pause()
    endOrphanedPart(request, ended, orphanedMs)
    endOrphanedPart(request, paused, orphanedMs)
    close()
    // Ends within the grace: it must end whole (a cut part never emits 'end').
    await sleep(orphanedMs / 2)
    ended.end()
    await sleep(orphanedMs * 3)
    expect(ended.readableEnded).toBe(true)
    expect(paused.destroyed).toBe(false)
  })

  it('watches at once when the request has already closed', async () => {
    const { request, close } = fakeRequest()
    close()
    const part = new PassThrough()
    part.resume()
    endOrphanedPart(request, part, orphanedMs)
    await sleep(orphanedMs * 3)
    expect(part.destroyed).toBe(true)
  })
})

describe('receiveFilePart: a file part the parser destroys', () => {
  it('fails the upload as a malformed body when the part closes with bytes still unread, instead of waiting forever', async () => {
    const { request } = fakeRequest()
    // Every byte of the part has arrived (push(null)), and it is destroyed before the store read
    // them all: what @fastify/multipart does when the body turns out malformed after this part.
    // 1 MB, far more than the streams between the part and the store buffer: since Node 22 their
    // default highWaterMark is 64 KiB (it was 16 KiB), so receiveFilePart's PassThrough alone takes
    // up to 128 KiB, and a 100 KB part had been read whole (ended) before it was destroyed.
    const file = new Readable({ read() {} })
    for (let i = 0; i < 1_000; i++) file.push(Buffer.alloc(1_000))
    file.push(null)
    const part = { type: 'file', fieldname: 'file', filename: 'a.bin', file } as unknown as Multipart
    async function* parts(): AsyncGenerator<Multipart> {
      yield part
      await new Promise(() => {}) // the parser's error reaches the iterator later, if ever
    }
    let stored: Promise<void> | undefined
    const stage = (source: Readable) => {
      // A slow store: 1 KiB at a time, 10 ms each.
      const sink = new Writable({ highWaterMark: 1_024, write: (_chunk, _encoding, done) => void setTimeout(done, 10) })
      stored = pipeline(source, sink)
      setTimeout(() => file.destroy(), 20)
      return stored
    }
    const discard = vi.fn(async () => {})
    const received = receiveFilePart(request, parts(), stage, discard, () => true)
    await expect(received).rejects.toBeInstanceOf(InvalidRequestError)
    await expect(stored).rejects.toThrow()
    expect(discard).not.toHaveBeenCalled() // nothing was staged
  }, 5_000)
})

describe('multipartBoundary', () => {
  it('reads the boundary, unquoted, and refuses what RFC 2046 does not allow', () => {
    expect(multipartBoundary('multipart/form-data; boundary=abc')).toBe('abc')
    expect(multipartBoundary('multipart/form-data; BOUNDARY="a b:c"; charset=x')).toBe('a b:c')
    expect(multipartBoundary('multipart/form-data; boundary=')).toBeUndefined()
    expect(multipartBoundary('multipart/form-data; boundary=""')).toBeUndefined()
    expect(multipartBoundary(`multipart/form-data; boundary=${'b'.repeat(71)}`)).toBeUndefined()
    expect(multipartBoundary('multipart/form-data; boundary="ends in space "')).toBeUndefined()
    expect(multipartBoundary(undefined)).toBeUndefined()
  })
})

describe('watchCloseDelimiter', () => {
  /** Streams `chunks` through a watched body and tells whether the close delimiter of boundary A arrived. */
  async function arrives(chunks: string[]): Promise<boolean> {
    const body = new PassThrough()
    const arrived = watchCloseDelimiter(body, 'A')
    for (const chunk of chunks) body.write(Buffer.from(chunk, 'latin1'))
    body.end()
    await new Promise((resolve) => body.once('end', resolve))
    return arrived()
  }
  const whole = '--A\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nbytes\r\n--A--\r\nepilogue'

  it('sees the delimiter wherever the chunks split it, even one byte at a time', async () => {
    for (let cut = 1; cut < whole.length; cut++) {
      expect(await arrives([whole.slice(0, cut), whole.slice(cut)]), `split at ${cut}`).toBe(true)
    }
    expect(await arrives([...whole])).toBe(true)
  })
  it('takes a body that opens with it (an empty form)', async () => {
    expect(await arrives(['--A--'])).toBe(true)
    expect(await arrives(['-', '-A', '--\r\n'])).toBe(true)
  })
  it('does not take a body that stops before it, or a lookalike', async () => {
    const cut = whole.indexOf('--A--') + 4 // "--A-"
    expect(await arrives([whole.slice(0, cut)])).toBe(false)
    expect(await arrives([whole.slice(0, whole.indexOf('--A--'))])).toBe(false) // the part's delimiter only
    expect(await arrives(['--A\r\n\r\nx--A--'])).toBe(false) // not after a line break
    expect(await arrives(['--A\r\n\r\n\r\n--B--'])).toBe(false) // another boundary
    expect(await arrives(['--A\r\n\r\n\r\n--a--'])).toBe(false) // boundaries are case-sensitive
  })
})

import { EventEmitter } from 'node:events'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { endOrphanedPart } from '../../src/http/multipart-upload.js'

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

import http from 'node:http'
import net from 'node:net'
import { PassThrough, Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ServiceUnavailableError } from '../../src/errors.js'
import { openBlobStore } from '../../src/storage/open-blob-store.js'
import { watchedBody } from '../../src/storage/s3-object-body.js'
import { S3RVER_CREDENTIALS } from '../helpers/scale-out-env.js'

/** The S3 store as the server opens it, on `endpoint` (a server of the test's), with the backend timeout. */
function openS3Store(endpoint: string, backendTimeoutMs: number) {
  return openBlobStore({
    blobDir: '/nonexistent',
    storage: 's3',
    s3: {
      bucket: 'fileshare',
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      prefix: 'blobs/',
      partSize: 5 * 1024 * 1024,
      queueSize: 1,
    },
    backendTimeoutMs,
  })
}

/**
 * A store that stalls (it accepts connections and never answers, like an S3 endpoint frozen with
 * SIGSTOP in the chaos soak) fails a request with 503 within FILESHARE_BACKEND_TIMEOUT_MS, once:
 * not after the SDK's three attempts, and not never.
 */
describe('S3 store against an endpoint that stalls', () => {
  const TIMEOUT_MS = 400
  const UPLOAD_TIMEOUT_MS = 1_000
  let silent: net.Server
  const sockets = new Set<net.Socket>()
  let endpoint: string

  beforeAll(async () => {
    process.env.AWS_ACCESS_KEY_ID ??= S3RVER_CREDENTIALS.accessKeyId
    process.env.AWS_SECRET_ACCESS_KEY ??= S3RVER_CREDENTIALS.secretAccessKey
    silent = net.createServer((socket) => {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.resume()
    })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    endpoint = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`
  })

  afterAll(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => silent.close(resolve))
  })

  const open = () => openS3Store(endpoint, TIMEOUT_MS)

  it('a read and a resumable write answer 503 after one timeout, without retries', async () => {
    const store = await open()
    try {
      for (const operation of [() => store.get('0'.repeat(32)), () => store.createResumable()]) {
        const started = Date.now()
        await expect(operation()).rejects.toBeInstanceOf(ServiceUnavailableError)
        const took = Date.now() - started
        expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 50)
        // Three attempts would take three timeouts.
        expect(took).toBeLessThan(2 * TIMEOUT_MS)
      }
    } finally {
      await store.close()
    }
  })

  it('an upload answers 503 after its one attempt: the cleanup (a DeleteObject that would wait as long) goes on behind the answer', async () => {
    // A longer timeout than the others': the work around it must stay well under a second timeout on a loaded machine.
    const store = await openS3Store(endpoint, UPLOAD_TIMEOUT_MS)
    try {
      // One object (PutObject), and a multipart upload (CreateMultipartUpload) past the part size.
      for (const bytes of [Buffer.from('bytes'), Buffer.alloc(6 * 1024 * 1024, 1)]) {
        const started = Date.now()
        await expect(store.put(Readable.from([bytes]), { maxBytes: 10 * 1024 * 1024 })).rejects.toBeInstanceOf(ServiceUnavailableError)
        const took = Date.now() - started
        expect(took).toBeGreaterThanOrEqual(UPLOAD_TIMEOUT_MS - 50)
        // Waiting for the cleanup too would take two timeouts.
        expect(took).toBeLessThan(2 * UPLOAD_TIMEOUT_MS - 100)
      }
    } finally {
      await store.close()
    }
  })
})

/**
 * A store that starts a multipart upload and then stalls (the chaos soak froze S3 under uploads in
 * flight): the put answers 503 after its part's one timeout, not after the abort of its multipart
 * upload too, which the SDK would wait for; the abort goes on behind the answer.
 */
describe('S3 store: a multipart upload whose part stalls', () => {
  const TIMEOUT_MS = 1_000
  let server: http.Server
  const requests: string[] = []
  const held = new Set<http.ServerResponse>()

  beforeAll(async () => {
    process.env.AWS_ACCESS_KEY_ID ??= S3RVER_CREDENTIALS.accessKeyId
    process.env.AWS_SECRET_ACCESS_KEY ??= S3RVER_CREDENTIALS.secretAccessKey
    server = http.createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`)
      request.resume()
      if (request.method === 'POST' && request.url?.includes('uploads')) {
        request.on('end', () => {
          response.writeHead(200, { 'content-type': 'application/xml' })
          response.end(
            '<?xml version="1.0" encoding="UTF-8"?><InitiateMultipartUploadResult><Bucket>fileshare</Bucket>' +
              '<Key>k</Key><UploadId>stalled-upload</UploadId></InitiateMultipartUploadResult>',
          )
        })
        return
      }
      // Parts, aborts, deletes: never answered.
      held.add(response)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  })

  afterAll(async () => {
    for (const response of held) response.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  it("answers 503 after the part's one timeout; the abort of the multipart upload is sent behind the answer", async () => {
    const store = await openS3Store(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, TIMEOUT_MS)
    try {
      const started = Date.now()
      await expect(store.put(Readable.from([Buffer.alloc(6 * 1024 * 1024, 2)]), { maxBytes: 10 * 1024 * 1024 })).rejects.toBeInstanceOf(
        ServiceUnavailableError,
      )
      const took = Date.now() - started
      expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 50)
      // Waiting for the abort too would take two timeouts.
      expect(took).toBeLessThan(2 * TIMEOUT_MS - 100)
      // The abort still goes out (and the collector removes the upload should it fail).
      for (let i = 0; i < 50 && !requests.some((line) => line.startsWith('DELETE') && line.includes('uploadId=stalled-upload')); i++) {
        await sleep(20)
      }
      expect(requests.filter((line) => line.startsWith('DELETE') && line.includes('uploadId=stalled-upload'))).toHaveLength(1)
    } finally {
      await store.close()
    }
  })
})

describe('watchedBody', () => {
  const stalled = () => new ServiceUnavailableError('stalled')

  it('fails with 503 when the bytes stop while the reader waits', async () => {
    const source = new PassThrough()
    const body = watchedBody(source, 200, stalled, (error) => error)
    source.write(Buffer.from('first'))
    const chunks: Buffer[] = []
    const started = Date.now()
    await expect(
      (async () => {
        for await (const chunk of body) chunks.push(chunk as Buffer)
      })(),
    ).rejects.toBeInstanceOf(ServiceUnavailableError)
    expect(Buffer.concat(chunks).toString()).toBe('first')
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(source.destroyed).toBe(true)
  })

  it('lets a reader that pauses longer than the stall limit read everything', async () => {
    const content = Buffer.alloc(1024 * 1024, 7)
    const source = Readable.from([content.subarray(0, 512 * 1024), content.subarray(512 * 1024)], { objectMode: false })
    const body = watchedBody(source, 100, stalled, (error) => error)
    const chunks: Buffer[] = []
    for await (const chunk of body) {
      chunks.push(chunk as Buffer)
      // The reader takes its time: the source waits, and that is no stall.
      await sleep(250)
    }
    expect(Buffer.concat(chunks).equals(content)).toBe(true)
  })

  it('still fails when the bytes stop after the reader has paused and caught up', async () => {
    const source = new PassThrough()
    const body = watchedBody(source, 200, stalled, (error) => error)
    // More than the buffers hold: while the reader pauses, the rest waits in them (not the store's time).
    for (let i = 0; i < 8; i++) source.write(Buffer.alloc(64 * 1024, i))
    let received = 0
    const started = Date.now()
    await expect(
      (async () => {
        for await (const chunk of body) {
          received += (chunk as Buffer).length
          if (received === (chunk as Buffer).length) await sleep(400)
        }
      })(),
    ).rejects.toBeInstanceOf(ServiceUnavailableError)
    expect(received).toBe(8 * 64 * 1024)
    // The pause (400 ms) did not count; the stall after the reader caught up did (200 ms).
    const took = Date.now() - started
    expect(took).toBeGreaterThanOrEqual(550)
    expect(took).toBeLessThan(1_200)
  })

  it('passes a failure of the body through the translation', async () => {
    const source = new PassThrough()
    const body = watchedBody(source, 10_000, stalled, () => new ServiceUnavailableError('translated'))
    source.destroy(new Error('socket hang up'))
    await expect(
      (async () => {
        for await (const chunk of body) void chunk
      })(),
    ).rejects.toThrow('translated')
  })
})

/**
 * A download whose reader pauses (a video player, a client on a slow link) keeps its bytes however
 * long the pause: only a store that stops sending while the reader waits fails it. The AWS SDK arms
 * a socket timeout of 6 s or more only 3 s into a request, under a body already streaming, so the
 * pause here outlasts both (the test takes about 10 s for that reason).
 */
describe('S3 store: a download whose reader pauses past the backend timeout', () => {
  const TIMEOUT_MS = 6_000
  const SIZE = 32 * 1024 * 1024
  let server: http.Server
  let endpoint: string

  beforeAll(async () => {
    process.env.AWS_ACCESS_KEY_ID ??= S3RVER_CREDENTIALS.accessKeyId
    process.env.AWS_SECRET_ACCESS_KEY ??= S3RVER_CREDENTIALS.secretAccessKey
    // GetObject as S3 answers it: the object's bytes, sent as fast as the reader takes them.
    server = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(SIZE) })
      Readable.from(
        (function* () {
          for (let sent = 0; sent < SIZE; sent += 64 * 1024) yield Buffer.alloc(64 * 1024, 7)
        })(),
      ).pipe(response)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    endpoint = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`
  })

  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  it("reads every byte after a pause longer than the timeout plus the SDK's 3 s", { timeout: 30_000 }, async () => {
    const store = await openS3Store(endpoint, TIMEOUT_MS)
    try {
      const body = await store.get('0'.repeat(32))
      let read = 0
      let paused = false
      for await (const chunk of body) {
        read += (chunk as Buffer).length
        if (!paused && read >= 1024 * 1024) {
          paused = true
          await sleep(TIMEOUT_MS + 3_500)
        }
      }
      expect(read).toBe(SIZE)
    } finally {
      await store.close()
    }
  })
})

/**
 * The chaos soak's downloads that answered 503 long after any fault: the store closed a kept-alive
 * connection just as a GetObject went out on it ("socket hang up", ECONNRESET, at once). The SDK
 * names such a reset a TimeoutError to retry it; the store's "a timeout is final" rule must not
 * swallow that retry.
 */
describe('S3 store: a connection reset as a request goes out', () => {
  let server: http.Server
  let endpoint: string
  let requests = 0

  beforeAll(async () => {
    process.env.AWS_ACCESS_KEY_ID ??= S3RVER_CREDENTIALS.accessKeyId
    process.env.AWS_SECRET_ACCESS_KEY ??= S3RVER_CREDENTIALS.secretAccessKey
    // The first request's connection is reset unanswered; the next ones get the object.
    server = http.createServer((request, response) => {
      requests++
      if (requests === 1) return request.socket.destroy()
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '5' })
      response.end('hello')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    endpoint = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`
  })

  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  it('is retried (a download and a read of the store), not answered 503', async () => {
    const store = await openS3Store(endpoint, 2_000)
    try {
      const chunks: Buffer[] = []
      for await (const chunk of await store.get('0'.repeat(32))) chunks.push(chunk as Buffer)
      expect(Buffer.concat(chunks).toString()).toBe('hello')
      expect(requests).toBe(2)
    } finally {
      await store.close()
    }
  })
})

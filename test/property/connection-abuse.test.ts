import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { bearer, makeTempDir } from '../helpers/test-app.js'
import { expectDocumented } from '../helpers/documented-responses.js'
import { parseFirstResponse, rawExchange } from '../helpers/raw-http.js'

/**
 * Clients that hold connections open on purpose: slowloris headers, stalled or trickling bodies,
 * oversized headers. Small timeouts keep the test short.
 *
 * Node checks the headers deadline only every `connectionsCheckingInterval` (30 s by default, as
 * docs/configuration.md says), so this test shortens that interval before listening; everything
 * else is the app exactly as src/app.ts builds it.
 */
const HEADERS_TIMEOUT_MS = 600
const IDLE_TIMEOUT_MS = 1_200
const SLOW_CLIENTS = 30

interface Started {
  app: App
  url: string
  apiKey: string
  accountId: number
  close(): Promise<void>
}

async function startAppWithShortTimeouts(): Promise<Started> {
  const dataDir = await makeTempDir()
  const config = loadConfig({
    FILESHARE_DATA_DIR: dataDir,
    FILESHARE_LOG_LEVEL: 'silent',
    FILESHARE_PUBLIC_URL: 'http://files.example.test',
    FILESHARE_CACHE_TTL_MS: '0',
    FILESHARE_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    FILESHARE_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
  })
  const app = await buildApp(config)
  // Not in @types/node 20, but a documented http.Server property (read when the server starts listening).
  ;(app.server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval = 100
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const { account, apiKey } = await app.services.accounts.create('slow@example.test', 'pro')
  await app.services.accounts.setLimits(account.id, { requests_per_minute: 1_000_000, requests_per_day: 1_000_000 })
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    apiKey,
    accountId: account.id,
    async close() {
      await app.close()
      await fs.rm(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * A connection that writes `first`, then `drip(n)` every `everyMs` (until drip returns undefined),
 * and reads until the server closes it or `giveUpMs` passes.
 */
function tricklingClient(url: string, first: Buffer, drip: (n: number) => Buffer | undefined, everyMs: number, giveUpMs = 20_000) {
  const { hostname, port } = new URL(url)
  const received: Buffer[] = []
  let dripped = 0
  let gaveUp = false
  let timer: NodeJS.Timeout | undefined
  const socket = net.connect(Number(port), hostname, () => {
    socket.write(first)
    timer = setInterval(() => {
      if (!socket.writable) return
      const piece = drip(dripped)
      if (piece === undefined) return clearInterval(timer)
      socket.write(piece)
      dripped++
    }, everyMs)
  })
  socket.on('data', (chunk: Buffer) => received.push(chunk))
  socket.on('error', () => {})
  const giveUp = setTimeout(() => {
    gaveUp = true
    socket.destroy()
  }, giveUpMs)
  const result = new Promise<{ closedByServer: boolean; received: Buffer; dripped: number }>((resolve) => {
    socket.on('close', () => {
      clearInterval(timer)
      clearTimeout(giveUp)
      resolve({ closedByServer: !gaveUp, received: Buffer.concat(received), dripped })
    })
  })
  return {
    get dripped() {
      return dripped
    },
    result,
  }
}

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, limitMs = 10_000) {
  const deadline = Date.now() + limitMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('slow and oversized clients', () => {
  let s: Started
  beforeAll(async () => {
    s = await startAppWithShortTimeouts()
  })
  afterAll(async () => {
    await s?.close()
  })

  /** Everything an upload could leave behind. */
  async function traces() {
    const blobs: string[] = []
    for await (const entry of s.app.blobStore.list()) blobs.push(entry.key)
    const tmp = await fs.readdir(path.join(s.app.config.blobDir, 'tmp')).catch(() => [])
    const stats = await s.app.services.accounts.stats(s.accountId)
    return { blobs, tmp, files: stats.totalFiles, uploadsToday: stats.uploadsToday }
  }

  async function normalRequestsSucceed() {
    const health = await fetch(`${s.url}/healthz`)
    expect(health.status).toBe(200)
    const list = await fetch(`${s.url}/api/v1/files`, { headers: bearer(s.apiKey) })
    expect(list.status).toBe(200)
    expect(await list.json()).toMatchObject({ success: true })
  }

  it('slowloris: trickled headers get 408 with the JSON body and a closed connection, while others are served', async () => {
    const clients = Array.from({ length: SLOW_CLIENTS }, (_, i) =>
      tricklingClient(
        s.url,
        Buffer.from(`GET /api/v1/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.apiKey}\r\n`),
        (n) => Buffer.from(`X-Slow-${i}-${n}: y\r\n`),
        // Far more often than the idle timeout: only the headers deadline can stop them.
        50,
      ),
    )
    // While every slow client holds its connection and keeps sending, normal requests are served.
    await waitFor(() => clients.every((client) => client.dripped >= 2), 'the slow clients to start trickling')
    await normalRequestsSucceed()

    for (const client of clients) {
      const { closedByServer, received, dripped } = await client.result
      // The server, not the client (which would have trickled on for 20 s), ended the connection,
      // although the client kept sending.
      expect(closedByServer).toBe(true)
      expect(dripped).toBeGreaterThan(0)
      const { response, trailing } = parseFirstResponse(received)
      expect(response?.status).toBe(408)
      expect(expectDocumented(response!, 'slowloris').code).toBe('invalid_request')
      expect(response!.headers.connection).toBe('close')
      expect(trailing.length).toBe(0)
    }
    await normalRequestsSucceed()
  })

  it('a connection that sends nothing is closed by the server', async () => {
    const idle = tricklingClient(s.url, Buffer.alloc(0), () => undefined, 60_000)
    const { closedByServer } = await idle.result
    expect(closedByServer).toBe(true)
  })

  it('a stalled upload body is cut off at the idle timeout, leaves nothing behind, and starves no one', async () => {
    const boundary = 'stalled-body'
    const head =
      `POST /api/v1/files/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.apiKey}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 100000\r\n\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="stalled.bin"\r\n\r\n` +
      'x'.repeat(5_000)
    const stalled = Array.from({ length: 5 }, () => tricklingClient(s.url, Buffer.from(head), () => undefined, 60_000))
    // The uploads have started (their bytes are being written), then stall.
    await waitFor(async () => (await traces()).tmp.length === stalled.length, 'the uploads to start')
    await normalRequestsSucceed()
    for (const client of stalled) {
      const { closedByServer, received } = await client.result
      expect(closedByServer).toBe(true)
      // Cut off without an answer (there is no one left to read it) ...
      expect(received.length).toBe(0)
    }
    // ... and nothing of them is kept: no bytes, no temp file, no record, no daily slot.
    const nothing = { blobs: [], tmp: [], files: 0, uploadsToday: 0 }
    await waitFor(async () => JSON.stringify(await traces()) === JSON.stringify(nothing), 'the cut-off uploads to be cleaned up').catch(
      () => {},
    )
    expect(await traces()).toEqual(nothing)
    await normalRequestsSucceed()
  })

  it('a body that trickles but never stalls for the idle timeout is not cut off (no whole-request deadline)', async () => {
    const boundary = 'trickled-body'
    const content = 'slow but steady '.repeat(4)
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="steady.txt"\r\n\r\n${content}\r\n--${boundary}--\r\n`
    const head =
      `POST /api/v1/files/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.apiKey}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`
    // Eight pieces, one every quarter of the idle timeout: the whole upload takes longer than the idle
    // timeout and the headers deadline together, yet the connection is never idle for that long.
    const pieces = 8
    const size = Math.ceil(body.length / pieces)
    const client = tricklingClient(
      s.url,
      Buffer.from(head),
      (n) => (n < pieces ? Buffer.from(body.slice(n * size, (n + 1) * size)) : undefined),
      Math.floor(IDLE_TIMEOUT_MS / 4),
    )
    const { received, dripped } = await client.result
    expect(dripped).toBe(pieces)
    const { response } = parseFirstResponse(received)
    expect(response?.status).toBe(201)
    const uploaded = JSON.parse(response!.body) as { file_id: number; size: number }
    expect(uploaded.size).toBe(content.length)
    await s.app.services.files.delete(s.accountId, uploaded.file_id)
  })

  it('oversized request headers get 431 with the JSON body, and the server keeps serving', async () => {
    const shape = fc.record({
      // Node's limit is 16 KiB for the request line and headers together.
      total: fc.integer({ min: 17 * 1024, max: 200 * 1024 }),
      headers: fc.integer({ min: 1, max: 200 }),
      where: fc.constantFrom('header', 'url', 'cookie'),
    })
    await fc.assert(
      fc.asyncProperty(shape, async ({ total, headers, where }) => {
        const each = Math.ceil(total / headers)
        let request: string
        if (where === 'url') request = `GET /api/v1/files?pad=${'u'.repeat(total)} HTTP/1.1\r\nHost: x\r\n\r\n`
        else if (where === 'cookie') request = `GET /api/v1/files HTTP/1.1\r\nHost: x\r\nCookie: ${'c=1; '.repeat(total / 5)}\r\n\r\n`
        else
          request = `GET /api/v1/files HTTP/1.1\r\nHost: x\r\n${Array.from({ length: headers }, (_, i) => `X-Big-${i}: ${'h'.repeat(each)}\r\n`).join('')}\r\n`
        const { response, closedByServer } = await rawExchange(s.url, [Buffer.from(request)], { halfClose: false })
        expect(closedByServer).toBe(true)
        expect(response?.status, `${where} ${total}`).toBe(431)
        expect(expectDocumented(response!, `${where} ${total}`).code).toBe('invalid_request')
      }),
      { numRuns: 25 },
    )
    // Just under the limit is an ordinary request.
    const fits = await fetch(`${s.url}/api/v1/files`, { headers: { ...bearer(s.apiKey), 'x-pad': 'p'.repeat(12 * 1024) } })
    expect(fits.status).toBe(200)
    await normalRequestsSucceed()
  })
})

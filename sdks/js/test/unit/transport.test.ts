// The transport against stand-in HTTP servers on 127.0.0.1 (the platform's own fetch and node:http):
// redirects are not followed, and timeoutMs is an idle timeout, never a deadline for a transfer.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { APIConnectionError, BadRequestError, Fileshare } from '../../src/index.js'
import { FILE } from '../helpers/fake-fetch.js'
import { randomBytes, sha256Hex } from '../helpers/env.js'

const KEY = 'fsk_' + 't'.repeat(43)
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Seen {
  method: string
  url: string
  authorization: string | undefined
}

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((s) => {
      const closed = new Promise((resolve) => s.close(resolve))
      s.closeAllConnections()
      return closed
    }),
  )
})

async function standIn(handle: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>) {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization })
    void Promise.resolve(handle(req, res)).catch(() => res.destroy())
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { origin, seen, server }
}

/** A link's POST answered as the server does: 303 to its grant (`<link>/g`), which `serve` answers. */
function granting(serve: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>) {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return serve(req, res)
    req.resume()
    const grant = `http://${req.headers.host}${req.url}/g`
    res
      .writeHead(303, { location: grant, 'content-type': 'application/json' })
      .end(JSON.stringify({ success: true, download_url: grant, expires_at: '2026-11-27 13:00:00' }))
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

describe('redirects are not followed', () => {
  async function redirecting() {
    const elsewhere = await standIn((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}'))
    const api = await standIn((req, res) => {
      req.resume()
      res.writeHead(302, { location: `${elsewhere.origin}${req.url}`, 'x-request-id': 'req-302' }).end()
    })
    const client = new Fileshare({ baseUrl: `${api.origin}/api/v1`, apiKey: KEY, maxRetries: 2, resumableThreshold: 1e12 })
    return { client, api, elsewhere }
  }

  it('a 302 on a GET throws BadRequestError with status 302, sends nothing elsewhere, and is not retried', async () => {
    const { client, api, elsewhere } = await redirecting()
    const error = await client.files.get(7).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BadRequestError)
    expect(error).toMatchObject({ status: 302, requestId: 'req-302' })
    expect((error as Error).message).toMatch(/^302: a redirect to http:\/\/127\.0\.0\.1:\d+\/api\/v1\/files\/7, which is not followed/)
    expect(String(error)).not.toContain(KEY)
    expect(api.seen).toEqual([{ method: 'GET', url: '/api/v1/files/7', authorization: `Bearer ${KEY}` }])
    expect(elsewhere.seen).toEqual([])
  })

  it('nor on stats(), a delete, an upload or a download link', async () => {
    const { client, api, elsewhere } = await redirecting()
    await expect(client.stats()).rejects.toMatchObject({ name: 'BadRequestError', status: 302 })
    await expect(client.files.delete(7)).rejects.toMatchObject({ name: 'BadRequestError', status: 302 })
    await expect(client.files.upload(new TextEncoder().encode('hello'), { filename: 'a.txt' })).rejects.toMatchObject({
      name: 'BadRequestError',
      status: 302,
    })
    await expect(client.files.upload(new Blob(['hello']), { filename: 'a.txt' })).rejects.toMatchObject({
      name: 'BadRequestError',
      status: 302,
    })
    const dir = mkdtempSync(path.join(tmpdir(), 'fileshare-redirect-'))
    try {
      await expect(client.download(`${api.origin}/download/tok`, path.join(dir, 'a.txt'), { resume: false })).rejects.toMatchObject({
        name: 'BadRequestError',
        status: 302,
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    expect(api.seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /api/v1/stats',
      'DELETE /api/v1/files/7',
      'POST /api/v1/files/upload',
      'POST /api/v1/files/upload',
      'POST /download/tok',
    ])
    expect(elsewhere.seen).toEqual([])
  })

  it('a redirect to the same server is not followed either', async () => {
    const api = await standIn((req, res) => {
      if (req.url === '/api/v1/files/7') res.writeHead(301, { location: '/api/v2/files/7' }).end()
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, file: FILE }))
    })
    const client = new Fileshare({ baseUrl: `${api.origin}/api/v1`, apiKey: KEY })
    await expect(client.files.get(7)).rejects.toMatchObject({ name: 'BadRequestError', status: 301 })
    expect(api.seen.map((s) => s.url)).toEqual(['/api/v1/files/7'])
  })
})

describe('timeoutMs is an idle timeout', () => {
  const TIMEOUT = 200
  const STEP = 50 // a chunk every 50 ms: never idle for TIMEOUT ms
  const STEPS = 16 // 800 ms in all: four times TIMEOUT

  it('lets a download that lasts longer than timeoutMs finish while bytes keep coming', async () => {
    const data = randomBytes(STEPS * 1000, 21)
    const api = await standIn(
      granting(async (_req, res) => {
        res.writeHead(200, { 'content-length': String(data.length), etag: `"${sha256Hex(data)}"` })
        for (let i = 0; i < STEPS; i++) {
          res.write(data.subarray(i * 1000, (i + 1) * 1000))
          await pause(STEP)
        }
        res.end()
      }),
    )
    const client = new Fileshare({ baseUrl: `${api.origin}/api/v1`, apiKey: KEY, timeoutMs: TIMEOUT, maxRetries: 0 })
    const dir = mkdtempSync(path.join(tmpdir(), 'fileshare-idle-'))
    try {
      const started = Date.now()
      const result = await client.download(`${api.origin}/download/tok`, path.join(dir, 'slow.bin'))
      expect(Date.now() - started).toBeGreaterThanOrEqual(3 * TIMEOUT)
      expect(result).toMatchObject({ size: data.length, sha256: sha256Hex(data) })
      expect(sha256Hex(readFileSync(path.join(dir, 'slow.bin')))).toBe(sha256Hex(data))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('lets an upload that lasts longer than timeoutMs finish while bytes keep going', async () => {
    const chunks = Array.from({ length: STEPS }, (_, i) => randomBytes(1000, 30 + i))
    const data = Buffer.concat(chunks)
    let received: Buffer = Buffer.alloc(0)
    const api = await standIn(async (req, res) => {
      received = await readBody(req)
      res
        .writeHead(201, { 'content-type': 'application/json' })
        .end(JSON.stringify({ success: true, ...FILE, size: data.length, sha256: sha256Hex(data) }))
    })
    const client = new Fileshare({
      baseUrl: `${api.origin}/api/v1`,
      apiKey: KEY,
      timeoutMs: TIMEOUT,
      maxRetries: 0,
      resumableThreshold: 1e12,
    })
    async function* slowSource() {
      for (const chunk of chunks) {
        await pause(STEP)
        yield chunk
      }
    }
    const started = Date.now()
    const file = await client.files.upload(slowSource(), { filename: 'slow.bin' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * TIMEOUT)
    expect(file.sha256).toBe(sha256Hex(data))
    expect(received.includes(data)).toBe(true)
  })

  it('still throws APIConnectionError when a download stops moving half-way', async () => {
    const api = await standIn(
      granting(async (_req, res) => {
        res.writeHead(200, { 'content-length': '10000' })
        res.write(Buffer.alloc(1000))
        await pause(TIMEOUT * 5) // silent from here on
        res.destroy()
      }),
    )
    const client = new Fileshare({ baseUrl: `${api.origin}/api/v1`, apiKey: KEY, timeoutMs: TIMEOUT, maxRetries: 0 })
    const dir = mkdtempSync(path.join(tmpdir(), 'fileshare-idle-'))
    try {
      const error = await client.download(`${api.origin}/download/tok`, path.join(dir, 'stalled.bin')).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(APIConnectionError)
      expect((error as Error).message).toMatch(new RegExp(`${TIMEOUT} ms`))
      expect(api.seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /download/tok', 'GET /download/tok/g'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('and when a server accepts the connection but never answers', async () => {
    const api = await standIn(() => {}) // never answers
    const client = new Fileshare({ baseUrl: `${api.origin}/api/v1`, apiKey: KEY, timeoutMs: TIMEOUT, maxRetries: 0 })
    const started = Date.now()
    const error = await client.stats().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(APIConnectionError)
    expect(Date.now() - started).toBeLessThan(TIMEOUT * 10)
  })
})

import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import tls from 'node:tls'
import type { AddressInfo } from 'node:net'
import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { MAX_ANSWER_BYTES, parseRetryAfter, sendWebhook, type WebhookSendMessage } from '../../src/services/webhook-sender.js'

interface Received {
  method: string | undefined
  url: string | undefined
  headers: http.IncomingHttpHeaders
  body: string
}

const servers: { close(): void }[] = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

/** A receiver on 127.0.0.1 (port 0) that records each request and answers it with `answer`. */
async function receiver(answer: (request: http.IncomingMessage, response: http.ServerResponse) => void) {
  const received: Received[] = []
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') })
      answer(request, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  servers.push({
    close: () => {
      server.closeAllConnections()
      server.close()
    },
  })
  return { port: (server.address() as AddressInfo).port, received }
}

const MESSAGE: WebhookSendMessage = {
  id: 'msg_2b9Xk3mQ7pL0aZ4vN8cR1tY6wEs',
  timestamp: 1_800_000_000,
  body: '{"type":"file.uploaded","timestamp":"2027-01-15T08:00:00.000Z","data":{"name":"Überweisung €.pdf"}}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1,bm90IGEgcmVhbCBzaWduYXR1cmUgYnV0IGJhc2U2NA==',
  userAgent: 'Fileshare-Webhooks/1.2.3',
}

const local = (port: number, path = '/hook?source=fileshare') => ({
  url: new URL(`http://127.0.0.1:${port}${path}`),
  address: '127.0.0.1',
  family: 4 as const,
})

describe('sendWebhook', () => {
  it('POSTs the body with exactly the Standard Webhooks headers, and reports a 200', async () => {
    const { port, received } = await receiver((_request, response) => response.end('ok'))
    const attempt = await sendWebhook(local(port), MESSAGE)
    expect(attempt).toMatchObject({ status: 200, error: null, retryAfterSeconds: null })
    expect(attempt.durationMs).toBeGreaterThan(0)
    expect(attempt.durationMs).toBeLessThan(5000)
    expect(received).toHaveLength(1)
    const [request] = received
    expect(request?.method).toBe('POST')
    expect(request?.url).toBe('/hook?source=fileshare')
    expect(request?.body).toBe(MESSAGE.body)
    expect(request?.headers).toMatchObject({
      host: `127.0.0.1:${port}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(MESSAGE.body)),
      'user-agent': 'Fileshare-Webhooks/1.2.3',
      'webhook-id': MESSAGE.id,
      'webhook-timestamp': '1800000000',
      'webhook-signature': MESSAGE.signature,
    })
    // Nothing else but what Node adds for the connection itself.
    expect(Object.keys(request?.headers ?? {}).sort()).toEqual(
      ['connection', 'content-length', 'content-type', 'host', 'user-agent', 'webhook-id', 'webhook-signature', 'webhook-timestamp'].sort(),
    )
  })

  it('reports a 500 and a 410 as statuses, with no error', async () => {
    for (const code of [500, 410, 204, 429]) {
      const { port } = await receiver((_request, response) => {
        response.statusCode = code
        response.end(code === 204 ? undefined : 'answer')
      })
      expect(await sendWebhook(local(port), MESSAGE)).toMatchObject({ status: code, error: null })
    }
  })

  it('does not follow a redirect: the 3xx is the status', async () => {
    const target = await receiver((_request, response) => response.end('should not be reached'))
    const { port, received } = await receiver((_request, response) => {
      response.writeHead(307, { location: `http://127.0.0.1:${target.port}/elsewhere` })
      response.end()
    })
    expect(await sendWebhook(local(port), MESSAGE)).toMatchObject({ status: 307, error: null })
    expect(received).toHaveLength(1)
    expect(target.received).toHaveLength(0)
  })

  it("connects to target.address even when the URL's name does not resolve (the pinning), keeping the name as Host", async () => {
    const { port, received } = await receiver((_request, response) => response.end())
    const target = { url: new URL(`http://receiver.invalid:${port}/pinned`), address: '127.0.0.1', family: 4 as const }
    expect(await sendWebhook(target, MESSAGE)).toMatchObject({ status: 200, error: null })
    expect(received[0]?.headers.host).toBe(`receiver.invalid:${port}`)
    expect(received[0]?.url).toBe('/pinned')
  })

  it('falls back to the next checked address when the first does not answer, and to no other', async () => {
    const { port, received } = await receiver((_request, response) => response.end())
    // Nothing listens on 127.0.0.2 (the receiver is on 127.0.0.1 only): refused at once, then the next.
    const target = {
      url: new URL(`http://receiver.invalid:${port}/fallback`),
      address: '127.0.0.2',
      family: 4 as const,
      addresses: [
        { address: '127.0.0.2', family: 4 as const },
        { address: '127.0.0.1', family: 4 as const },
      ],
    }
    expect(await sendWebhook(target, MESSAGE)).toMatchObject({ status: 200, error: null })
    expect(received.map((request) => request.url)).toEqual(['/fallback'])
    const only = { ...target, addresses: [{ address: '127.0.0.2', family: 4 as const }] }
    expect(await sendWebhook(only, MESSAGE)).toMatchObject({ status: null, error: 'ECONNREFUSED' })
  })

  it("connects to target.address, not to the URL's IP literal", async () => {
    const { port, received } = await receiver((_request, response) => response.end())
    // 192.0.2.1 (documentation, never routed) in the URL; the checked address is the receiver's.
    const target = { url: new URL(`http://192.0.2.1:${port}/`), address: '127.0.0.1', family: 4 as const }
    expect(await sendWebhook(target, MESSAGE, { timeoutMs: 2000 })).toMatchObject({ status: 200, error: null })
    expect(received).toHaveLength(1)
  })

  it('ends with timeout, within the timeout, when the receiver never answers', async () => {
    const { port, received } = await receiver(() => {
      // reads the request, never answers
    })
    const started = Date.now()
    const attempt = await sendWebhook(local(port), MESSAGE, { timeoutMs: 300 })
    const elapsed = Date.now() - started
    expect(attempt).toMatchObject({ status: null, error: 'timeout', retryAfterSeconds: null })
    expect(elapsed).toBeGreaterThanOrEqual(290)
    expect(elapsed).toBeLessThan(1500)
    expect(attempt.durationMs).toBeGreaterThanOrEqual(290)
    expect(received).toHaveLength(1)
  })

  it('ends with timeout when the receiver accepts the connection and never reads', async () => {
    const sockets: net.Socket[] = []
    const server = net.createServer((socket) => sockets.push(socket))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    servers.push({
      close: () => {
        for (const socket of sockets) socket.destroy()
        server.close()
      },
    })
    const attempt = await sendWebhook(local((server.address() as AddressInfo).port), MESSAGE, { timeoutMs: 300 })
    expect(attempt).toMatchObject({ status: null, error: 'timeout' })
    expect(attempt.durationMs).toBeLessThan(1500)
  })

  it('keeps the status when the headers came in time but the body never ends', async () => {
    const { port } = await receiver((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' })
      response.write('partial')
    })
    const attempt = await sendWebhook(local(port), MESSAGE, { timeoutMs: 300 })
    expect(attempt).toMatchObject({ status: 200, error: null })
    expect(attempt.durationMs).toBeLessThan(1500)
  })

  it('reads at most 64 KiB of a large answer and closes the connection', async () => {
    let written = 0
    let closed: Promise<void> = Promise.resolve()
    const { port } = await receiver((_request, response) => {
      response.writeHead(200)
      closed = new Promise((resolve) => response.on('close', () => resolve()))
      const chunk = Buffer.alloc(16 * 1024, 'x')
      // Keeps writing (as fast as the client reads) until the client goes away.
      const pump = () => {
        while (!response.destroyed && written < 64 * 1024 * 1024) {
          written += chunk.length
          if (!response.write(chunk)) return void response.once('drain', pump)
        }
      }
      pump()
    })
    const attempt = await sendWebhook(local(port), MESSAGE, { timeoutMs: 5000 })
    expect(attempt).toMatchObject({ status: 200, error: null })
    await closed
    expect(MAX_ANSWER_BYTES).toBe(65536)
    // Socket buffers hold a few MiB at most; the 64 MiB answer is never read.
    expect(written).toBeLessThan(16 * 1024 * 1024)
  })

  it('reports a refused connection as an error, without throwing', async () => {
    const server = net.createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    await new Promise<void>((resolve) => server.close(() => resolve()))
    const attempt = await sendWebhook(local(port), MESSAGE, { timeoutMs: 2000 })
    expect(attempt).toMatchObject({ status: null, error: 'ECONNREFUSED', retryAfterSeconds: null })
  })

  it('reports a connection closed before any answer as an error', async () => {
    const server = net.createServer((socket) => socket.once('data', () => socket.destroy()))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    servers.push(server)
    const attempt = await sendWebhook(local((server.address() as AddressInfo).port), MESSAGE, { timeoutMs: 2000 })
    expect(attempt.status).toBeNull()
    expect(attempt.error).toMatch(/^(ECONNRESET|socket hang up)$/)
  })

  it('reports a TLS failure as an error (a plain-HTTP receiver behind an https URL)', async () => {
    const { port } = await receiver((_request, response) => response.end())
    const target = { url: new URL(`https://receiver.invalid:${port}/`), address: '127.0.0.1', family: 4 as const }
    const attempt = await sendWebhook(target, MESSAGE, { timeoutMs: 2000 })
    expect(attempt.status).toBeNull()
    expect(attempt.error).toEqual(expect.any(String))
    expect(attempt.error).not.toBe('')
  })

  it.skipIf(!fs.existsSync('/usr/bin/openssl'))(
    "over TLS, sends the URL's name as SNI to the pinned address and checks the certificate (a self-signed one is refused)",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-tls-'))
      try {
        execFileSync(
          '/usr/bin/openssl',
          [
            'req',
            '-x509',
            '-newkey',
            'ec',
            '-pkeyopt',
            'ec_paramgen_curve:prime256v1',
            '-nodes',
            '-days',
            '1',
            '-subj',
            '/CN=receiver.test',
            '-addext',
            'subjectAltName=DNS:receiver.test',
            '-keyout',
            path.join(dir, 'key.pem'),
            '-out',
            path.join(dir, 'cert.pem'),
          ],
          { stdio: 'ignore' },
        )
        const context = { key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) }
        const names: string[] = []
        const server = tls.createServer({
          ...context,
          SNICallback: (servername, callback) => {
            names.push(servername)
            callback(null, tls.createSecureContext(context))
          },
        })
        server.on('tlsClientError', () => {})
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
        servers.push(server)
        const target = {
          url: new URL(`https://receiver.test:${(server.address() as AddressInfo).port}/`),
          address: '127.0.0.1',
          family: 4 as const,
        }
        const attempt = await sendWebhook(target, MESSAGE, { timeoutMs: 2000 })
        expect(attempt).toMatchObject({ status: null, error: 'DEPTH_ZERO_SELF_SIGNED_CERT' })
        expect(names).toEqual(['receiver.test'])
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
  )

  it('reads Retry-After in seconds and as an HTTP date, on any status', async () => {
    const inSeconds = await receiver((_request, response) => {
      response.writeHead(503, { 'retry-after': '120' })
      response.end()
    })
    expect(await sendWebhook(local(inSeconds.port), MESSAGE)).toMatchObject({ status: 503, retryAfterSeconds: 120 })

    const asDate = await receiver((_request, response) => {
      response.writeHead(429, { 'retry-after': new Date(Date.now() + 600_000).toUTCString() })
      response.end()
    })
    const dated = await sendWebhook(local(asDate.port), MESSAGE)
    expect(dated.status).toBe(429)
    expect(dated.retryAfterSeconds).toBeGreaterThanOrEqual(595)
    expect(dated.retryAfterSeconds).toBeLessThanOrEqual(601)

    const onSuccess = await receiver((_request, response) => {
      response.writeHead(200, { 'retry-after': '7' })
      response.end()
    })
    expect(await sendWebhook(local(onSuccess.port), MESSAGE)).toMatchObject({ status: 200, retryAfterSeconds: 7 })
  })
})

describe('parseRetryAfter', () => {
  const now = Date.parse('2027-01-15T08:00:00.000Z')

  it('reads delta-seconds', () => {
    expect(parseRetryAfter('0', now)).toBe(0)
    expect(parseRetryAfter('120', now)).toBe(120)
    expect(parseRetryAfter(' 30 ', now)).toBe(30)
    expect(parseRetryAfter(['45', '90'], now)).toBe(45)
  })

  it('reads the HTTP date forms, a past date being 0', () => {
    expect(parseRetryAfter('Fri, 15 Jan 2027 08:05:00 GMT', now)).toBe(300)
    expect(parseRetryAfter('Friday, 15-Jan-27 08:01:00 GMT', now)).toBe(60)
    expect(parseRetryAfter('Fri Jan 15 08:00:10 2027', now)).toBeGreaterThanOrEqual(0)
    expect(parseRetryAfter('Fri, 15 Jan 2027 07:00:00 GMT', now)).toBe(0)
    expect(parseRetryAfter('Fri, 15 Jan 2027 08:00:00 GMT', now + 500)).toBe(0)
    expect(parseRetryAfter('Fri, 15 Jan 2027 08:00:01 GMT', now + 500)).toBe(1)
  })

  it('is null when absent or unreadable', () => {
    for (const value of [undefined, '', '  ', '-5', '1.5', 'soon', '2027-01-15', '12abc', '99999999999999999999']) {
      expect(parseRetryAfter(value, now), String(value)).toBeNull()
    }
  })
})

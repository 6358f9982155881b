import { execFile } from 'node:child_process'
import http, { STATUS_CODES } from 'node:http'
import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lingerAfterAnswer, REFUSED_BODY_LIMITS } from '../../src/http/refused-body.js'
import { makeTempDir, startTestApp, type TestApp } from '../helpers/test-app.js'

/**
 * Every refused upload reaches every client as its HTTP answer, whatever the body size, with real
 * clients over real sockets: Node's fetch (FormData and a streamed body), curl with and without
 * `Expect: 100-continue`, and Debian's python3-httpx and python3-requests. Before the refused
 * body was handled (src/http/refused-body.ts), fetch lost most answers to small bodies and httpx
 * every answer to bodies of a few MiB (docs/api.md, "Refused uploads").
 *
 * Each case repeats (up to 50 times for small bodies, where a race between the answer and the
 * close would show; fewer for 3 and 20 MiB, which take the other path) and checks that nothing
 * was stored and no daily upload slot was taken.
 */
const PYTHON = '/usr/bin/python3'
const PYTHON_CLIENT = fileURLToPath(new URL('./python_upload.py', import.meta.url))
const KiB = 1024
const MiB = 1024 * KiB

interface Seen {
  status?: number
  code?: string | null
  error?: string
}

function run(command: string, args: string[]): Promise<{ stdout: string; stderr: string; failed: boolean }> {
  return new Promise((resolve) => {
    execFile(command, args, { maxBuffer: 16 * MiB }, (error, stdout, stderr) => resolve({ stdout, stderr, failed: error !== null }))
  })
}

function errorCode(body: string): string | null {
  try {
    return (JSON.parse(body) as { error?: { code?: string } }).error?.code ?? null
  } catch {
    return null
  }
}

/** One upload attempt of `file` by one client: what that client saw. */
type Client = (url: string, apiKey: string, file: string, size: number, count: number) => Promise<Seen[]>

async function repeat(count: number, attempt: () => Promise<Seen>): Promise<Seen[]> {
  const seen: Seen[] = []
  for (let i = 0; i < count; i++)
    seen.push(await attempt().catch((error: Error) => ({ error: `${error.name}: ${String(error.cause ?? error.message)}` })))
  return seen
}

const fetchForm: Client = (url, apiKey, file, _size, count) =>
  repeat(count, async () => {
    const form = new FormData()
    form.append('file', new Blob([await fs.readFile(file)]), 'upload.bin')
    const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form })
    return { status: response.status, code: errorCode(await response.text()) }
  })

/** A streamed body: chunked, no Content-Length, so the server cannot refuse it by its declared size. */
const fetchStream: Client = (url, apiKey, file, _size, count) =>
  repeat(count, async () => {
    const boundary = 'fetch-stream-boundary'
    const content = await fs.readFile(file)
    const parts = [
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="upload.bin"\r\n\r\n`),
      ...Array.from({ length: Math.ceil(content.length / (256 * KiB)) }, (_, i) => content.subarray(i * 256 * KiB, (i + 1) * 256 * KiB)),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = parts.shift()
        if (next) controller.enqueue(next)
        else controller.close()
      },
    })
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    } as RequestInit)
    return { status: response.status, code: errorCode(await response.text()) }
  })

/** curl: `-H 'Expect:'` turns its automatic `Expect: 100-continue` (bodies over 1 MiB) off; the other forces it. */
const curl =
  (expectContinue: boolean): Client =>
  (url, apiKey, file, _size, count) =>
    repeat(count, async () => {
      const expectHeader = expectContinue ? 'Expect: 100-continue' : 'Expect:'
      const { stdout, stderr, failed } = await run('curl', [
        '-sS',
        '-o',
        '-',
        '-w',
        '\n%{http_code}',
        '-H',
        `Authorization: Bearer ${apiKey}`,
        '-H',
        expectHeader,
        '-F',
        `file=@${file}`,
        url,
      ])
      const lines = stdout.split('\n')
      const status = Number(lines.pop())
      if (failed || !status) return { error: stderr.trim() || 'curl failed' }
      return { status, code: errorCode(lines.join('\n')) }
    })

const python =
  (library: 'httpx' | 'requests'): Client =>
  async (url, apiKey, file, _size, count) => {
    const { stdout, stderr, failed } = await run(PYTHON, [PYTHON_CLIENT, library, url, apiKey, file, String(count)])
    if (failed) throw new Error(`${library} client failed: ${stderr}`)
    return JSON.parse(stdout) as Seen[]
  }

const CLIENTS: Record<string, Client> = {
  'fetch (FormData)': fetchForm,
  'fetch (stream)': fetchStream,
  'curl (Expect: 100-continue)': curl(true),
  'curl (no Expect)': curl(false),
  httpx: python('httpx'),
  requests: python('requests'),
}

/**
 * Repetitions per client and size. Small bodies race the answer against the close: 50 for Node's
 * fetch (FormData), which lost most answers before, and fewer for the others (a Python process or
 * a curl process per attempt costs time). Big bodies take the lingering path: a few each.
 */
function repetitions(client: string, size: number): number {
  if (size > 1 * MiB) return client.startsWith('fetch') ? 5 : 3
  if (client === 'fetch (FormData)') return 50
  if (client === 'httpx') return 30
  return client.startsWith('curl') ? 10 : 20
}

const SIZES = [10, 60 * KiB, 3 * MiB, 20 * MiB]

describe('refused uploads reach real clients as their HTTP answer', () => {
  let t: TestApp
  let dir: string
  const files = new Map<number, string>()
  const accounts: Record<string, { accountId: number; apiKey: string }> = {}

  beforeAll(async () => {
    // The failed-authentication guard would turn the 401s into 429s; here each code is tested on its own.
    t = await startTestApp({ FILESHARE_AUTH_FAILURES_PER_MINUTE: '1000000' })
    dir = await makeTempDir('fileshare-clients-')
    for (const size of SIZES) {
      const file = path.join(dir, `${size}.bin`)
      await fs.writeFile(file, Buffer.alloc(size, 0x61))
      files.set(size, file)
    }
    accounts.free = await t.createAccount('free')
    // Hundreds of attempts per account: room for them in the request rate limits.
    const roomy = { requests_per_minute: 1_000_000, requests_per_day: 1_000_000 }
    accounts.tooLarge = await t.createAccount('pro')
    await t.app.services.accounts.setLimits(accounts.tooLarge.accountId, { ...roomy, max_file_size: 1024 })
    accounts.noUploadsLeft = await t.createAccount('pro')
    await t.app.services.accounts.setLimits(accounts.noUploadsLeft.accountId, { ...roomy, daily_uploads: 0 })
    accounts.rateLimited = await t.createAccount('pro')
    await t.app.services.accounts.setLimits(accounts.rateLimited.accountId, { requests_per_minute: 1 })
  })

  /** Spends the one request of the rolling minute (again, each case: the file runs longer than a minute). */
  async function spendRateLimit() {
    const response = await fetch(`${t.api}/stats`, { headers: { authorization: `Bearer ${accounts.rateLimited!.apiKey}` } })
    expect([200, 429]).toContain(response.status)
  }

  afterAll(async () => {
    await t?.close()
    if (dir) await fs.rm(dir, { recursive: true, force: true })
  })

  const scenarios: Array<{ name: string; key: () => string; status: number; code: string; sizes: number[]; before?: () => Promise<void> }> =
    [
      { name: 'an unknown key', key: () => `fsk_${'x'.repeat(43)}`, status: 401, code: 'unauthorized', sizes: SIZES },
      { name: 'a plan without API access', key: () => accounts.free!.apiKey, status: 403, code: 'plan_not_supported', sizes: SIZES },
      // 10 bytes fit in the 1 KiB limit; 60 KiB is refused while it streams, larger ones by their declared size.
      {
        name: 'a file over max_file_size',
        key: () => accounts.tooLarge!.apiKey,
        status: 403,
        code: 'file_too_large',
        sizes: SIZES.slice(1),
      },
      {
        name: 'no daily upload left',
        key: () => accounts.noUploadsLeft!.apiKey,
        status: 403,
        code: 'daily_upload_limit_exceeded',
        sizes: SIZES,
      },
      // A refused (429) request does not count, so once spent the minute stays spent for the whole case.
      {
        name: 'a spent request rate limit',
        key: () => accounts.rateLimited!.apiKey,
        status: 429,
        code: 'rate_limited',
        sizes: SIZES,
        before: spendRateLimit,
      },
    ]

  /** What each client saw, per case: printed once at the end as the measured counts. */
  const tallies: Array<[string, Record<string, string>]> = []

  describe('each case', () => {
    for (const scenario of scenarios) {
      for (const size of scenario.sizes) {
        it(`${scenario.status} ${scenario.code} for ${scenario.name}, ${size} bytes: every client sees it`, async () => {
          await scenario.before?.()
          const tally: Record<string, string> = {}
          const failures: string[] = []
          // The clients run side by side (each one's attempts in turn): the server sees concurrent refusals too.
          await Promise.all(
            Object.entries(CLIENTS).map(async ([name, client]) => {
              const seen = await client(`${t.api}/files/upload`, scenario.key(), files.get(size)!, size, repetitions(name, size))
              const missed = seen.filter((attempt) => attempt.status !== scenario.status || attempt.code !== scenario.code)
              tally[name] = `${seen.length - missed.length}/${seen.length}`
              failures.push(...missed.map((attempt) => `${name}: ${JSON.stringify(attempt)}`))
            }),
          )
          tallies.push([`${scenario.code} ${size} B`, tally])
          expect(failures, JSON.stringify(tally)).toEqual([])
        }, 120_000)
      }
    }
  })

  it('stored nothing and took no daily upload slot for any refused upload', async () => {
    expect(await t.storedBlobs()).toEqual([])
    expect(await t.unfinishedWrites()).toEqual([])
    for (const { accountId } of Object.values(accounts)) {
      expect((await t.app.services.accounts.stats(accountId)).uploadsToday).toBe(0)
    }
    console.info(
      `answers seen / refusals sent, per case and client:\n${tallies
        .sort(([a], [b]) => a.localeCompare(b))
        .map(
          ([name, tally]) =>
            `  ${name}: ${Object.entries(tally)
              .map(([client, counts]) => `${client} ${counts}`)
              .join(', ')}`,
        )
        .join('\n')}`,
    )
  })
})

/** Writes raw request bytes and collects every answer line until the server closes or `ms` pass. */
function rawExchange(port: number, head: string, options: { body?: Buffer; sendBodyAfterMs?: number; ms?: number } = {}) {
  return new Promise<{ text: string; closed: boolean }>((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
    let text = ''
    let closed = false
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')))
    socket.on('error', () => {})
    // The server has said all it will (its FIN): end our side too, so that the socket closes now.
    socket.on('end', () => socket.end())
    socket.on('close', () => {
      closed = true
      resolve({ text, closed })
    })
    socket.write(head)
    if (options.body) setTimeout(() => socket.write(options.body!), options.sendBodyAfterMs ?? 0)
    setTimeout(() => {
      socket.destroy()
      resolve({ text, closed })
    }, options.ms ?? 1_500)
  })
}

describe('Expect: 100-continue', () => {
  let t: TestApp
  let port: number
  let pro: { accountId: number; apiKey: string }
  beforeAll(async () => {
    t = await startTestApp()
    port = Number(new URL(t.url).port)
    pro = await t.createAccount('pro')
    await t.app.services.accounts.setLimits(pro.accountId, { max_file_size: 100 * KiB })
  })
  afterAll(async () => {
    await t?.close()
  })

  const boundary = 'expect-boundary'
  const multipart = (content: Buffer) =>
    Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="e.bin"\r\n\r\n`),
      content,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ])
  const head = (apiKey: string, length: number) =>
    `POST /api/v1/files/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\n` +
    `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`

  it('answers a refused request with its final status and never 100 Continue', async () => {
    const free = await t.createAccount('free')
    const limited = await t.createAccount('pro')
    await t.app.services.accounts.setLimits(limited.accountId, { requests_per_minute: 1 })
    expect((await fetch(`${t.api}/stats`, { headers: { authorization: `Bearer ${limited.apiKey}` } })).status).toBe(200)
    for (const [apiKey, status, code] of [
      [`fsk_${'y'.repeat(43)}`, 401, 'unauthorized'],
      [free.apiKey, 403, 'plan_not_supported'],
      // Declared larger than max_file_size plus the framing allowance: refused before any byte.
      [pro.apiKey, 403, 'file_too_large'],
      // The one request of its minute already spent (below).
      [limited.apiKey, 429, 'rate_limited'],
    ] as const) {
      const length = apiKey === pro.apiKey ? 10 * MiB : 1000
      const { text } = await rawExchange(port, head(apiKey, length))
      expect(text, code).not.toContain('100 Continue')
      expect(text.split('\r\n')[0], code).toBe(`HTTP/1.1 ${status} ${STATUS_CODES[status]}`)
      expect(text, code).toContain(`"code":"${code}"`)
    }
  })

  it('sends 100 Continue to an upload that will be read, then stores it', async () => {
    const body = multipart(Buffer.from('hello after continue'))
    const socket = net.connect({ port, host: '127.0.0.1' })
    let text = ''
    const answered = new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1')
        // The body goes only after the interim answer, as a client that honours Expect would send it.
        if (text === 'HTTP/1.1 100 Continue\r\n\r\n') socket.write(body)
        if (text.includes('"success":true')) resolve()
      })
    })
    socket.write(head(pro.apiKey, body.length))
    await answered
    socket.destroy()
    expect(text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 Created\r\n/)
    expect(await t.storedBlobs()).toHaveLength(1)
  })

  it('a client that sends its body anyway after a refusal still reads the refusal', async () => {
    const { text } = await rawExchange(port, head(`fsk_${'z'.repeat(43)}`, 2 * MiB), {
      body: multipart(Buffer.alloc(2 * MiB - 200)),
      sendBodyAfterMs: 50,
    })
    expect(text.split('\r\n')[0]).toBe('HTTP/1.1 401 Unauthorized')
    expect(text).not.toContain('100 Continue')
  })
})

describe('the refused-body bounds', () => {
  it('are the documented ones', () => {
    // docs/api.md ("Refused uploads reach the client") states these figures; change both together.
    expect(REFUSED_BODY_LIMITS).toEqual({
      drainBytes: 1 * MiB,
      drainMs: 2_000,
      lingerBytes: 64 * MiB,
      lingerMs: 30_000,
      lingerIdleMs: 5_000,
    })
  })

  /**
   * A bare HTTP server that refuses every request as the service does (refused-body.ts), with small
   * bounds, and a client that sends a body declared at 1 GiB in its own way: when did the server
   * close, and did the client read the answer first?
   */
  async function lingerAgainst(send: (socket: net.Socket) => void) {
    const limits = { ...REFUSED_BODY_LIMITS, lingerMs: 1_500, lingerIdleMs: 400, lingerBytes: 4 * MiB }
    const server = http.createServer((request, response) => {
      response.setHeader('connection', 'close')
      lingerAfterAnswer(request, limits)
      response.writeHead(401).end('{"refused":true}')
    })
    // Measured on the server's side: a half-open client may not notice the close at all.
    const started = Date.now()
    const closed = new Promise<number>((resolve) =>
      server.once('connection', (socket) => socket.on('close', () => resolve(Date.now() - started))),
    )
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const socket = net.connect({ port: (server.address() as net.AddressInfo).port, host: '127.0.0.1', allowHalfOpen: true })
    try {
      socket.on('error', () => {})
      let answer = ''
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')))
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${1024 * MiB}\r\n\r\n`)
      send(socket)
      return { elapsed: await closed, answered: answer.includes('{"refused":true}'), limits }
    } finally {
      socket.destroy()
      server.close()
    }
  }

  it('close a connection whose client never stops sending, at the total linger time', async () => {
    let trickle: NodeJS.Timeout | undefined
    const { elapsed, answered, limits } = await lingerAgainst((socket) => {
      // A slow trickle: never idle for long, never near the byte bound, so the total time must end it.
      trickle = setInterval(() => socket.writable && socket.write(Buffer.alloc(1024)), 50)
    })
    clearInterval(trickle)
    expect(answered).toBe(true)
    expect(elapsed).toBeGreaterThanOrEqual(limits.lingerMs - 100)
    expect(elapsed).toBeLessThan(limits.lingerMs + 1_000)
  })

  it('close a connection whose client stops sending, after the idle time', async () => {
    const { elapsed, answered, limits } = await lingerAgainst((socket) => socket.write(Buffer.alloc(64 * KiB)))
    expect(answered).toBe(true)
    expect(elapsed).toBeGreaterThanOrEqual(limits.lingerIdleMs - 100)
    expect(elapsed).toBeLessThan(limits.lingerMs)
  })

  it('close a connection whose client sends more than the byte bound, at once', async () => {
    let sending = true
    const { elapsed, answered, limits } = await lingerAgainst((socket) => {
      const flood = () => {
        while (sending && socket.writable && socket.write(Buffer.alloc(256 * KiB)));
        if (sending && socket.writable) socket.once('drain', flood)
      }
      flood()
    })
    sending = false
    expect(answered).toBe(true)
    expect(elapsed).toBeLessThan(limits.lingerIdleMs)
  })

  it('in the service: a refused client that stops sending is closed after the idle time', async () => {
    const t = await startTestApp()
    try {
      const socket = net.connect({ port: Number(new URL(t.url).port), host: '127.0.0.1', allowHalfOpen: true })
      socket.on('error', () => {})
      let text = ''
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')))
      socket.write(
        `POST /api/v1/files/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer fsk_${'w'.repeat(43)}\r\n` +
          `Content-Type: multipart/form-data; boundary=b\r\nContent-Length: ${100 * 1024 * MiB}\r\n\r\n`,
      )
      socket.write(Buffer.alloc(KiB))
      // Then the client goes quiet and never closes its side: only the server's idle bound ends it.
      while (!text.includes('"code":"unauthorized"')) await sleep(20)
      const started = Date.now()
      const connections = () => new Promise<number>((resolve) => t.app.server.getConnections((_error, count) => resolve(count)))
      while ((await connections()) > 0 && Date.now() - started < REFUSED_BODY_LIMITS.lingerIdleMs + 3_000) await sleep(100)
      expect(await connections()).toBe(0)
      expect(text.split('\r\n')[0]).toBe('HTTP/1.1 401 Unauthorized')
      socket.destroy()
    } finally {
      await t.close()
    }
  }, 20_000)
})

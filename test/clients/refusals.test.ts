import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runProgram } from '../helpers/program-runner.js'
import { curlAvailable, PYTHON, pythonClientsAvailable } from '../helpers/real-clients.js'
import { makeTempDir, startTestApp, type TestApp } from '../helpers/test-app.js'

/**
 * Every refused upload reaches every client as its HTTP answer, whatever the body size, with real
 * clients over real sockets: Node's fetch (FormData and a streamed body), curl with and without
 * `Expect: 100-continue`, and Debian's python3-httpx and python3-requests. Before the refused
 * body was handled (src/http/refused-body.ts), fetch lost most answers to small bodies and httpx
 * every answer to bodies of a few MiB (docs/api.md, "Refused uploads reach the client"). Raw-socket
 * cases (`Expect: 100-continue`, the bounds of the handling) are in refusals-raw.test.ts.
 *
 * Each case repeats (up to 50 times for small bodies, where a race between the answer and the
 * close would show; fewer for 3 and 20 MiB, which take the other path) and checks that nothing
 * was stored and no daily upload slot was taken.
 */
const PYTHON_CLIENT = fileURLToPath(new URL('./python_upload.py', import.meta.url))
const KiB = 1024
const MiB = 1024 * KiB

interface Seen {
  status?: number
  code?: string | null
  error?: string
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
      const { stdout, stderr, failed } = await runProgram('curl', [
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

/** One Python process per library for the whole file, taking one job a line (python_upload.py). */
class PythonClient {
  private readonly child: ChildProcessWithoutNullStreams
  private readonly waiting: Array<{ resolve: (seen: Seen[]) => void; reject: (error: Error) => void }> = []
  private stderr = ''

  constructor(readonly library: 'httpx' | 'requests') {
    this.child = spawn(PYTHON, [PYTHON_CLIENT, library])
    this.child.stderr.setEncoding('utf8').on('data', (text: string) => (this.stderr += text))
    readline.createInterface({ input: this.child.stdout }).on('line', (line) => this.waiting.shift()?.resolve(JSON.parse(line) as Seen[]))
    this.child.on('exit', (code) => {
      for (const { reject } of this.waiting.splice(0)) reject(new Error(`${library} client exited (${code}): ${this.stderr}`))
    })
  }

  /** Jobs of one client run one after another, as each case's attempts did in a process of their own. */
  upload(url: string, apiKey: string, file: string, count: number): Promise<Seen[]> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject })
      this.child.stdin.write(`${JSON.stringify({ url, api_key: apiKey, path: file, count })}\n`)
    })
  }

  close(): void {
    this.child.stdin.end()
  }
}

const pythonClients = new Map<'httpx' | 'requests', PythonClient>()
afterAll(() => pythonClients.forEach((client) => client.close()))

const python =
  (library: 'httpx' | 'requests'): Client =>
  (url, apiKey, file, _size, count) => {
    if (!pythonClients.has(library)) pythonClients.set(library, new PythonClient(library))
    return pythonClients.get(library)!.upload(url, apiKey, file, count)
  }

const CLIENTS: Record<string, Client> = {
  'fetch (FormData)': fetchForm,
  'fetch (stream)': fetchStream,
  ...(curlAvailable ? { 'curl (Expect: 100-continue)': curl(true), 'curl (no Expect)': curl(false) } : {}),
  ...(pythonClientsAvailable ? { httpx: python('httpx'), requests: python('requests') } : {}),
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

import fs from 'node:fs/promises'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import SQLite from 'better-sqlite3'
import { afterAll, afterEach, beforeAll, describe, expect, it, type TestContext } from 'vitest'
import {
  BIN,
  eventually,
  freePort,
  ROOT,
  runCli,
  spawnServer,
  startServerProcess as startServer,
  stopServerProcess,
  type CliResult,
  type ServerProcess,
} from '../helpers/server-process.js'
import { makeTempDir } from '../helpers/test-app.js'

/** The bound from the operator interface: CLI changes reach a running server within 5 s. */
const PROPAGATION_MS = 5_000

function fileshare(dataDir: string, args: string[]): Promise<CliResult> {
  return runCli(args, { FILESHARE_DATA_DIR: dataDir })
}

async function cliJson<T>(dataDir: string, ...args: string[]): Promise<T> {
  const result = await fileshare(dataDir, [...args, '--json'])
  expect(result, `fileshare ${args.join(' ')}`).toMatchObject({ code: 0, stderr: '' })
  return JSON.parse(result.stdout) as T
}

async function cliOk(dataDir: string, ...args: string[]): Promise<void> {
  expect(await fileshare(dataDir, args), `fileshare ${args.join(' ')}`).toMatchObject({ code: 0, stderr: '' })
}

const tempDirs: string[] = []

async function newDataDir(): Promise<string> {
  const dir = await makeTempDir('fileshare-process-')
  tempDirs.push(dir)
  return dir
}

/**
 * Starts a server for one test on a free port and a fresh data folder (unless given one), and waits
 * until /healthz answers. It is stopped when that test ends, so a test that failed half-way leaves
 * nothing behind; the tests beside it, which run at the same time, keep theirs.
 */
async function startServerProcess(
  onTestFinished: TestContext['onTestFinished'],
  options: { env?: Record<string, string>; command?: string[]; dataDir?: string } = {},
): Promise<ServerProcess> {
  const server = await startServer({ ...options, dataDir: options.dataDir ?? (await newDataDir()) })
  onTestFinished(async () => {
    await stopServerProcess(server)
  })
  return server
}

afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => fs.rm(dir, { recursive: true, force: true })))
})

function bearer(apiKey: string) {
  return { authorization: `Bearer ${apiKey}` }
}

function upload(server: ServerProcess, apiKey: string, content: string, filename = 'note.txt') {
  const form = new FormData()
  form.append('file', new Blob([content]), filename)
  return fetch(`${server.url}/api/v1/files/upload`, { method: 'POST', headers: bearer(apiKey), body: form })
}

let emailCounter = 0
const nextEmail = () => `process${++emailCounter}@example.test`

interface CreatedAccount {
  account_id: number
  key_id: number
  api_key: string
}

// The three blocks below run side by side, and so do most tests in each: much of their time is
// spent waiting (for a cache to expire, a process to start), not computing.

describe.concurrent('a running server and the CLI on the same data, default cache TTL', () => {
  let server: ServerProcess
  /** Every key handed out in this block: none of them may ever reach a log line. */
  const issuedKeys: string[] = []

  const createAccount = async (plan = 'pro'): Promise<CreatedAccount> => {
    const created = await cliJson<CreatedAccount>(server.dataDir, 'account', 'create', '--email', nextEmail(), '--plan', plan)
    issuedKeys.push(created.api_key)
    return created
  }
  const stats = (apiKey: string) => fetch(`${server.url}/api/v1/stats`, { headers: bearer(apiKey) })

  beforeAll(async () => {
    // No FILESHARE_CACHE_TTL_MS: the promise of 5 s must hold with the default.
    server = await startServer({ dataDir: await newDataDir() })
  })

  afterAll(async () => {
    await stopServerProcess(server)
  })

  afterEach(() => {
    // Should the server die, say so (with its last words) rather than let later tests fail obscurely.
    expect(server.child.exitCode, `server exited: ${server.stderr()}`).toBeNull()
  })

  // Each test waits up to the cache TTL for its change, on its own account: they run side by side.
  describe('changes made with the CLI reach the server within 5 s', () => {
    it('a key from `account create` works against the running server', async () => {
      const { api_key } = await createAccount()
      const response = await eventually(
        'the new key accepted',
        async () => {
          const r = await stats(api_key)
          return r.status === 200 ? r : undefined
        },
        PROPAGATION_MS,
      )
      expect(await response.json()).toMatchObject({ success: true, plan: 'pro' })
    })

    it('`key revoke` makes the key answer 401 within 5 s, even right after it was used', async () => {
      const { account_id, api_key } = await createAccount()
      const other = await cliJson<{ key_id: number; api_key: string }>(server.dataDir, 'key', 'create', String(account_id))
      issuedKeys.push(other.api_key)
      // Used just now, so the server holds it in its cache.
      expect((await stats(api_key)).status).toBe(200)
      expect((await stats(other.api_key)).status).toBe(200)

      await cliOk(server.dataDir, 'key', 'revoke', String(other.key_id))
      const refused = await eventually(
        '401 for the revoked key',
        async () => {
          const r = await stats(other.api_key)
          return r.status === 401 ? r : undefined
        },
        PROPAGATION_MS,
      )
      expect(await refused.json()).toMatchObject({ success: false, error: { code: 'unauthorized' } })
      // The account's other key is not affected.
      expect((await stats(api_key)).status).toBe(200)
    })

    it('`account set-plan ID free` makes the account answer 403 within 5 s', async () => {
      const { account_id, api_key } = await createAccount()
      expect((await stats(api_key)).status).toBe(200)

      await cliOk(server.dataDir, 'account', 'set-plan', String(account_id), 'free')
      const refused = await eventually(
        '403 after the downgrade',
        async () => {
          const r = await stats(api_key)
          return r.status === 403 ? r : undefined
        },
        PROPAGATION_MS,
      )
      expect(await refused.json()).toMatchObject({ success: false, error: { code: 'plan_not_supported' } })

      await cliOk(server.dataDir, 'account', 'set-plan', String(account_id), 'business')
      const upgraded = await eventually(
        '200 after the upgrade',
        async () => {
          const r = await stats(api_key)
          return r.status === 200 ? r : undefined
        },
        PROPAGATION_MS,
      )
      expect(await upgraded.json()).toMatchObject({ plan: 'business', limits: { requests_per_minute: 100 } })
    })

    it('`account set-limits --requests-per-minute 2` takes effect within 5 s', async () => {
      const { account_id, api_key } = await createAccount()
      const before = await stats(api_key)
      expect(before.headers.get('ratelimit-limit')).toBe('50')

      await cliOk(server.dataDir, 'account', 'set-limits', String(account_id), '--requests-per-minute', '2')
      // The requests made so far fill the new window of 2, so the new limit shows as a 429.
      const limited = await eventually(
        '429 under the new limit',
        async () => {
          const r = await stats(api_key)
          return r.status === 429 && r.headers.get('ratelimit-limit') === '2' ? r : undefined
        },
        PROPAGATION_MS,
      )
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(await limited.json()).toMatchObject({ success: false, error: { code: 'rate_limited' } })
    })

    it('`account set-limits --max-file-size` and the other account limits take effect within 5 s', async () => {
      const { account_id, api_key } = await createAccount()
      expect((await stats(api_key)).status).toBe(200)
      await cliOk(
        server.dataDir,
        'account',
        'set-limits',
        String(account_id),
        '--max-file-size',
        '4',
        '--daily-uploads',
        '70',
        '--requests-per-day',
        '900',
      )
      const tooLarge = await eventually(
        '403 for a file over the new maximum',
        async () => {
          const r = await upload(server, api_key, 'hello')
          return r.status === 403 ? r : undefined
        },
        PROPAGATION_MS,
      )
      expect(await tooLarge.json()).toMatchObject({ error: { code: 'file_too_large' } })
      expect(await (await stats(api_key)).json()).toMatchObject({
        limits: { max_file_size: 4, daily_uploads: 70, requests_per_day: 900, requests_per_minute: 50 },
      })
    })
  })

  it('the CLI is safe to run while the server handles uploads', async () => {
    const { api_key } = await createAccount()
    const [commands, uploads] = await Promise.all([
      Promise.all([1, 2, 3].map(() => fileshare(server.dataDir, ['account', 'create', '--email', nextEmail(), '--plan', 'pro', '--json']))),
      Promise.all(Array.from({ length: 8 }, (_, i) => upload(server, api_key, `content ${i}`))),
    ])
    for (const command of commands) {
      expect(command).toMatchObject({ code: 0, stderr: '' })
      const { api_key: created } = JSON.parse(command.stdout) as CreatedAccount
      issuedKeys.push(created)
      expect((await stats(created)).status).toBe(200)
    }
    expect(uploads.map((response) => response.status)).toEqual(Array(8).fill(201))
    const body = (await (await stats(api_key)).json()) as { stats: { total_files: number } }
    expect(body.stats.total_files).toBe(8)
  })

  it('public_link defaults to http://localhost:<PORT>', async () => {
    const { api_key } = await createAccount()
    const response = await upload(server, api_key, 'linked content')
    expect(response.status).toBe(201)
    const { public_link } = (await response.json()) as { public_link: string }
    expect(public_link).toMatch(new RegExp(`^http://localhost:${server.port}/download/[A-Za-z0-9_-]{22,}$`))
    const download = await fetch(`${server.url}${new URL(public_link).pathname}`)
    expect(await download.text()).toBe('linked content')
  })

  // Last, once every other test of this block has handed out its keys: none may reach the log.
  it.sequential('logs JSON lines with a request id, and never a key or the Authorization header', async () => {
    const { api_key } = await createAccount()
    const unknownKey = `fsk_${'A'.repeat(43)}`
    const good = await stats(api_key)
    const bad = await fetch(`${server.url}/api/v1/stats`, { headers: { authorization: `bearer ${unknownKey}` } })
    expect([good.status, bad.status]).toEqual([200, 401])
    const requestIds = [good.headers.get('x-request-id'), bad.headers.get('x-request-id')]

    const lines = await eventually(
      'log lines of both requests',
      async () => {
        // Only whole lines: the last one may still be arriving.
        const parsed = server
          .stdout()
          .split('\n')
          .slice(0, -1)
          .map((line) => JSON.parse(line) as Record<string, unknown>)
        const logged = new Set(parsed.map((line) => line.reqId))
        return requestIds.every((id) => logged.has(id)) ? parsed : undefined
      },
      5_000,
      50,
    )

    // One access-log line per request (src/http/plugins/observability.ts), and no other line about it.
    const requestLines = lines.filter((line) => requestIds.includes(line.reqId as string))
    expect(requestLines).toEqual([
      expect.objectContaining({ msg: 'request completed', method: 'GET', route: '/api/v1/stats', status: 200 }),
      expect.objectContaining({ msg: 'request completed', method: 'GET', route: '/api/v1/stats', status: 401, error: 'unauthorized' }),
    ])
    expect(requestLines[0]).toHaveProperty('account_id')

    const everything = server.stdout() + server.stderr()
    for (const key of [...issuedKeys, unknownKey]) expect(everything).not.toContain(key)
    expect(everything).not.toMatch(/bearer /i)
  })
})

describe.concurrent('configuration', () => {
  it('`fileshare serve` serves too, with public_link on FILESHARE_PUBLIC_URL', async ({ onTestFinished }) => {
    const dataDir = await newDataDir()
    await cliOk(dataDir, 'migrate')
    const { api_key } = await cliJson<CreatedAccount>(dataDir, 'account', 'create', '--email', nextEmail(), '--plan', 'pro')
    const server = await startServerProcess(onTestFinished, {
      dataDir,
      command: [BIN, 'serve'],
      env: { FILESHARE_PUBLIC_URL: 'https://files.example.com/' },
    })
    const response = await upload(server, api_key, 'served by the CLI')
    expect(response.status).toBe(201)
    const { public_link } = (await response.json()) as { public_link: string }
    expect(public_link).toMatch(/^https:\/\/files\.example\.com\/download\/[A-Za-z0-9_-]{22,}$/)
    const download = await fetch(`${server.url}${new URL(public_link).pathname}`)
    expect(await download.text()).toBe('served by the CLI')

    server.child.kill('SIGTERM')
    expect(await server.exited).toEqual({ code: 0, signal: null })
  })

  it('starts from a symlinked release folder whose path has a space', async ({ onTestFinished }) => {
    const releases = await newDataDir()
    const link = path.join(releases, 'current release')
    await fs.symlink(ROOT, link, 'dir')
    const server = await startServerProcess(onTestFinished, { command: [path.join(link, 'dist/server.js')] })
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    server.child.kill('SIGTERM')
    expect(await server.exited).toEqual({ code: 0, signal: null })
  })

  const badSettings: Array<[string, string]> = [
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['FILESHARE_LOG_LEVEL', 'loud'],
    ['FILESHARE_PLANS', '{bad'],
    ['FILESHARE_PLANS', '{"pro":{"max_file_size":-1}}'],
    ['FILESHARE_PUBLIC_URL', 'notaurl'],
    ['FILESHARE_TRUST_PROXY', 'maybe'],
  ]

  it.for(badSettings)('%s=%s stops the server with a message naming the variable', async ([variable, value], { expect }) => {
    const dataDir = await newDataDir()
    const port = await freePort()
    const server = spawnServer({ PORT: String(port), HOST: '127.0.0.1', FILESHARE_DATA_DIR: dataDir, [variable]: value })
    const { code } = await server.exited
    expect(code).not.toBe(0)
    expect(code).not.toBeNull()
    expect(server.stderr()).toContain(variable)
    expect(server.stdout()).not.toContain('fileshare is serving')
  })

  it.for([
    ['FILESHARE_REDIS_URL', 'redis://:hunter2-secret@127.0.0.1:PORT'],
    ['FILESHARE_DATABASE_URL', 'postgres://fileshare:hunter2-secret@127.0.0.1:PORT/files'],
  ])('%s that cannot be reached stops the server in one line naming it, never its password', async ([variable, url], { expect }) => {
    const dataDir = await newDataDir()
    const closedPort = await freePort() // nothing listens there
    const server = spawnServer({
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      FILESHARE_DATA_DIR: dataDir,
      FILESHARE_LOG_LEVEL: 'silent',
      [variable!]: url!.replace('PORT', String(closedPort)),
    })
    expect(await server.exited).toEqual({ code: 1, signal: null })
    expect(server.stderr().trimEnd().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^fileshare: .*\\(${variable}\\) cannot be reached: connect ECONNREFUSED`)),
    ])
    expect(server.stderr() + server.stdout()).not.toContain('hunter2')
  })

  it('`fileshare serve` with a bad value stops too, naming the variable in one line', async () => {
    const dataDir = await newDataDir()
    const server = spawnServer({ FILESHARE_DATA_DIR: dataDir, PORT: '70000' }, [BIN, 'serve'])
    const { code } = await server.exited
    expect(code).not.toBe(0)
    expect(server.stderr().trimEnd().split('\n')).toEqual([expect.stringContaining('PORT')])
  })
})

describe.concurrent('SIGTERM', () => {
  /** Sends a multipart upload whose file bytes are written by the caller, chunk by chunk. */
  function slowUpload(port: number, apiKey: string, fileSize: number) {
    const boundary = 'fileshare-slow-upload'
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    )
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
    const request = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/v1/files/upload',
      agent: false,
      headers: {
        ...bearer(apiKey),
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + fileSize + tail.length),
      },
    })
    const response = new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
      request.once('error', reject)
      request.once('response', (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        res.once('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }))
        res.once('error', reject)
      })
    })
    request.write(head)
    return {
      response,
      write: (bytes: Buffer) =>
        new Promise<void>((resolve, reject) => request.write(bytes, (error) => (error ? reject(error) : resolve()))),
      end: () => request.end(tail),
    }
  }

  function connectionRefused(port: number): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(false)
      })
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
    })
  }

  it('lets an in-flight upload finish with 201, refuses new connections, and exits 0', async ({ onTestFinished }) => {
    const dataDir = await newDataDir()
    await cliOk(dataDir, 'migrate')
    const { api_key } = await cliJson<CreatedAccount>(dataDir, 'account', 'create', '--email', nextEmail(), '--plan', 'pro')
    const server = await startServerProcess(onTestFinished, { dataDir })

    const chunk = Buffer.alloc(4096, 'x')
    const chunks = 10
    const uploading = slowUpload(server.port, api_key, chunk.length * chunks)
    await uploading.write(chunk)
    // The server has the request in hand once the file part streams into a temporary file.
    const tmpDir = path.join(dataDir, 'blobs', 'tmp')
    await eventually(
      'the upload request reached the server',
      async () => ((await fs.readdir(tmpDir).catch(() => [])).length > 0 ? true : undefined),
      5_000,
      20,
    )

    server.child.kill('SIGTERM')
    await eventually('new connections refused', async () => ((await connectionRefused(server.port)) ? true : undefined), 5_000, 50)
    expect(server.child.exitCode).toBeNull()

    // The rest of the body trickles in over about a second, after shutdown has begun.
    for (let i = 1; i < chunks; i++) {
      await sleep(100)
      await uploading.write(chunk)
    }
    uploading.end()
    const { status, body } = await uploading.response
    expect(status).toBe(201)
    expect(body).toMatchObject({ success: true, size: chunk.length * chunks, filename: 'slow.bin' })

    expect(await server.exited).toEqual({ code: 0, signal: null })
    const database = new SQLite(path.join(dataDir, 'fileshare.sqlite'), { readonly: true, fileMustExist: true })
    try {
      expect(database.prepare('select size from files').all()).toEqual([{ size: chunk.length * chunks }])
    } finally {
      database.close()
    }
  })
})

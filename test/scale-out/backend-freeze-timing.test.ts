import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { scaleOutReachable, startProxiedScaleOut, type ProxiedScaleOut } from '../helpers/proxied-scale-out.js'
import { bearer, fileForm } from '../helpers/test-app.js'

const reachable = await scaleOutReachable('test/scale-out/backend-freeze-timing.test.ts')

const BACKEND_TIMEOUT_MS = 2_000
const POOL_SIZE = 3
/**
 * What a request may take beyond the one timeout: the work it does anyway, on a loaded 2-core
 * machine (well under the second timeout that the defects cost).
 */
const MARGIN_MS = 1_500
const TUS = { 'tus-resumable': '1.0.0' }

/**
 * The chaos soak froze PostgreSQL and S3 under a load busier than the connection pool: requests
 * answered their 503 after two or three backend timeouts (a wait for a pooled connection, then the
 * query's own timeout; a failed upload's cleanup). Each must answer within one timeout (plus the
 * margin of the work it does anyway), however many requests wait for the pool.
 */
describe.skipIf(!reachable)('scale-out: a frozen backend costs a request one timeout, not two', () => {
  let stack: ProxiedScaleOut<'database' | 'storage'>
  let proxies: ProxiedScaleOut<'database' | 'storage'>['proxies']
  let app: App
  let api: string
  let apiKey: string
  let fileId: number
  const logLines: string[] = []

  beforeAll(async () => {
    stack = await startProxiedScaleOut({
      name: 'freeze',
      proxied: ['database', 'storage'],
      env: {
        // The access log is read by the last test (a client that leaves during the freeze).
        FILESHARE_LOG_LEVEL: 'info',
        // Keys stay cached (the default): a request passes its authentication and meets the frozen
        // database at its own queries, as in the chaos soak.
        FILESHARE_CACHE_TTL_MS: '4000',
        FILESHARE_BACKEND_TIMEOUT_MS: String(BACKEND_TIMEOUT_MS),
        FILESHARE_DATABASE_POOL_SIZE: String(POOL_SIZE),
      },
      logStream: { write: (line: string) => void logLines.push(line) },
    })
    ;({ app, api, proxies } = stack)
    ;({ apiKey } = await app.services.accounts.create('freeze@example.test', 'pro'))
    const uploaded = await upload()
    expect(uploaded.status).toBe(201)
    fileId = ((await uploaded.json()) as { file_id: number }).file_id
  })

  afterAll(async () => {
    await stack?.close()
  })

  const upload = () =>
    fetch(`${api}/files/upload`, { method: 'POST', headers: bearer(apiKey), body: fileForm('bytes of a frozen day', 'f.txt') })
  const list = () => fetch(`${api}/files`, { headers: bearer(apiKey) })
  const get = () => fetch(`${api}/files/${fileId}`, { headers: bearer(apiKey) })
  const stats = () => fetch(`${api}/stats`, { headers: bearer(apiKey) })
  const remove = () => fetch(`${api}/files/${fileId}`, { method: 'DELETE', headers: bearer(apiKey) })
  async function createUpload(length?: number): Promise<string> {
    const response = await fetch(`${api}/uploads`, {
      method: 'POST',
      headers: {
        ...bearer(apiKey),
        ...TUS,
        ...(length === undefined ? { 'upload-defer-length': '1' } : { 'upload-length': String(length) }),
      },
    })
    expect(response.status).toBe(201)
    return new URL(response.headers.get('location')!, api).href
  }
  const patch = (url: string, bytes: number) =>
    fetch(url, {
      method: 'PATCH',
      headers: { ...bearer(apiKey), ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: Buffer.alloc(bytes, 5),
    })

  /** Runs every request at once, then reports each one's status and time. */
  async function timed(requests: Array<[string, () => Promise<Response>]>) {
    return Promise.all(
      requests.map(async ([name, request]) => {
        const started = Date.now()
        const response = await request()
        await response.arrayBuffer().catch(() => {})
        return { name, status: response.status, ms: Date.now() - started, retryAfter: response.headers.get('retry-after') }
      }),
    )
  }

  /**
   * A request body that sends `before` bytes, then waits for `gate`, then sends `after` bytes: the
   * request is past its authentication and its first queries when the backend freezes.
   */
  function gatedBody(before: number, gate: Promise<void>, after: number): ReadableStream<Uint8Array> {
    let step = 0
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        step++
        if (step === 1) controller.enqueue(new Uint8Array(before).fill(6))
        else if (step === 2) {
          await gate
          await sleep(100)
          controller.enqueue(new Uint8Array(after).fill(7))
        } else controller.close()
      },
    })
  }

  async function expectWhole() {
    for (let attempt = 0; attempt < 100; attempt++) {
      if ((await list()).status === 200 && (await upload()).status === 201) return
      await sleep(100)
    }
    throw new Error('the service was not whole again within 10 s')
  }

  it('PostgreSQL frozen while uploads stream and more requests than the pool has connections wait: each answers 503 within one timeout of the freeze', async () => {
    const fixed = await createUpload(3 * 1024 * 1024)
    const deferred = await createUpload()
    let freeze!: () => void
    const frozen = new Promise<void>((resolve) => (freeze = resolve))
    const streaming = (name: string, url: string, method: string, body: ReadableStream<Uint8Array>, headers: Record<string, string>) =>
      (async () => {
        const response = await fetch(url, { method, headers: { ...bearer(apiKey), ...headers }, body, duplex: 'half' } as RequestInit)
        await response.arrayBuffer().catch(() => {})
        return { name, status: response.status, retryAfter: response.headers.get('retry-after'), endedAt: Date.now() }
      })()
    const boundary = 'frozenboundary'
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    )
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
    const multipartBody = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(head)
        controller.enqueue(new Uint8Array(256 * 1024).fill(1))
        await frozen
        await sleep(100)
        controller.enqueue(new Uint8Array(256 * 1024).fill(2))
        controller.enqueue(tail)
        controller.close()
      },
    })
    const patchHeaders = { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }
    const inFlight = [
      streaming('patch', fixed, 'PATCH', gatedBody(1024 * 1024, frozen, 2 * 1024 * 1024), patchHeaders),
      streaming('patch, deferred length', deferred, 'PATCH', gatedBody(512 * 1024, frozen, 512 * 1024), patchHeaders),
      streaming('upload', `${api}/files/upload`, 'POST', multipartBody, { 'content-type': `multipart/form-data; boundary=${boundary}` }),
    ]
    // Past their authentication and their first queries.
    await sleep(500)
    proxies.database.freeze()
    const frozenAt = Date.now()
    freeze()
    let results
    try {
      // More requests than the pool has connections, while the uploads wait on theirs.
      const waiting = Array.from({ length: 2 * POOL_SIZE }, async (_, i) => {
        await sleep(i * 50)
        const response = await list()
        await response.arrayBuffer()
        return { name: `list ${i}`, status: response.status, retryAfter: response.headers.get('retry-after'), endedAt: Date.now() }
      })
      results = await Promise.all([...inFlight, ...waiting])
    } finally {
      proxies.database.thaw()
    }
    for (const result of results) {
      expect(result, result.name).toMatchObject({ status: 503, retryAfter: '5' })
      expect(result.endedAt - frozenAt, result.name).toBeLessThan(BACKEND_TIMEOUT_MS + MARGIN_MS + 400)
    }
    await expectWhole()
  })

  it('PostgreSQL frozen under more requests than the pool has connections: each answers 503 within one timeout', async () => {
    const fixed = await createUpload(3 * 1024 * 1024)
    const deferred = await createUpload()
    // The key in the cache.
    expect((await list()).status).toBe(200)
    proxies.database.freeze()
    let results
    try {
      results = await timed([
        ...Array.from({ length: 3 }, (_, i) => [`list ${i}`, list] as [string, () => Promise<Response>]),
        ['get', get],
        ['stats', stats],
        ['upload', upload],
        ['delete', remove],
        ['patch', () => patch(fixed, 3 * 1024 * 1024)],
        ['patch, deferred length', () => patch(deferred, 1024 * 1024)],
        ['tus create', () => fetch(`${api}/uploads`, { method: 'POST', headers: { ...bearer(apiKey), ...TUS, 'upload-length': '10' } })],
      ])
    } finally {
      proxies.database.thaw()
    }
    for (const result of results) {
      expect(result, result.name).toMatchObject({ status: 503, retryAfter: '5' })
      expect(result.ms, result.name).toBeLessThan(BACKEND_TIMEOUT_MS + MARGIN_MS)
    }
    await expectWhole()
  })

  it('a GET whose client leaves while PostgreSQL is frozen: one access line at 499 when its answer comes', async () => {
    expect((await list()).status).toBe(200)
    const from = logLines.length
    proxies.database.freeze()
    try {
      const { hostname, port } = new URL(api)
      const socket = net.connect(Number(port), hostname)
      socket.on('error', () => {})
      await new Promise<void>((resolve) => socket.once('connect', resolve))
      socket.write(`GET /api/v1/files HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`)
      await sleep(300)
      socket.destroy()
      // The service's 503 comes after the timeout; the line with it.
      await sleep(BACKEND_TIMEOUT_MS + MARGIN_MS)
    } finally {
      proxies.database.thaw()
    }
    const lines = logLines
      .slice(from)
      .map((line) => JSON.parse(line) as { msg: string; method?: string; route?: string; status?: number })
      .filter((line) => line.msg === 'request completed' && line.method === 'GET' && line.route === '/api/v1/files')
    // The 200 of the list before the freeze may be logged either side of `from`; nothing but it and the 499.
    expect(lines.map((line) => line.status).filter((status) => status !== 200)).toEqual([499])
    await expectWhole()
  })
})

// Issue 30 (round 2): per-request options, withOptions, withResponse/asResponse, error headers and
// body, APITimeoutError, the logger, the base URL check, the default export, the names of stats.
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest'
import FileshareDefault, {
  APIConnectionError,
  APIPromise,
  APITimeoutError,
  ConfigurationError,
  Fileshare,
  NotFoundError,
  RateLimitError,
  type ApiLimits,
  type ApiStats,
  type ErrorCode,
  type Limits,
  type Stats,
  type StatsResult,
} from '../../src/index.js'
import { FILE, apiError, fakeClient, json } from '../helpers/fake-fetch.js'

const KEY = 'fsk_' + 'k'.repeat(43)
const STATS = {
  success: true,
  stats: { total_files: 1, total_size: 5, total_downloads: 0, uploads_today: 1, storage_reserved: 0 },
  limits: { max_file_size: 10, daily_uploads: 5, requests_per_minute: 60, requests_per_day: 1000, max_storage: null },
  plan: 'pro',
}

describe('base URL', () => {
  it('without /api/v1 is a ConfigurationError saying what to add', () => {
    expect(() => new Fileshare({ baseUrl: 'https://files.example.com', apiKey: KEY })).toThrow(ConfigurationError)
    expect(() => new Fileshare({ baseUrl: 'https://files.example.com/', apiKey: KEY })).toThrow(
      /add it, as in "https:\/\/files\.example\.com\/api\/v1"/,
    )
    expect(new Fileshare({ baseUrl: 'https://files.example.com/api/v1/', apiKey: KEY }).baseUrl).toBe('https://files.example.com/api/v1')
  })
})

describe('the default export', () => {
  it('is the client class, as in openai and stripe', () => {
    expect(FileshareDefault).toBe(Fileshare)
  })
})

describe('per-request options', () => {
  it('headers, maxRetries and idempotencyKey change one call only, and are not sent as fields', async () => {
    const { client, requests, sleeps } = fakeClient(
      [() => apiError(503, 'service_unavailable'), () => json(200, { success: true, file: FILE })],
      {
        defaultHeaders: { 'x-team': 'a', 'x-gone': 'b' },
      },
    )
    await expect(client.files.get(7, { maxRetries: 0 })).rejects.toThrow(/503/)
    expect(requests).toHaveLength(1)
    expect(sleeps).toEqual([])
    await client.files.get(7, { headers: { 'x-trace': 't1', 'x-gone': null } })
    expect(requests[1]!.headers.get('x-trace')).toBe('t1')
    expect(requests[1]!.headers.get('x-team')).toBe('a')
    expect(requests[1]!.headers.has('x-gone')).toBe(false)
    expect(requests[1]!.headers.get('authorization')).toBe(`Bearer ${KEY}`)
    await client.files.update(7, { filename: 'b.txt', headers: { 'x-trace': 't2' }, maxRetries: 1, timeoutMs: 5000 })
    expect(JSON.parse(new TextDecoder().decode(requests[2]!.body))).toEqual({ filename: 'b.txt' })
    await client.links.create(7, { idempotencyKey: 'my-key-1', label: 'x' }).catch(() => {}) // the fake answers a file
    expect(requests[3]!.headers.get('idempotency-key')).toBe('my-key-1')
  })

  it('timeoutMs of one call: an APITimeoutError, which is an APIConnectionError', async () => {
    const { client } = fakeClient(
      [
        (request) =>
          new Promise<Response>(() => {
            void request
          }),
      ],
      { fetch: (_url, init) => new Promise((_ok, fail) => init?.signal?.addEventListener('abort', () => fail(init.signal!.reason))) },
    )
    const error = await client.files.get(7, { timeoutMs: 50, maxRetries: 0 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(APITimeoutError)
    expect(error).toBeInstanceOf(APIConnectionError)
  })

  it('an AbortSignal cancels a call with its reason', async () => {
    const controller = new AbortController()
    const { client } = fakeClient([], {
      fetch: (_url, init) => new Promise((_ok, fail) => init?.signal?.addEventListener('abort', () => fail(init.signal!.reason))),
    })
    const pending = client.stats({ signal: controller.signal })
    controller.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('withOptions gives a changed copy that keeps the key', async () => {
    const { client, requests } = fakeClient([() => apiError(503, 'service_unavailable')])
    const patient = client.withOptions({ maxRetries: 5, defaultHeaders: { 'x-copy': '1' } })
    expect(patient).toBeInstanceOf(Fileshare)
    expect(patient.maxRetries).toBe(5)
    expect(client.maxRetries).toBe(2)
    await expect(patient.stats()).rejects.toThrow(/503/)
    expect(requests).toHaveLength(6)
    expect(requests[0]!.headers.get('authorization')).toBe(`Bearer ${KEY}`)
    expect(requests[0]!.headers.get('x-copy')).toBe('1')
  })
})

describe('withResponse and asResponse', () => {
  it('give the status and headers of a successful call (RateLimit-Remaining), and the data', async () => {
    const { client } = fakeClient([() => json(200, STATS, { 'ratelimit-remaining': '41' })])
    const call = client.stats()
    expect(call).toBeInstanceOf(APIPromise)
    expect(call).toBeInstanceOf(Promise)
    const { data, response } = await call.withResponse()
    expect(data.plan).toBe('pro')
    expect(response.status).toBe(200)
    expect(response.headers.get('ratelimit-remaining')).toBe('41')
    expect(await response.json()).toMatchObject({ plan: 'pro' })
    expect(await call).toEqual(data)
  })

  it('asResponse answers the last attempt of a retried call', async () => {
    const { client } = fakeClient([
      () => apiError(503, 'service_unavailable'),
      () => json(200, { success: true, file: FILE }, { 'x-request-id': 'r2' }),
    ])
    const response = await client.files.get(7).asResponse()
    expect(response.status).toBe(200)
    expect(response.headers.get('x-request-id')).toBe('r2')
  })
})

describe('errors', () => {
  it('carry headers and the parsed body, and the request id in the message', async () => {
    const { client } = fakeClient([() => apiError(404, 'not_found', { 'ratelimit-remaining': '3' })])
    const error = (await client.files.get(8).catch((e: unknown) => e)) as NotFoundError
    expect(error).toBeInstanceOf(NotFoundError)
    expect(error.headers?.get('ratelimit-remaining')).toBe('3')
    expect(error.body).toEqual({ success: false, error: { code: 'not_found', message: 'message for not_found' } })
    expect(error.message).toBe('404 not_found: message for not_found (request id req-123)')
    expectTypeOf(error.code).toExtend<ErrorCode | (string & {}) | undefined>()
  })

  it('a text body is kept as text', async () => {
    const { client } = fakeClient([() => new Response('<html>bad gateway</html>', { status: 502 })], { maxRetries: 0 })
    const error = (await client.stats().catch((e: unknown) => e)) as { body: unknown; headers: Headers }
    expect(error.body).toBe('<html>bad gateway</html>')
    expect(error.headers).toBeInstanceOf(Headers)
  })

  it('a Retry-After over a minute throws at once with the wait', async () => {
    const { client, requests } = fakeClient([() => apiError(429, 'rate_limited', { 'retry-after': '3600' })])
    const error = (await client.stats().catch((e: unknown) => e)) as RateLimitError
    expect(error).toBeInstanceOf(RateLimitError)
    expect(error.retryAfter).toBe(3600)
    expect(requests).toHaveLength(1)
  })
})

describe('the logger', () => {
  afterEach(() => vi.unstubAllEnvs())

  function recorder() {
    const lines: string[] = []
    return { lines, logger: { debug: (m: string) => lines.push(`debug ${m}`), info: (m: string) => lines.push(`info ${m}`) } }
  }

  it('FILESHARE_LOG=debug logs requests and retries, never the key', async () => {
    vi.stubEnv('FILESHARE_LOG', 'debug')
    const { lines, logger } = recorder()
    const { client } = fakeClient([() => apiError(503, 'service_unavailable'), () => json(200, STATS)], { logger })
    await client.stats()
    expect(
      lines.some((l) => /^debug fileshare: GET http:\/\/fake\.test\/api\/v1\/stats -> 503 \(\d+ ms, request id req-123\)$/.test(l)),
    ).toBe(true)
    expect(lines.some((l) => l.startsWith('info fileshare: retry 1 in '))).toBe(true)
    expect(lines.join('\n')).not.toContain(KEY)
  })

  it('info shows retries only; off (the default) shows nothing', async () => {
    const info = recorder()
    const { client } = fakeClient([() => apiError(503, 'service_unavailable'), () => json(200, STATS)], {
      logger: info.logger,
      logLevel: 'info',
    })
    await client.stats()
    expect(info.lines.length).toBe(1)
    expect(info.lines[0]).toMatch(/^info fileshare: retry 1/)
    const off = recorder()
    const quiet = fakeClient([() => json(200, STATS)], { logger: off.logger })
    await quiet.client.stats()
    expect(off.lines).toEqual([])
    expect(() => new Fileshare({ baseUrl: 'http://x.test/api/v1', apiKey: KEY, logLevel: 'loud' as 'info' })).toThrow(ConfigurationError)
  })
})

describe('names of the stats answer, shared by every SDK', () => {
  it('StatsResult holds Stats and Limits; ApiStats and ApiLimits stay as aliases', async () => {
    const { client } = fakeClient([() => json(200, STATS)])
    const result = await client.stats()
    expectTypeOf(result).toEqualTypeOf<StatsResult>()
    expectTypeOf(result.stats).toExtend<Stats>()
    expectTypeOf(result.limits).toExtend<Limits>()
    expectTypeOf<ApiStats>().toEqualTypeOf<Stats>()
    expectTypeOf<ApiLimits>().toEqualTypeOf<Limits>()
    expect(result.limits.max_storage).toBeNull()
  })
})

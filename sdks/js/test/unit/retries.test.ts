import { describe, expect, it } from 'vitest'
import {
  APIConnectionError,
  AuthenticationError,
  BadRequestError,
  LimitExceededError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
} from '../../src/index.js'
import { parseRetryAfter } from '../../src/errors.js'
import { BACKOFF_BASE_MS, retryDelayMs, sleep } from '../../src/retry.js'
import { FILE, apiError, connectionFailure, fakeClient, json } from '../helpers/fake-fetch.js'

const ok = () => json(200, { success: true, file: FILE })

describe('retries', () => {
  it('retries 429 after Retry-After, then succeeds', async () => {
    const { client, requests, sleeps } = fakeClient([() => apiError(429, 'rate_limited', { 'retry-after': '3' }), ok])
    const file = await client.files.get(7)
    expect(file.file_id).toBe(7)
    expect(requests).toHaveLength(2)
    expect(sleeps).toEqual([3000])
  })

  it('waits a Retry-After of up to 60 s; one over 60 s throws at once, with retryAfter', async () => {
    const minute = fakeClient([() => apiError(503, 'service_unavailable', { 'retry-after': '60' }), ok])
    await minute.client.files.get(7)
    expect(minute.sleeps).toEqual([60_000])

    for (const [status, code] of [
      [429, 'rate_limited'],
      [503, 'service_unavailable'],
    ] as const) {
      const { client, requests, sleeps } = fakeClient([() => apiError(status, code, { 'retry-after': '61' }), ok])
      const error = await client.files.get(7).catch((e: unknown) => e)
      expect(error).toMatchObject({ status, code, retryAfter: 61 })
      expect(requests).toHaveLength(1)
      expect(sleeps).toEqual([])
    }
    const hour = await fakeClient([() => apiError(429, 'rate_limited', { 'retry-after': '3600' }), ok])
      .client.stats()
      .catch((e: unknown) => e)
    expect(hour).toBeInstanceOf(RateLimitError)
    expect((hour as RateLimitError).retryAfter).toBe(3600)
  })

  it.each([
    [500, 'internal_error'],
    [502, 'bad_gateway'],
    [503, 'service_unavailable'],
    [504, 'gateway_timeout'],
    [409, 'idempotency_in_progress'],
  ])('retries %i %s', async (status, code) => {
    const { client, requests } = fakeClient([() => apiError(status, code), ok])
    await expect(client.files.get(7)).resolves.toMatchObject({ file_id: 7 })
    expect(requests).toHaveLength(2)
  })

  it('retries 503 and connection failures with exponential backoff and full jitter from 0.5 s', async () => {
    const { client, requests, sleeps } = fakeClient(
      [() => apiError(503, 'service_unavailable'), () => connectionFailure(), () => apiError(503, 'service_unavailable'), ok],
      { maxRetries: 3, random: () => 0.999 },
    )
    await client.files.get(7)
    expect(requests).toHaveLength(4)
    expect(sleeps).toEqual([499, 999, 1998])
    expect(retryDelayMs(0, new Error('x'), () => 0)).toBe(0)
    expect(retryDelayMs(10, new Error('x'), () => 1)).toBe(8000)
    expect(BACKOFF_BASE_MS).toBe(500)
  })

  it('gives up after maxRetries (default 2) with the last error', async () => {
    const { client, requests } = fakeClient([() => apiError(503, 'service_unavailable', { 'retry-after': '5' })])
    const error = await client.stats().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ServerError)
    expect((error as ServerError).retryAfter).toBe(5)
    expect(requests).toHaveLength(3)
  })

  it('does not retry with maxRetries 0', async () => {
    const { client, requests } = fakeClient([() => apiError(429, 'rate_limited', { 'retry-after': '1' })], { maxRetries: 0 })
    await expect(client.stats()).rejects.toBeInstanceOf(RateLimitError)
    expect(requests).toHaveLength(1)
  })

  it.each([
    [400, 'invalid_parameter'],
    [401, 'unauthorized'],
    [403, 'plan_not_supported'],
    [403, 'file_too_large'],
    [404, 'not_found'],
    [403, 'storage_quota_exceeded'],
    [409, 'upload_offset_mismatch'],
    [409, 'default_link_required'],
    [413, 'file_too_large'],
    [422, 'idempotency_key_reused'],
    [501, 'not_implemented'],
    [507, 'insufficient_storage'],
  ])('does not retry %i %s', async (status, code) => {
    const { client, requests } = fakeClient([() => apiError(status, code), ok])
    await expect(client.files.get(7)).rejects.toMatchObject({ status, code })
    expect(requests).toHaveLength(1)
  })

  it('retries a multipart upload of bytes, but never one of a one-shot stream', async () => {
    const uploaded = () => json(201, { success: true, ...FILE })
    const replayable = fakeClient([() => connectionFailure(), uploaded], { resumableThreshold: 1e12 })
    const file = await replayable.client.files.upload(new TextEncoder().encode('hello'), { filename: 'a.txt' })
    expect(file.sha256).toBe(FILE.sha256)
    expect(replayable.requests.map((r) => r.method)).toEqual(['POST', 'POST'])

    const oneShot = fakeClient([() => connectionFailure(), uploaded], { resumableThreshold: 1e12 })
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('hello'))
        controller.close()
      },
    })
    await expect(oneShot.client.files.upload(stream, { filename: 'a.txt' })).rejects.toBeInstanceOf(APIConnectionError)
    expect(oneShot.requests).toHaveLength(1)
  })

  it('stops waiting when the signal aborts during a backoff', async () => {
    const controller = new AbortController()
    const { client, requests } = fakeClient([() => apiError(503, 'service_unavailable', { 'retry-after': '30' }), ok], {
      sleep: (ms, signal) => {
        setTimeout(() => controller.abort(new Error('stop!')), 10)
        return sleep(ms, signal)
      },
    })
    await expect(client.files.get(7, { signal: controller.signal })).rejects.toThrow('stop!')
    expect(requests).toHaveLength(1)
  })

  it('does not send a request when the signal is already aborted', async () => {
    const { client, requests } = fakeClient([ok])
    const error = await client.files.list({ signal: AbortSignal.abort() }).catch((e: unknown) => e)
    expect((error as Error).name).toBe('AbortError')
    expect(requests.length).toBeLessThanOrEqual(1)
  })

  it('turns an idle connection into APIConnectionError (timeoutMs is an idle timeout)', async () => {
    const hanging = (_input: RequestInfo | URL, init: RequestInit = {}) =>
      new Promise<Response>((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(init.signal!.reason)))
    const { Fileshare } = await import('../../src/index.js')
    const client = new Fileshare({
      baseUrl: 'http://fake.test/api/v1',
      apiKey: 'fsk_x',
      timeoutMs: 50,
      maxRetries: 0,
      fetch: hanging as typeof fetch,
    })
    const error = await client.stats().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(APIConnectionError)
    expect((error as Error).message).toMatch(/50 ms/)
  })
})

describe('error mapping', () => {
  it.each([
    [401, 'unauthorized', AuthenticationError],
    [403, 'plan_not_supported', PermissionDeniedError],
    [403, 'file_too_large', LimitExceededError],
    [403, 'daily_upload_limit_exceeded', LimitExceededError],
    [403, 'storage_quota_exceeded', LimitExceededError],
    [403, 'link_limit_exceeded', LimitExceededError],
    [413, 'file_too_large', LimitExceededError],
    [404, 'not_found', NotFoundError],
    [400, 'invalid_parameter', BadRequestError],
    [400, 'missing_file', BadRequestError],
    [400, 'invalid_request', BadRequestError],
    [409, 'upload_offset_mismatch', BadRequestError],
    [410, 'upload_expired', BadRequestError],
    [412, 'tus_version_not_supported', BadRequestError],
    [413, 'upload_length_exceeded', BadRequestError],
    [415, 'unsupported_media_type', BadRequestError],
    [416, 'range_not_satisfiable', BadRequestError],
    [423, 'upload_locked', BadRequestError],
    [409, 'idempotency_in_progress', BadRequestError],
    [422, 'idempotency_key_reused', BadRequestError],
    [460, 'checksum_mismatch', BadRequestError],
    [429, 'rate_limited', RateLimitError],
    [500, 'internal_error', ServerError],
    [503, 'service_unavailable', ServerError],
    [507, 'insufficient_storage', ServerError],
  ])('%i %s → %o', async (status, code, type) => {
    const { client } = fakeClient([() => apiError(status, code, { 'retry-after': '0' })], { maxRetries: 0 })
    const error = await client.files.get(7).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(type)
    expect(error).toMatchObject({ status, code, requestId: 'req-123', name: type.name })
    expect((error as Error).message).toContain(`message for ${code}`)
  })

  it('RateLimitError carries retryAfter and the RateLimit-* values', async () => {
    const { client } = fakeClient(
      [
        () =>
          apiError(429, 'rate_limited', {
            'retry-after': '12',
            'ratelimit-limit': '10',
            'ratelimit-remaining': '0',
            'ratelimit-reset': '12',
          }),
      ],
      { maxRetries: 0 },
    )
    const error = (await client.stats().catch((e: unknown) => e)) as RateLimitError
    expect(error.retryAfter).toBe(12)
    expect(error.rateLimit).toEqual({ limit: 10, remaining: 0, reset: 12 })
  })

  it('maps a body that is not JSON (a proxy page) by status', async () => {
    const { client } = fakeClient([() => new Response('<html>bad gateway</html>', { status: 502 })], { maxRetries: 0 })
    const error = await client.stats().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ServerError)
    expect(error).toMatchObject({ status: 502, code: undefined })
  })

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('7')).toBe(7)
    expect(parseRetryAfter(new Date(Date.now() + 10_000).toUTCString())).toBeGreaterThanOrEqual(9)
    expect(parseRetryAfter('soon')).toBeUndefined()
    expect(parseRetryAfter(null)).toBeUndefined()
  })
})

import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MemoryRequestLimiter } from '../../src/limits/memory-request-limiter.js'
import { bearer, fileForm, startTestApp, type TestApp } from '../helpers/test-app.js'

const DAY_MS = 86_400_000

interface RateLimitHeaders {
  limit: number
  remaining: number
  reset: number
}

/** The RateLimit-* headers, each required to be a whole number. */
function rateLimitHeaders(response: Response): RateLimitHeaders {
  const read = (name: string) => {
    const value = response.headers.get(name)
    expect(value, name).toMatch(/^[0-9]+$/)
    return Number(value)
  }
  return { limit: read('ratelimit-limit'), remaining: read('ratelimit-remaining'), reset: read('ratelimit-reset') }
}

async function expectRateLimited(response: Response): Promise<number> {
  expect(response.status).toBe(429)
  expect(await response.json()).toEqual({ success: false, error: { code: 'rate_limited', message: expect.any(String) } })
  const retryAfter = response.headers.get('retry-after')
  expect(retryAfter).toMatch(/^[0-9]+$/)
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
  return Number(retryAfter)
}

function secondsUntilNextUtcMidnight(now = Date.now()): number {
  return (DAY_MS - (now % DAY_MS)) / 1000
}

describe('request rate limits over HTTP', () => {
  let t: TestApp
  beforeEach(async () => {
    t = await startTestApp()
  })
  afterEach(async () => {
    await t.close()
  })

  async function accountWithLimits(limits: { requests_per_minute?: number; requests_per_day?: number }) {
    const account = await t.createAccount('pro')
    await t.app.services.accounts.setLimits(account.accountId, limits)
    return account
  }

  const stats = (apiKey: string) => fetch(`${t.api}/stats`, { headers: bearer(apiKey) })

  it('uses the plan figures by default: pro allows 50 requests a minute', async () => {
    const { apiKey } = await t.createAccount('pro')
    const first = await stats(apiKey)
    expect(rateLimitHeaders(first)).toMatchObject({ limit: 50, remaining: 49 })
    const { reset } = rateLimitHeaders(first)
    expect(reset).toBeGreaterThanOrEqual(1)
    expect(reset).toBeLessThanOrEqual(60)
  })

  it('refuses the request past the per-minute limit with 429, Retry-After and rate_limited', async () => {
    const { apiKey } = await accountWithLimits({ requests_per_minute: 3 })
    for (const remaining of [2, 1, 0]) {
      const response = await stats(apiKey)
      expect(response.status).toBe(200)
      expect(rateLimitHeaders(response)).toMatchObject({ limit: 3, remaining })
    }
    const refused = await stats(apiKey)
    expect(rateLimitHeaders(refused)).toMatchObject({ limit: 3, remaining: 0 })
    const retryAfter = await expectRateLimited(refused)
    // The rolling window frees its oldest request within 60 s of it.
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(rateLimitHeaders(refused).reset).toBe(retryAfter)
  })

  it('puts RateLimit headers on every authenticated response, successes and errors alike', async () => {
    const { apiKey } = await accountWithLimits({ requests_per_minute: 20 })
    const headers = bearer(apiKey)
    const upload = await fetch(`${t.api}/files/upload`, { method: 'POST', headers, body: fileForm('x') })
    expect(upload.status).toBe(201)
    const { file_id: id } = (await upload.json()) as { file_id: number }
    const calls: [string, Promise<Response>, number][] = [
      ['list', fetch(`${t.api}/files`, { headers }), 200],
      ['detail', fetch(`${t.api}/files/${id}`, { headers }), 200],
      ['stats', fetch(`${t.api}/stats`, { headers }), 200],
      ['invalid list parameter', fetch(`${t.api}/files?limit=0`, { headers }), 400],
      ['missing file part', fetch(`${t.api}/files/upload`, { method: 'POST', headers, body: new FormData() }), 400],
      ['unknown file', fetch(`${t.api}/files/999999`, { headers }), 404],
    ]
    const seen = [rateLimitHeaders(upload).remaining]
    for (const [name, call, status] of calls) {
      const response = await call
      expect(response.status, name).toBe(status)
      seen.push(rateLimitHeaders(response).remaining)
      expect(rateLimitHeaders(response).limit, name).toBe(20)
      await response.arrayBuffer()
    }
    const deleted = await fetch(`${t.api}/files/${id}`, { method: 'DELETE', headers })
    expect(deleted.status).toBe(200)
    seen.push(rateLimitHeaders(deleted).remaining)
    // Eight requests, each counted once.
    expect(seen.sort((a, b) => b - a)).toEqual([19, 18, 17, 16, 15, 14, 13, 12])
  })

  it('does not count a refused request, in the minute window or in the day', async () => {
    const { accountId, apiKey } = await accountWithLimits({ requests_per_minute: 2, requests_per_day: 10 })
    expect((await stats(apiKey)).status).toBe(200)
    expect((await stats(apiKey)).status).toBe(200)
    for (let i = 0; i < 5; i++) await expectRateLimited(await stats(apiKey))

    // Lift the minute limit: had the five refusals counted, the minute window would hold 7 and the day 7.
    await t.app.services.accounts.setLimits(accountId, { requests_per_minute: 5 })
    const minuteBinds = await stats(apiKey)
    expect(minuteBinds.status).toBe(200)
    expect(rateLimitHeaders(minuteBinds)).toMatchObject({ limit: 5, remaining: 2 })

    await t.app.services.accounts.setLimits(accountId, { requests_per_minute: 100 })
    const dayBinds = await stats(apiKey)
    expect(dayBinds.status).toBe(200)
    expect(rateLimitHeaders(dayBinds)).toMatchObject({ limit: 10, remaining: 6 })
  })

  it('counts per account, across all of its keys', async () => {
    const { accountId, apiKey } = await accountWithLimits({ requests_per_minute: 4 })
    const second = await t.app.services.apiKeys.create(accountId, 'second')
    const other = await accountWithLimits({ requests_per_minute: 4 })

    const keys = [apiKey, second.apiKey, apiKey, second.apiKey]
    for (const [index, key] of keys.entries()) {
      const response = await stats(key)
      expect(response.status).toBe(200)
      expect(rateLimitHeaders(response).remaining).toBe(3 - index)
    }
    await expectRateLimited(await stats(apiKey))
    await expectRateLimited(await stats(second.apiKey))
    // Another account has its own budget.
    const response = await stats(other.apiKey)
    expect(response.status).toBe(200)
    expect(rateLimitHeaders(response)).toMatchObject({ limit: 4, remaining: 3 })
  })

  it('refuses past the daily limit until the next UTC midnight', async () => {
    const { apiKey } = await accountWithLimits({ requests_per_minute: 100, requests_per_day: 2 })
    const first = await stats(apiKey)
    expect(rateLimitHeaders(first)).toMatchObject({ limit: 2, remaining: 1 })
    expect(Math.abs(rateLimitHeaders(first).reset - secondsUntilNextUtcMidnight())).toBeLessThanOrEqual(2)
    expect((await stats(apiKey)).status).toBe(200)

    const refused = await stats(apiKey)
    const expected = secondsUntilNextUtcMidnight()
    const retryAfter = await expectRateLimited(refused)
    expect(Math.abs(retryAfter - expected)).toBeLessThanOrEqual(2)
    expect(rateLimitHeaders(refused)).toMatchObject({ limit: 2, remaining: 0 })
  })

  it('passes exactly N of a burst of concurrent requests', async () => {
    const limit = 7
    const { apiKey } = await accountWithLimits({ requests_per_minute: limit })
    const responses = await Promise.all(Array.from({ length: 30 }, () => stats(apiKey)))
    const statuses = await Promise.all(
      responses.map(async (response) => {
        await response.arrayBuffer()
        return response.status
      }),
    )
    expect(statuses.filter((status) => status === 200)).toHaveLength(limit)
    expect(statuses.filter((status) => status === 429)).toHaveLength(30 - limit)
    // Every passed request saw a different remaining count: no two took the same slot.
    const remaining = responses.filter((r) => r.status === 200).map((r) => rateLimitHeaders(r).remaining)
    expect(remaining.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6])
  })

  it('passes exactly N of a concurrent burst spread over several keys of one account', async () => {
    const { accountId, apiKey } = await accountWithLimits({ requests_per_day: 9 })
    const second = await t.app.services.apiKeys.create(accountId, 'second')
    const keys = Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? apiKey : second.apiKey))
    const statuses = await Promise.all(
      keys.map(async (key) => {
        const response = await stats(key)
        await response.arrayBuffer()
        return response.status
      }),
    )
    expect(statuses.filter((status) => status === 200)).toHaveLength(9)
    expect(statuses.filter((status) => status === 429)).toHaveLength(15)
  })
})

describe('MemoryRequestLimiter', () => {
  // A fixed UTC noon, so that the day window never turns over unless a test moves there.
  const NOON = Date.UTC(2026, 2, 10, 12, 0, 0)
  const SECOND = 1_000

  it('rolls a 60 s window: a request frees its slot 60 s after it was made, not at a fixed boundary', async () => {
    const limiter = new MemoryRequestLimiter()
    const limits = { perMinute: 2, perDay: 1_000 }
    // Two requests late in a clock minute: a fixed window would reset at 12:01:00.
    const first = NOON + 50 * SECOND
    expect((await limiter.consume('a', limits, first)).allowed).toBe(true)
    expect((await limiter.consume('a', limits, first + 5 * SECOND)).allowed).toBe(true)

    const atBoundary = await limiter.consume('a', limits, NOON + 61 * SECOND)
    expect(atBoundary.allowed).toBe(false)
    expect(atBoundary.retryAfterSeconds).toBe(49)

    const justBefore = await limiter.consume('a', limits, first + 60 * SECOND - 1)
    expect(justBefore.allowed).toBe(false)
    expect(justBefore.retryAfterSeconds).toBe(1)

    expect((await limiter.consume('a', limits, first + 60 * SECOND)).allowed).toBe(true)
    const secondStillCounted = await limiter.consume('a', limits, first + 61 * SECOND)
    expect(secondStillCounted.allowed).toBe(false)
    expect(secondStillCounted.retryAfterSeconds).toBe(4)
    expect((await limiter.consume('a', limits, first + 65 * SECOND)).allowed).toBe(true)
  })

  it('does not count refused requests', async () => {
    const limiter = new MemoryRequestLimiter()
    const limits = { perMinute: 2, perDay: 3 }
    await limiter.consume('a', limits, NOON)
    await limiter.consume('a', limits, NOON + 1)
    for (let i = 2; i < 50; i++) expect((await limiter.consume('a', limits, NOON + i)).allowed).toBe(false)
    // Had the refusals been logged, the window would stay full until NOON + 49 + 60 s.
    const freed = await limiter.consume('a', limits, NOON + 60 * SECOND)
    expect(freed).toMatchObject({ allowed: true })
    // Three counted today: the day limit now binds.
    const dayFull = await limiter.consume('a', limits, NOON + 62 * SECOND)
    expect(dayFull.allowed).toBe(false)
    expect(dayFull.retryAfterSeconds).toBe(12 * 3600 - 62)
  })

  it('keeps accounts apart', async () => {
    const limiter = new MemoryRequestLimiter()
    const limits = { perMinute: 1, perDay: 10 }
    expect((await limiter.consume('a', limits, NOON)).allowed).toBe(true)
    expect((await limiter.consume('a', limits, NOON)).allowed).toBe(false)
    expect((await limiter.consume('b', limits, NOON)).allowed).toBe(true)
  })

  it('starts a new day at 00:00 UTC', async () => {
    const limiter = new MemoryRequestLimiter()
    const limits = { perMinute: 100, perDay: 2 }
    const lateEvening = Date.UTC(2026, 2, 10, 23, 59, 0)
    expect((await limiter.consume('a', limits, lateEvening)).allowed).toBe(true)
    expect((await limiter.consume('a', limits, lateEvening + SECOND)).allowed).toBe(true)

    const refused = await limiter.consume('a', limits, lateEvening + 30 * SECOND)
    expect(refused).toMatchObject({ allowed: false, limit: 2, remaining: 0, resetSeconds: 30, retryAfterSeconds: 30 })
    const lastMillisecond = await limiter.consume('a', limits, Date.UTC(2026, 2, 11) - 1)
    expect(lastMillisecond).toMatchObject({ allowed: false, retryAfterSeconds: 1 })

    const midnight = Date.UTC(2026, 2, 11)
    const nextDay = await limiter.consume('a', limits, midnight)
    expect(nextDay).toMatchObject({ allowed: true, limit: 2, remaining: 1, resetSeconds: 86_400 })
  })

  it('reports in the headers the window that binds first', async () => {
    const limiter = new MemoryRequestLimiter()
    // Fewer left in the minute: the minute window, reset when the oldest request leaves it.
    const minute = await limiter.consume('minute', { perMinute: 5, perDay: 100 }, NOON)
    expect(minute).toMatchObject({ allowed: true, limit: 5, remaining: 4, resetSeconds: 60 })
    const minuteLater = await limiter.consume('minute', { perMinute: 5, perDay: 100 }, NOON + 20 * SECOND)
    expect(minuteLater).toMatchObject({ limit: 5, remaining: 3, resetSeconds: 40 })

    // Fewer left in the day: the day window, reset at the next UTC midnight (12 h after noon).
    const day = await limiter.consume('day', { perMinute: 100, perDay: 3 }, NOON)
    expect(day).toMatchObject({ allowed: true, limit: 3, remaining: 2, resetSeconds: 12 * 3600 })

    // As many left in both: the day, since it frees up later and so binds longer.
    const tie = await limiter.consume('tie', { perMinute: 3, perDay: 3 }, NOON)
    expect(tie).toMatchObject({ limit: 3, remaining: 2, resetSeconds: 12 * 3600 })

    // Both spent: Retry-After waits for the later of the two.
    const both = new MemoryRequestLimiter()
    await both.consume('x', { perMinute: 1, perDay: 1 }, NOON)
    const refused = await both.consume('x', { perMinute: 1, perDay: 1 }, NOON + SECOND)
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 12 * 3600 - 1 })
  })

  it('passes exactly N of concurrent consumes', async () => {
    const limiter = new MemoryRequestLimiter()
    const decisions = await Promise.all(Array.from({ length: 40 }, () => limiter.consume('a', { perMinute: 13, perDay: 100 }, NOON)))
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(13)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
  // One app for the file: limits are counted per account, and every test uses accounts of its own.
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(async () => {
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

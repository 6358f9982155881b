import { describe, expect, it } from 'vitest'
import { MemoryRequestLimiter } from '../../src/limits/memory-request-limiter.js'

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
    const decisions = await Promise.all(Array.from({ length: 40 }, async () => limiter.consume('a', { perMinute: 13, perDay: 100 }, NOON)))
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(13)
  })

  it('stays exact through a window of 200,000 requests as they leave it, by consume and by peek', async () => {
    // Large enough that the log outgrows V8's regular heap pages, where shift() copied it whole.
    const limiter = new MemoryRequestLimiter()
    const limits = { perMinute: 1_000_000, perDay: 100_000_000 }
    const times: number[] = []
    for (let i = 0; i < 200_000; i++) {
      const at = NOON + Math.floor(i * 0.25) // 4 requests a millisecond, 50 s in all
      times.push(at)
      void limiter.consume('a', limits, at)
    }
    const inWindow = (now: number) => times.filter((time) => time > now - 60 * SECOND).length
    for (const now of [NOON + 60 * SECOND, NOON + 61 * SECOND, NOON + 85 * SECOND, NOON + 109 * SECOND, NOON + 110 * SECOND]) {
      const peeked = await limiter.peek('a', limits, now)
      expect(peeked.remaining, `peek at +${now - NOON} ms`).toBe(limits.perMinute - inWindow(now))
      const consumed = await limiter.consume('a', limits, now)
      times.push(now)
      expect(consumed.remaining, `consume at +${now - NOON} ms`).toBe(limits.perMinute - inWindow(now))
    }
  })
})

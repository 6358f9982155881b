import { randomBytes } from 'node:crypto'
import type { Redis, Result } from 'ioredis'
import { redisUnavailable } from './redis-unavailable.js'
import { decide, type LimitDecision, type RequestLimiter, type RequestLimits } from './request-limiter.js'
import { secondsUntilUtcMidnight } from '../lib/utc-day.js'

/**
 * The same sliding log as MemoryRequestLimiter, kept in Redis so that every server instance
 * shares it. One Lua script reads the clock of Redis (not of the instances, whose clocks may
 * differ), checks both windows and counts the request only when both allow it, atomically.
 * The day key is derived inside the script from that clock (single-node Redis, not Cluster).
 */
const CONSUME = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = 60000
local perMinute = tonumber(ARGV[1])
local perDay = tonumber(ARGV[2])
local dayIndex = math.floor(now / 86400000)
local minuteKey = KEYS[1] .. ':m'
local dayKey = KEYS[1] .. ':d:' .. dayIndex
redis.call('ZREMRANGEBYSCORE', minuteKey, '-inf', now - window)
local minuteUsed = redis.call('ZCARD', minuteKey)
local dayUsed = tonumber(redis.call('GET', dayKey) or '0')
local allowed = 0
if minuteUsed < perMinute and dayUsed < perDay then
  redis.call('ZADD', minuteKey, now, now .. ':' .. ARGV[3])
  redis.call('PEXPIRE', minuteKey, window)
  dayUsed = redis.call('INCR', dayKey)
  redis.call('EXPIRE', dayKey, 90000)
  minuteUsed = minuteUsed + 1
  allowed = 1
end
local oldest = redis.call('ZRANGE', minuteKey, 0, 0, 'WITHSCORES')
local oldestAt = now
if oldest[2] then oldestAt = tonumber(oldest[2]) end
return {allowed, minuteUsed, dayUsed, now, oldestAt}
`

/** CONSUME's reading, without its writes: what the windows hold now. */
const PEEK = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = 60000
local minuteKey = KEYS[1] .. ':m'
local dayKey = KEYS[1] .. ':d:' .. math.floor(now / 86400000)
local minuteUsed = redis.call('ZCOUNT', minuteKey, '(' .. (now - window), '+inf')
local dayUsed = tonumber(redis.call('GET', dayKey) or '0')
local oldest = redis.call('ZRANGEBYSCORE', minuteKey, '(' .. (now - window), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local oldestAt = now
if oldest[2] then oldestAt = tonumber(oldest[2]) end
return {minuteUsed, dayUsed, now, oldestAt}
`

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fileshareConsume(key: string, perMinute: number, perDay: number, nonce: string): Result<number[], Context>
    filesharePeek(key: string): Result<number[], Context>
  }
}

export class RedisRequestLimiter implements RequestLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix = 'fileshare:rl:',
  ) {
    redis.defineCommand('fileshareConsume', { numberOfKeys: 1, lua: CONSUME })
    redis.defineCommand('filesharePeek', { numberOfKeys: 1, lua: PEEK })
  }

  async peek(accountKey: string, limits: RequestLimits): Promise<LimitDecision> {
    const [minuteUsed, dayUsed, now, oldestAt] = await this.redis.filesharePeek(this.keyPrefix + accountKey).catch((error: unknown) => {
      throw redisUnavailable(error)
    })
    return decide({
      limits,
      allowed: minuteUsed! < limits.perMinute && dayUsed! < limits.perDay,
      minuteUsed: minuteUsed!,
      minuteResetMs: minuteUsed! > 0 ? oldestAt! + 60_000 - now! : 60_000,
      dayUsed: dayUsed!,
      dayResetSeconds: secondsUntilUtcMidnight(now!),
    })
  }

  async consume(accountKey: string, limits: RequestLimits): Promise<LimitDecision> {
    const [allowed, minuteUsed, dayUsed, now, oldestAt] = await this.redis
      .fileshareConsume(this.keyPrefix + accountKey, limits.perMinute, limits.perDay, randomBytes(6).toString('hex'))
      .catch((error: unknown) => {
        throw redisUnavailable(error)
      })
    return decide({
      limits,
      allowed: allowed === 1,
      minuteUsed: minuteUsed!,
      minuteResetMs: minuteUsed! > 0 ? oldestAt! + 60_000 - now! : 60_000,
      dayUsed: dayUsed!,
      dayResetSeconds: secondsUntilUtcMidnight(now!),
    })
  }

  /** Reads the day key CONSUME writes; the day is taken from this instance's clock, near enough for a display. */
  async dayUsage(accountKey: string, now = Date.now()): Promise<number> {
    const dayIndex = Math.floor(now / 86_400_000)
    const count = await this.redis.get(`${this.keyPrefix}${accountKey}:d:${dayIndex}`).catch((error: unknown) => {
      throw redisUnavailable(error)
    })
    return Number(count ?? 0)
  }

  async close(): Promise<void> {}
}

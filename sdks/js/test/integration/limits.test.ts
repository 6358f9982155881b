// The "limited" account (1 MiB files, 3 uploads a day, 10 requests a minute): LimitExceededError
// (403 of the multipart upload, 413 of resumable uploads, the daily limit) and RateLimitError.
import { describe, expect, it } from 'vitest'
import { LimitExceededError, RateLimitError } from '../../src/index.js'
import { client, server } from '../helpers/env.js'

describe.sequential('limits of the limited account', () => {
  const limits = () => server().limits.limited
  const fs = client('limited', { maxRetries: 0 })
  const tooBig = () => new Uint8Array(limits().max_file_size + 1)

  it('LimitExceededError for a file over max_file_size (multipart: 403 file_too_large)', async () => {
    const error = await fs.files.upload(tooBig(), { filename: 'big.bin', resumable: false }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LimitExceededError)
    expect(error).toMatchObject({ status: 403, code: 'file_too_large' })
  })

  it('LimitExceededError for a resumable upload over max_file_size (tus: 413 file_too_large)', async () => {
    const error = await fs.files.upload(tooBig(), { filename: 'big.bin', resumable: true }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LimitExceededError)
    expect(error).toMatchObject({ status: 413, code: 'file_too_large' })
  })

  it('LimitExceededError once the daily uploads are used', async () => {
    for (let i = 0; i < limits().daily_uploads; i++) await fs.files.upload(new Uint8Array([i]), { filename: `day-${i}.bin` })
    const error = await fs.files.upload(new Uint8Array([9]), { filename: 'one-too-many.bin' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LimitExceededError)
    expect(error).toMatchObject({ status: 403, code: 'daily_upload_limit_exceeded' })
  })

  it('RateLimitError with retryAfter and RateLimit-* once the requests per minute are spent', async () => {
    let error: unknown
    for (let i = 0; i <= limits().requests_per_minute && !error; i++) {
      error = await fs.files.list({ limit: 1 }).then(
        () => undefined,
        (e: unknown) => e,
      )
    }
    expect(error).toBeInstanceOf(RateLimitError)
    const rate = error as RateLimitError
    expect(rate).toMatchObject({ status: 429, code: 'rate_limited' })
    expect(rate.retryAfter).toBeGreaterThan(0)
    expect(rate.rateLimit).toMatchObject({ limit: limits().requests_per_minute, remaining: 0 })
    expect(rate.rateLimit.reset).toBeGreaterThan(0)
  })
})

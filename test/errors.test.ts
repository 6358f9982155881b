import { describe, expect, it } from 'vitest'
import { AppError, NotFoundError, RateLimitedError, ServiceUnavailableError } from '../src/errors.js'

describe('AppError', () => {
  it('a refusal (4xx) carries no stack: capturing one per 429 was a tenth of the CPU under a flood', () => {
    for (const error of [new RateLimitedError(30), new NotFoundError(), new AppError('unauthorized')]) {
      expect(error.status).toBeLessThan(500)
      expect(error.stack).not.toMatch(/\n\s+at /)
    }
  })

  it('a fault (5xx) keeps its stack for the log, and the process-wide stack limit is left as it was', () => {
    const limit = Error.stackTraceLimit
    new RateLimitedError(30)
    expect(Error.stackTraceLimit).toBe(limit)
    const fault = new ServiceUnavailableError('down', { cause: new Error('ECONNREFUSED') })
    expect(fault.status).toBe(503)
    expect(fault.stack).toMatch(/\n\s+at /)
    expect(new Error('plain').stack).toMatch(/\n\s+at /)
  })
})

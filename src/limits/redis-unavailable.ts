import { ServiceUnavailableError } from '../errors.js'

/** Limits are exact only with their shared state: without Redis, requests that need a limit get 503. */
export function redisUnavailable(error: unknown): ServiceUnavailableError {
  return new ServiceUnavailableError('The rate-limit store (Redis) is unavailable.', { cause: error })
}

import { APIConnectionError, FileshareError, RateLimitError, ServerError } from './errors.js'

/** `Retry-After` is honoured up to this many seconds. */
export const RETRY_AFTER_CAP_SECONDS = 60
/** First backoff step (full jitter: a random wait between 0 and this, doubling per attempt). */
export const BACKOFF_BASE_MS = 500
/** Largest backoff step. */
export const BACKOFF_MAX_MS = 8000

/** 429, 503 and connection failures are worth another attempt; nothing else is. */
export function isRetryable(error: unknown): error is FileshareError {
  if (error instanceof RateLimitError || error instanceof APIConnectionError) return true
  return error instanceof ServerError && error.status === 503
}

/**
 * How long to wait before retry number `attempt` (0 for the first retry): the server's
 * `Retry-After` (capped at 60 s) when it sent one, else exponential backoff with full jitter.
 */
export function retryDelayMs(attempt: number, error: unknown, random: () => number = Math.random): number {
  if (error instanceof FileshareError && error.retryAfter !== undefined) {
    return Math.min(error.retryAfter, RETRY_AFTER_CAP_SECONDS) * 1000
  }
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt)
  return Math.floor(random() * ceiling)
}

/** The reason of an aborted signal, as an Error (`AbortError` when the signal gave none). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError')
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal))
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer)
      reject(abortReason(signal!))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * For requests that must not reach the server twice (a POST that creates a link or counts a
 * download): a retry only when the server answered (429, 503: nothing was done), never after a
 * connection failure or a timeout, which may have come after the server acted.
 */
export function answered(error: FileshareError): boolean {
  return !(error instanceof APIConnectionError)
}

export interface RetryPolicy {
  maxRetries: number
  /** Replaceable for tests. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
  random?: () => number
}

/**
 * Runs `attempt` until it succeeds, fails with an error that is not retryable, or the retries
 * (`maxRetries`) are spent. `canRetry` may veto a retry (a one-shot body that was already read).
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  attempt: (attemptNumber: number) => Promise<T>,
  canRetry: (error: FileshareError) => boolean = () => true,
): Promise<T> {
  const wait = policy.sleep ?? sleep
  for (let n = 0; ; n++) {
    try {
      return await attempt(n)
    } catch (error) {
      if (signal?.aborted) throw abortReason(signal)
      if (n >= policy.maxRetries || !isRetryable(error) || !canRetry(error)) throw error
      await wait(retryDelayMs(n, error, policy.random), signal)
    }
  }
}

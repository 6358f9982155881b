import { APIConnectionError, BadRequestError, FileshareError, RateLimitError, ScanPendingError, ServerError } from './errors.js'

/** A `Retry-After` of more than this many seconds is not waited out: the call throws at once. */
export const RETRY_AFTER_MAX_SECONDS = 60
/** First backoff step (full jitter: a random wait between 0 and this, doubling per attempt). */
export const BACKOFF_BASE_MS = 500
/** Largest backoff step. */
export const BACKOFF_MAX_MS = 8000
/** 5xx answers worth another attempt. */
const RETRYABLE_SERVER_STATUSES = new Set([500, 502, 503, 504])

/** The server asked for a wait (`Retry-After`) longer than a minute: no retry sleeps through it. */
export function waitsTooLong(error: unknown): boolean {
  return error instanceof FileshareError && error.retryAfter !== undefined && error.retryAfter > RETRY_AFTER_MAX_SECONDS
}

/**
 * 429, 500, 502, 503, 504, 409 `idempotency_in_progress` (the same idempotency key is still at
 * work), 409 `scan_pending` (a download link of a file not scanned yet) and connection failures:
 * the same request may succeed later.
 */
export function isTransient(error: unknown): error is FileshareError {
  if (error instanceof RateLimitError || error instanceof APIConnectionError || error instanceof ScanPendingError) return true
  if (error instanceof BadRequestError) return error.status === 409 && error.code === 'idempotency_in_progress'
  return error instanceof ServerError && RETRYABLE_SERVER_STATUSES.has(error.status ?? 0)
}

/** A transient failure is worth another attempt, unless the server asked to wait more than a minute. */
export function isRetryable(error: unknown): error is FileshareError {
  return isTransient(error) && !waitsTooLong(error)
}

/**
 * How long to wait before retry number `attempt` (0 for the first retry): the server's
 * `Retry-After` when it sent one (never over a minute: {@link isRetryable}), else exponential
 * backoff with full jitter.
 */
export function retryDelayMs(attempt: number, error: unknown, random: () => number = Math.random): number {
  if (error instanceof FileshareError && error.retryAfter !== undefined) return error.retryAfter * 1000
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
 * For a POST without an idempotency key that must not reach the server twice (a download's POST
 * to its link, a link's rotation): a retry only when the answer says nothing was done (429, 503,
 * 409 `scan_pending`: the link counted no download), never after a connection failure, a timeout or another 5xx, which may have come after the
 * server acted.
 */
export function answered(error: FileshareError): boolean {
  return error instanceof RateLimitError || error instanceof ScanPendingError || (error instanceof ServerError && error.status === 503)
}

export interface RetryPolicy {
  maxRetries: number
  /** Replaceable for tests. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
  random?: () => number
  /** Told of each retry before its wait (the logger's `info` line). */
  onRetry?: ((retry: number, delayMs: number, error: FileshareError) => void) | undefined
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
      const delay = retryDelayMs(n, error, policy.random)
      policy.onRetry?.(n + 1, delay, error)
      await wait(delay, signal)
    }
  }
}

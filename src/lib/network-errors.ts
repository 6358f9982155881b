/** Socket error codes that mean a backend cannot be reached right now (it may come back). */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/** Whether `error` (or its cause, or one of an AggregateError's errors) is a failed connection. */
export function isConnectionError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown }
  if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true
  if (Array.isArray(errors) && errors.some(isConnectionError)) return true
  return cause !== undefined && cause !== error && isConnectionError(cause)
}

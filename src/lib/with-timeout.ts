/**
 * `promise`, or a rejection with `timeoutError()` once `ms` have passed, whichever comes first. The
 * timer keeps no process alive. The promise itself goes on: only the wait for it ends.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, timeoutError: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(timeoutError()), ms)
    timer.unref()
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

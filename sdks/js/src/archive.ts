// files.downloadArchive(): several files as one ZIP (POST /files/archive), streamed to a path or a
// stream. The archive is made as it is sent, so there is no Range to continue it from: a
// connection lost before the first byte is retried, one lost later starts again from the first
// byte where the destination can be rewritten (a path), and a path this call wrote to that did not
// get the whole archive is removed, so that a broken ZIP is never left where a finished one is expected.
import { openSink, type DownloadDestination } from './download.js'
import { ConfigurationError, errorFromResponse } from './errors.js'
import type { Http } from './http.js'
import { abortReason, isRetryable, retryDelayMs, sleep } from './retry.js'
import { loadNodeIo } from './runtime.js'
import type { ArchiveDownloadOptions, ArchiveDownloadResult } from './types.js'
import { writeBody } from './write-body.js'

/** The most files one archive may hold (the server's limit). */
export const MAX_ARCHIVE_FILES = 1000

function archiveIds(ids: ReadonlyArray<number | string>): number[] {
  if (!Array.isArray(ids) || ids.length === 0) throw new ConfigurationError('downloadArchive needs at least one file id')
  if (ids.length > MAX_ARCHIVE_FILES) throw new ConfigurationError(`downloadArchive takes at most ${MAX_ARCHIVE_FILES} file ids`)
  return ids.map((id) => {
    const n = typeof id === 'string' && /^[1-9][0-9]*$/.test(id) ? Number(id) : id
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw new ConfigurationError(`not a file id: ${String(id)}`)
    return n
  })
}

/** The name in `Content-Disposition` (the server sends a plain ASCII one). */
function dispositionFilename(header: string | null): string | undefined {
  return header ? /filename="([^"]*)"/.exec(header)?.[1] : undefined
}

export async function downloadArchive(
  http: Http,
  ids: ReadonlyArray<number | string>,
  destination: DownloadDestination,
  options: ArchiveDownloadOptions = {},
): Promise<ArchiveDownloadResult> {
  const { signal, onProgress } = options
  const body = JSON.stringify({ ids: archiveIds(ids) })
  const policy = http.options.retry
  const wait = policy.sleep ?? sleep
  const sink = await openSink(destination, false)
  let received = 0
  let failures = 0
  // Whether this call wrote to a path (which truncated what was there): only then is it removed on failure.
  let wrote = false
  try {
    for (;;) {
      try {
        const exchange = await http.send({
          method: 'POST',
          url: http.url('/files/archive'),
          headers: { 'content-type': 'application/json', accept: 'application/zip, application/json' },
          body,
          signal,
        })
        const { response, watchdog } = exchange
        if (response.status !== 200) throw errorFromResponse(response.status, response.headers, await http.readText(exchange))
        if (received > 0) {
          // A second attempt after bytes were written: only a path can take the archive again.
          await sink.restart()
          received = 0
        }
        const total = Number(response.headers.get('content-length'))
        const length = Number.isSafeInteger(total) ? total : undefined
        onProgress?.(0, length)
        await writeBody(exchange, sink, {
          writing: () => {
            wrote = true
          },
          written: (chunk) => {
            received += chunk.byteLength
            onProgress?.(received, length)
          },
        })
        // The server cuts the connection when a stored file fails mid-archive: never a short ZIP taken as whole.
        if (length !== undefined && received !== length) {
          throw watchdog.translate(new Error(`the connection ended after ${received} of ${length} bytes`))
        }
        await sink.close(true)
        return { size: received, filename: dispositionFilename(response.headers.get('content-disposition')) }
      } catch (error) {
        if (signal?.aborted) throw abortReason(signal)
        // The budget is never given back: an archive does not resume, so every attempt downloads it from
        // its first byte, and a store that cuts each attempt near the same offset must not buy more of them.
        const canRetry = received === 0 || sink.canRestart
        if (!isRetryable(error) || failures >= policy.maxRetries || !canRetry) throw error
        await wait(retryDelayMs(failures, error, policy.random), signal)
        failures++
      }
    }
  } catch (error) {
    await sink.close(false).catch(() => {})
    if (sink.path !== undefined && wrote) {
      const io = await loadNodeIo()
      await io.removePath(sink.path).catch(() => {})
    }
    throw error
  }
}

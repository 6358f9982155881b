// An answer's body written to a download's destination chunk by chunk: the one loop that
// download() (download.ts) and files.downloadArchive() (archive.ts) share.
import type { Exchange } from './http.js'

/** What a caller does with each chunk around its write. */
export interface BodyChunkHooks {
  /** Before the chunk is written: a write that then fails may have written part of it. */
  writing?: (chunk: Uint8Array) => void
  /** After the chunk is written (count it, report progress). */
  written: (chunk: Uint8Array) => void
}

/**
 * Writes the answer's body to `sink`, each chunk restarting the idle timeout. A failure to write
 * the destination (no such folder, disk full) is the caller's, not the connection's: the body is
 * cancelled and that error thrown as it is, so that it is never retried. A failure to read is
 * thrown as the watchdog translates it (timeout, lost connection). The watchdog stops either way.
 */
export async function writeBody(
  { response, watchdog }: Exchange,
  sink: { write(chunk: Uint8Array): Promise<void> },
  hooks: BodyChunkHooks,
): Promise<void> {
  let writeFailure: { error: unknown } | undefined
  try {
    if (!response.body) return
    const reader = response.body.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      watchdog.touch()
      hooks.writing?.(value)
      await sink.write(value).catch((error: unknown) => {
        writeFailure = { error }
        throw error
      })
      hooks.written(value)
    }
  } catch (error) {
    if (writeFailure) {
      await response.body?.cancel().catch(() => {})
      throw writeFailure.error
    }
    throw watchdog.translate(error)
  } finally {
    watchdog.stop()
  }
}

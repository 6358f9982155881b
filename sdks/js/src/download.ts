// download(): gets a grant for a link (grant.ts), streams it to a path or a stream, resumes a
// partial file with Range + If-Range, continues after a dropped connection through the same grant,
// and checks the result against the ETag (SHA-256).
import { ConfigurationError, FileshareError, IntegrityError, errorFromResponse } from './errors.js'
import { isGrantUrl, requestGrant, type Grant } from './grant.js'
import { createSha256, type Sha256 } from './hash.js'
import type { Exchange, Http } from './http.js'
import { abortReason, isRetryable, retryDelayMs, sleep } from './retry.js'
import { isNode, loadNodeIo } from './runtime.js'
import type { ApiFile, ApiLink, DownloadOptions, DownloadResult } from './types.js'
import { writeBody } from './write-body.js'

/** The part of a Node `Writable` the SDK uses (without needing Node's types). */
export interface NodeWritableLike {
  write(chunk: Uint8Array, callback?: (error?: Error | null) => void): boolean
  end(callback?: () => void): unknown
  once(event: string, listener: (...args: any[]) => void): unknown
}

/** Where a download goes: a path (Node), a Node Writable, or a web WritableStream. */
export type DownloadDestination = string | URL | WritableStream<Uint8Array> | NodeWritableLike

/**
 * A file record (its `public_link`, `sha256` and `size` are used), a link record (its `url`), a
 * link's URL, or a grant URL that a download was given less than an hour ago (`onGrant`).
 */
export type FileOrLink = (Pick<ApiFile, 'public_link'> & Partial<Pick<ApiFile, 'sha256' | 'size'>>) | Pick<ApiLink, 'url'> | string

function linkOf(fileOrLink: FileOrLink): unknown {
  if (typeof fileOrLink === 'string') return fileOrLink
  return 'public_link' in fileOrLink ? fileOrLink.public_link : (fileOrLink as { url?: unknown }).url
}

export interface Sink {
  /** Bytes already there that the download may keep (partial file). */
  existing: number
  /** Where the download starts writing (set before the first write). */
  startAt: number
  canRestart: boolean
  write(chunk: Uint8Array): Promise<void>
  restart(): Promise<void>
  /** `finished`: the download completed (a path destination is then created even when empty). */
  close(finished: boolean): Promise<void>
  /** Hashes the first `length` bytes already there. */
  hashExisting(hasher: Sha256, length: number): Promise<void>
}

function etagSha256(etag: string | null): string | undefined {
  if (!etag) return undefined
  const match = /^(?:W\/)?"([0-9a-fA-F]{64})"$/.exec(etag.trim())
  return match ? match[1]!.toLowerCase() : undefined
}

export async function openSink(destination: DownloadDestination, resume: boolean): Promise<Sink & { path?: string }> {
  if (typeof destination === 'string' || destination instanceof URL) {
    if (!isNode) throw new ConfigurationError('downloading to a path needs Node.js; pass a WritableStream')
    const io = await loadNodeIo()
    const path = destination instanceof URL ? decodeURIComponent(destination.pathname) : destination
    const existing = resume ? Math.max(0, await io.fileSize(path)) : 0
    let file: Awaited<ReturnType<typeof io.openFileSink>> | undefined
    const sink: Sink & { path?: string } = {
      path,
      existing,
      startAt: 0,
      canRestart: true,
      async write(chunk) {
        file ??= await io.openFileSink(path, this.startAt)
        await file.write(chunk)
      },
      async restart() {
        this.startAt = 0
        if (file) await file.truncate(0)
      },
      async close(finished) {
        // An empty file is still a file: create it even when no byte came.
        if (finished) file ??= await io.openFileSink(path, this.startAt)
        await file?.close()
        file = undefined
      },
      async hashExisting(hasher, length) {
        let left = length
        for await (const chunk of io.readPath(path, 0)) {
          const take = chunk.subarray(0, Math.min(left, chunk.byteLength))
          hasher.update(take)
          left -= take.byteLength
          if (left <= 0) break
        }
      },
    }
    return sink
  }
  if (typeof WritableStream !== 'undefined' && destination instanceof WritableStream) {
    const writer = destination.getWriter()
    return {
      existing: 0,
      startAt: 0,
      canRestart: false,
      write: async (chunk) => {
        await writer.ready
        await writer.write(chunk)
      },
      restart: async () => {},
      close: async (finished) => {
        if (finished) await writer.close()
        else await writer.abort().catch(() => {})
      },
      hashExisting: async () => {},
    }
  }
  if (isNode) {
    const io = await loadNodeIo()
    if (io.isNodeWritable(destination)) {
      return {
        existing: 0,
        startAt: 0,
        canRestart: false,
        write: (chunk) => io.writeToNodeStream(destination as never, chunk),
        restart: async () => {},
        close: (finished) =>
          finished ? new Promise<void>((resolve) => void (destination as NodeWritableLike).end(() => resolve())) : Promise.resolve(),
        hashExisting: async () => {},
      }
    }
  }
  throw new ConfigurationError('unsupported download destination: pass a path, a Node Writable or a WritableStream')
}

export async function download(
  http: Http,
  fileOrLink: FileOrLink,
  destination: DownloadDestination,
  options: DownloadOptions = {},
): Promise<DownloadResult> {
  const { signal, onProgress } = options
  const link = linkOf(fileOrLink)
  if (typeof link !== 'string' || !/^https?:\/\//.test(link)) throw new ConfigurationError('download needs a file or link record, or a URL')
  const file = typeof fileOrLink === 'object' && 'public_link' in fileOrLink ? fileOrLink : undefined
  let expected = file?.sha256?.toLowerCase()
  let total = file?.size
  const policy = http.options.retry
  const wait = policy.sleep ?? sleep

  const sink = await openSink(destination, options.resume ?? true)
  // The grant, asked for once, when the bytes are wanted (a partial file that is already complete needs none).
  let grant: Grant | undefined
  const granted = async (): Promise<Grant> => {
    if (grant) return grant
    if (isGrantUrl(link)) return (grant = { url: link, expiresAt: undefined })
    grant = await requestGrant(http, link, options.password, signal)
    options.onGrant?.(grant.url, grant.expiresAt)
    return grant
  }
  let hasher = await createSha256()
  let offset = 0
  let resumedFrom = 0
  try {
    if (sink.existing > 0) {
      if (expected === undefined || total === undefined) {
        // A link alone: HEAD on the grant (not counted again) tells the ETag and the size.
        const { url } = await granted()
        const head = await http.request<unknown>({ method: 'HEAD', url, auth: false, signal, headers: { accept: '*/*' } })
        expected = etagSha256(head.headers.get('etag'))
        const length = Number(head.headers.get('content-length'))
        total = Number.isSafeInteger(length) ? length : undefined
      }
      if (expected !== undefined && total !== undefined && sink.existing <= total) {
        await sink.hashExisting(hasher, sink.existing)
        offset = resumedFrom = sink.existing
      }
      if (offset === total) {
        const actual = hasher.digestHex()
        if (actual === expected) {
          onProgress?.(offset, total)
          sink.startAt = offset
          await sink.close(true)
          return { size: offset, sha256: actual, resumedFrom }
        }
      }
      if (offset > 0 && offset === total) {
        // Complete length but other bytes: start again.
        offset = resumedFrom = 0
        hasher = await createSha256()
      }
    }

    sink.startAt = offset
    const { url } = await granted()
    // Outside Node the POST's answer is already the grant's, from byte 0.
    let first: Exchange | undefined = grant?.exchange
    if (first && offset > 0) {
      await first.response.body?.cancel().catch(() => {})
      first.watchdog.stop()
      first = undefined
    }
    let failures = 0
    for (;;) {
      const headers: Record<string, string> = { accept: '*/*' }
      if (offset > 0) {
        headers.range = `bytes=${offset}-`
        if (expected) headers['if-range'] = `"${expected}"`
      }
      const before = offset
      try {
        const exchange = first ?? (await http.send({ method: 'GET', url, auth: false, headers, signal }))
        first = undefined
        const { response, watchdog } = exchange
        if (response.status === 416 && offset > 0 && sink.canRestart) {
          await http.readText(exchange)
          await sink.restart()
          offset = resumedFrom = 0
          hasher = await createSha256()
          continue
        }
        if (response.status !== 200 && response.status !== 206) {
          const text = await http.readText(exchange)
          throw errorFromResponse(response.status, response.headers, text)
        }
        const etag = etagSha256(response.headers.get('etag'))
        if (etag && expected && etag !== expected && offset === 0) expected = etag
        expected ??= etag
        if (response.status === 200) {
          total = Number(response.headers.get('content-length')) || total
          if (offset > 0) {
            // The server sent the whole file (If-Range did not match): start over.
            if (!sink.canRestart) {
              await response.body?.cancel()
              watchdog.stop()
              throw new FileshareError('the server restarted the download from byte 0, which a stream destination cannot take')
            }
            await sink.restart()
            offset = resumedFrom = 0
            hasher = await createSha256()
          }
        } else {
          const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.headers.get('content-range') ?? '')
          if (!range || Number(range[1]) !== offset) {
            await response.body?.cancel()
            watchdog.stop()
            throw new FileshareError(`unexpected Content-Range ${response.headers.get('content-range')} for a download from byte ${offset}`)
          }
          total = Number(range[3])
        }
        onProgress?.(offset, total)
        await writeBody(exchange, sink, {
          writing: (chunk) => hasher.update(chunk),
          written: (chunk) => {
            offset += chunk.byteLength
            onProgress?.(offset, total)
          },
        })
        if (total !== undefined && offset < total) {
          throw watchdog.translate(new Error(`the connection ended after ${offset} of ${total} bytes`))
        }
        break
      } catch (error) {
        if (signal?.aborted) throw abortReason(signal)
        if (offset > before) failures = 0 // progress was made: the budget starts again
        const canResume = offset === 0 || sink.canRestart || expected !== undefined
        if (!isRetryable(error) || failures >= policy.maxRetries || !canResume) throw error
        await wait(retryDelayMs(failures, error, policy.random), signal)
        failures++
      }
    }

    const actual = hasher.digestHex()
    if (expected !== undefined && actual !== expected) {
      throw new IntegrityError(
        `the downloaded bytes hash to ${actual}, not to the ETag's ${expected}` +
          (resumedFrom > 0 ? ` (the download continued a partial file of ${resumedFrom} bytes: download again with resume: false)` : ''),
        { expected, actual },
      )
    }
    await sink.close(true)
    return { size: offset, sha256: actual, resumedFrom }
  } catch (error) {
    await sink.close(false).catch(() => {})
    throw error
  }
}

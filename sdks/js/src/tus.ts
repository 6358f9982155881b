// Resumable uploads through /api/v1/uploads (tus 1.0.0 with the checksum extension).
import { BadRequestError, ConfigurationError, FileshareError, ServerError } from './errors.js'
import { checkUploadSha256, createSha256, sha256Base64, toBase64, type Sha256 } from './hash.js'
import { isReplay, type Http } from './http.js'
import { abortReason, isRetryable, isTransient, retryDelayMs, sleep, waitsTooLong } from './retry.js'
import { canStreamRequestBodies } from './runtime.js'
import { toFileRecord, type RawFile } from './records.js'
import type { FileRecord, ProgressCallback } from './types.js'
import type { UploadSource } from './upload-source.js'
import { expiryHeader } from './resources/params.js'

const TUS = { 'tus-resumable': '1.0.0' }
const SLICE = 256 * 1024

/** What OPTIONS /uploads said. */
export interface TusCapabilities {
  available: boolean
  checksumSha256: boolean
  maxSize: number | undefined
}

export async function detectTus(http: Http, signal?: AbortSignal): Promise<TusCapabilities> {
  try {
    const exchange = await http.send({ method: 'OPTIONS', url: http.url('/uploads'), auth: false, signal })
    await http.readText(exchange)
    const headers = exchange.response.headers
    const versions = (headers.get('tus-version') ?? '').split(',').map((v) => v.trim())
    const extensions = (headers.get('tus-extension') ?? '').split(',').map((v) => v.trim())
    const algorithms = (headers.get('tus-checksum-algorithm') ?? '').split(',').map((v) => v.trim())
    const maxSize = Number(headers.get('tus-max-size') ?? NaN)
    return {
      available: exchange.response.status < 300 && versions.includes('1.0.0') && extensions.includes('creation'),
      checksumSha256: extensions.includes('checksum') && algorithms.includes('sha256'),
      maxSize: Number.isFinite(maxSize) ? maxSize : undefined,
    }
  } catch (error) {
    if (signal?.aborted) throw abortReason(signal)
    return { available: false, checksumSha256: false, maxSize: undefined }
  }
}

function metadataValue(value: string): string {
  return toBase64(new TextEncoder().encode(value))
}

/** Reads a source in order into a chunk buffer, keeping what did not fit for the next chunk. */
class ChunkReader {
  private iterator: AsyncIterator<Uint8Array>
  private pending: Uint8Array | undefined
  ended = false

  constructor(source: UploadSource) {
    this.iterator = source.read(0)[Symbol.asyncIterator]()
  }

  /** Fills `buffer` from `from` on; returns the new end. */
  async fill(buffer: Uint8Array, from: number): Promise<number> {
    let end = from
    while (end < buffer.length) {
      let chunk = this.pending
      this.pending = undefined
      if (!chunk) {
        const next = await this.iterator.next()
        if (next.done) {
          this.ended = true
          break
        }
        chunk = next.value
      }
      const take = Math.min(chunk.byteLength, buffer.length - end)
      buffer.set(chunk.subarray(0, take), end)
      end += take
      if (take < chunk.byteLength) this.pending = chunk.subarray(take)
    }
    if (end === buffer.length && !this.pending && !this.ended) {
      // Peek, so that the last full chunk knows it is the last (a deferred length is declared on it).
      const next = await this.iterator.next()
      if (next.done) this.ended = true
      else this.pending = next.value
    }
    return end
  }

  /**
   * Reads the first `length` bytes into `hasher` without keeping them (the bytes an upload already
   * holds); what came past them stays pending for the next chunk.
   */
  async skip(length: number, hasher: Sha256): Promise<void> {
    let left = length
    while (left > 0) {
      const next = await this.iterator.next()
      if (next.done) {
        this.ended = true
        throw new FileshareError(
          `the source ended after ${length - left} bytes, short of the ${length} bytes the upload of this idempotency key already holds`,
        )
      }
      const take = Math.min(left, next.value.byteLength)
      hasher.update(next.value.subarray(0, take))
      if (take < next.value.byteLength) this.pending = next.value.subarray(take)
      left -= take
    }
  }

  async close(): Promise<void> {
    await this.iterator.return?.()
  }
}

function chunkStream(data: Uint8Array, onSent: (sent: number) => void): ReadableStream<Uint8Array> {
  let at = 0
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (at >= data.byteLength) return controller.close()
        const slice = data.subarray(at, Math.min(at + SLICE, data.byteLength))
        at += slice.byteLength
        controller.enqueue(slice)
        onSent(at)
      },
    },
    { highWaterMark: 0 },
  )
}

export interface TusUploadOptions {
  filename: string
  contentType: string | undefined
  /** Sent as `Fileshare-Expires-In` on the creation POST. */
  expiresIn: number | undefined
  /** The call's `Idempotency-Key` header, sent on every attempt of the creation POST. */
  idempotency: Record<string, string>
  /**
   * The key is the caller's own: an upload that fails without being refused for good (a lost
   * connection, a 5xx, an abort) is kept, for a later call with the key to continue.
   */
  keepUnfinished: boolean
  /** `true`: keep a failed upload whatever the error; `false`: always delete it; `undefined`: `keepUnfinished`'s rule. */
  keepOnFailure: boolean | undefined
  /** Continue this upload instead of creating one. */
  uploadUrl: string | undefined
  /** Told the upload's URL once it exists (created, or continued). */
  onUploadCreated: ((url: string) => void | Promise<void>) | undefined
  chunkSize: number
  checksum: boolean
  onProgress: ProgressCallback | undefined
  signal: AbortSignal | undefined
}

/**
 * Uploads a source through tus: create, then PATCH chunk after chunk with `Upload-Checksum`.
 * A chunk that fails with a retryable error, `409`, `423` or `460` is resumed where the server
 * stands (HEAD), up to `maxRetries` times in a row; each chunk that gets through resets the count.
 * A creation answered by the idempotency key's stored answer (an earlier call made the upload)
 * continues where that upload stands, hashing but not sending the bytes it already holds.
 */
export async function tusUpload(http: Http, source: UploadSource, options: TusUploadOptions): Promise<FileRecord> {
  const { signal, onProgress } = options
  const policy = http.options.retry
  const wait = policy.sleep ?? sleep
  const size = source.size
  const metadata = [`filename ${metadataValue(options.filename)}`]
  if (options.contentType) metadata.push(`filetype ${metadataValue(options.contentType)}`)

  // 1. Create, or continue the upload named.
  const createUrl = http.url('/uploads')
  const continuing = options.uploadUrl !== undefined
  const created = continuing
    ? undefined
    : await http.request<unknown>({
        method: 'POST',
        url: createUrl,
        headers: {
          ...TUS,
          ...(size === undefined ? { 'upload-defer-length': '1' } : { 'upload-length': String(size) }),
          'upload-metadata': metadata.join(','),
          ...expiryHeader(options.expiresIn),
          ...options.idempotency,
        },
        signal,
      })
  const location = created ? created.headers.get('location') : options.uploadUrl
  if (!location) throw new ServerError('the server created an upload without a Location', { status: created?.status })
  const uploadUrl = new URL(location, createUrl).href
  const replayed = created === undefined || isReplay(created.headers)
  const hasher = await createSha256()
  let fileId = created?.headers.get('fileshare-file-id') ?? null
  let offset = 0
  let finished = false
  let refused = true
  const reader = new ChunkReader(source)

  try {
    if (replayed) {
      // An upload made before (this key's, or the one named by uploadUrl): where does it stand?
      const head = await http.request<unknown>({ method: 'HEAD', url: uploadUrl, headers: TUS, signal })
      const held = Number(head.headers.get('upload-offset'))
      if (!Number.isSafeInteger(held) || held < 0)
        throw new FileshareError(`the upload names no offset (${head.headers.get('upload-offset')})`)
      const length = head.headers.get('upload-length')
      if (continuing && size !== undefined && length !== null && Number(length) !== size) {
        refused = false // nothing changed: the upload stays for its own source
        throw new ConfigurationError(`the upload at ${uploadUrl} is of ${length} bytes, the source of ${size}: pass the same source`)
      }
      fileId = head.headers.get('fileshare-file-id')
      http.options.log?.info(`continuing upload ${uploadUrl} from byte ${held}`)
      await options.onUploadCreated?.(uploadUrl)
      await reader.skip(held, hasher)
      offset = held
      onProgress?.(offset, size)
    } else {
      await options.onUploadCreated?.(uploadUrl)
    }
    if (!fileId) {
      const buffer = new Uint8Array(Math.max(1, Math.min(options.chunkSize, size ?? options.chunkSize)))
      let filled = 0 // bytes of buffer holding source bytes from `offset` on
      let failures = 0
      let needsFill = true
      for (;;) {
        if (needsFill) filled = await reader.fill(buffer, filled)
        needsFill = false
        const chunk = buffer.subarray(0, filled)
        const last = reader.ended
        const headers: Record<string, string> = {
          ...TUS,
          'upload-offset': String(offset),
          'content-type': 'application/offset+octet-stream',
        }
        // Node's fetch sends a declared length with a stream; browsers set it themselves.
        if (canStreamRequestBodies) headers['content-length'] = String(chunk.byteLength)
        if (options.checksum) headers['upload-checksum'] = `sha256 ${await sha256Base64(chunk)}`
        if (size === undefined && last) headers['upload-length'] = String(offset + chunk.byteLength)
        const chunkStart = offset
        const report = (sent: number) => onProgress?.(chunkStart + Math.min(sent, chunk.byteLength), size)
        let newOffset: number
        try {
          const body = canStreamRequestBodies ? chunkStream(chunk, report) : new Blob([chunk.slice() as Uint8Array<ArrayBuffer>])
          const answer = await http.exchangeJson<unknown>({
            method: 'PATCH',
            url: uploadUrl,
            headers,
            body,
            signal,
            onUploadProgress: onProgress ? report : undefined,
          })
          newOffset = Number(answer.headers.get('upload-offset'))
          fileId = answer.headers.get('fileshare-file-id')
          failures = 0
        } catch (error) {
          if (signal?.aborted) throw abortReason(signal)
          const conflict = error instanceof BadRequestError && [409, 423, 460].includes(error.status ?? 0)
          const resumable = isRetryable(error) || (conflict && !waitsTooLong(error))
          if (!resumable || failures >= policy.maxRetries) throw error
          failures++
          if (!(error instanceof BadRequestError && error.status === 409)) {
            await wait(retryDelayMs(failures - 1, error, policy.random), signal)
          }
          // Where does the upload stand? (HEAD is retried on its own.)
          const head = await http.request<unknown>({ method: 'HEAD', url: uploadUrl, headers: TUS, signal })
          newOffset = Number(head.headers.get('upload-offset'))
          fileId = head.headers.get('fileshare-file-id')
        }
        if (!Number.isSafeInteger(newOffset) || newOffset < chunkStart || newOffset > chunkStart + chunk.byteLength) {
          throw new FileshareError(
            `the upload stands at offset ${newOffset}, outside the chunk sent (${chunkStart}-${chunkStart + chunk.byteLength}); start a new upload`,
          )
        }
        // The bytes the server confirmed go into the whole-file SHA-256; the rest is sent again.
        const kept = newOffset - chunkStart
        hasher.update(buffer.subarray(0, kept))
        if (kept > 0 && kept < filled) buffer.copyWithin(0, kept, filled)
        filled -= kept
        offset = newOffset
        onProgress?.(offset, size)
        if (fileId) break
        if (filled === 0 && last) {
          if (size !== undefined && offset === size) break // complete, but the answer named no file
          throw new FileshareError(`the source ended at ${offset} bytes, short of its declared ${size ?? '?'} bytes`)
        }
        needsFill = kept > 0
      }
    }
    finished = true
  } catch (error) {
    if (refused) {
      const transient = isTransient(error) || !(error instanceof FileshareError)
      refused = options.keepOnFailure === undefined ? !(options.keepUnfinished && transient) : !options.keepOnFailure
    }
    throw error
  } finally {
    await reader.close().catch(() => {})
    if (!finished && !refused) http.options.log?.info(`kept the unfinished upload ${uploadUrl}`)
    if (!finished && refused) {
      // Give the daily upload slot back; best effort, the server also expires unfinished uploads.
      const abandon = new AbortController()
      const timer = setTimeout(() => abandon.abort(), 5000)
      await http
        .send({ method: 'DELETE', url: uploadUrl, headers: TUS, signal: abandon.signal })
        .then((exchange) => http.readText(exchange))
        .catch(() => {})
        .finally(() => clearTimeout(timer))
    }
  }

  // 3. The file the upload became, and its checksum.
  const status = await http.request<{ upload?: { file?: RawFile | null } }>({ method: 'GET', url: uploadUrl, signal })
  const raw = status.data?.upload?.file
  if (!raw) throw new ServerError('the upload completed but the server names no file', { status: status.status })
  const file = toFileRecord(raw)
  checkUploadSha256(file, hasher.digestHex(), created !== undefined && isReplay(created.headers))
  return file
}

export function assertTus(capabilities: TusCapabilities): void {
  if (!capabilities.available) throw new ConfigurationError('the server does not offer resumable uploads (OPTIONS /uploads)')
}

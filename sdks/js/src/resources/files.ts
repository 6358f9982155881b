// client.files: upload, list, iterate, get, delete.
import { ConfigurationError, IntegrityError } from '../errors.js'
import { createSha256 } from '../hash.js'
import type { Http } from '../http.js'
import { multipartFrame, multipartStream } from '../multipart.js'
import { toFileList, toFileRecord, type RawFile } from '../records.js'
import { withRetries } from '../retry.js'
import { canStreamRequestBodies } from '../runtime.js'
import { assertTus, tusUpload, type TusCapabilities } from '../tus.js'
import type { FileList, FileRecord, FileUpdate, RequestOptions, UploadOptions } from '../types.js'
import { expiryHeader, jsonBody, resourceId } from './params.js'
import { toUploadSource, type UploadInput, type UploadSource } from '../upload-source.js'

export interface FilesSettings {
  resumableThreshold: number
  chunkSize: number
  tus: (signal?: AbortSignal) => Promise<TusCapabilities>
}

function fileId(id: number | string): string {
  return resourceId(id, 'file')
}

async function collect(source: UploadSource): Promise<Blob> {
  const parts: Uint8Array<ArrayBuffer>[] = []
  for await (const chunk of source.read(0)) parts.push(chunk.slice())
  return new Blob(parts)
}

export class Files {
  /** @internal */
  constructor(
    private readonly http: Http,
    private readonly settings: FilesSettings,
  ) {}

  /**
   * Uploads a file and returns its record. `source`: a path (Node), bytes, a Blob/File, a web
   * ReadableStream, a Node Readable or an (async) iterable of bytes. Large sources (at least
   * `resumableThreshold`) go through resumable uploads when the server offers them. The SHA-256
   * of the bytes sent is compared with the server's: a mismatch throws {@link IntegrityError}.
   */
  async upload(source: UploadInput, options: UploadOptions = {}): Promise<FileRecord> {
    const prepared = await toUploadSource(source, options.size)
    const filename = options.filename ?? prepared.name ?? 'file'
    if (options.chunkSize !== undefined && !(Number.isSafeInteger(options.chunkSize) && options.chunkSize > 0)) {
      throw new ConfigurationError('chunkSize must be a positive integer')
    }
    let useTus = options.resumable === true
    if (options.resumable === undefined) {
      const large = prepared.size !== undefined && prepared.size >= this.settings.resumableThreshold
      // Browsers cannot stream a request body over HTTP/1.1: a stream is sent in chunks instead.
      const unbufferedStream = !canStreamRequestBodies && prepared.blob === undefined
      if (large || unbufferedStream) useTus = (await this.settings.tus(options.signal)).available
    }
    if (useTus) {
      const capabilities = await this.settings.tus(options.signal)
      assertTus(capabilities)
      return tusUpload(this.http, prepared, {
        filename,
        contentType: options.contentType,
        expiresIn: options.expires_in,
        chunkSize: options.chunkSize ?? this.settings.chunkSize,
        checksum: capabilities.checksumSha256,
        onProgress: options.onProgress,
        signal: options.signal,
      })
    }
    return this.uploadMultipart(prepared, filename, options)
  }

  private async uploadMultipart(source: UploadSource, filename: string, options: UploadOptions): Promise<FileRecord> {
    const { onProgress, signal } = options
    const frame = multipartFrame(filename, options.contentType ?? 'application/octet-stream')
    const url = this.http.url('/files/upload')
    const total = source.size
    const answer = await withRetries(
      this.http.options.retry,
      signal,
      async () => {
        const hasher = await createSha256()
        const headers: Record<string, string> = { 'content-type': frame.contentType, ...expiryHeader(options.expires_in) }
        let hashing: Promise<void> | undefined
        let body
        if (canStreamRequestBodies) {
          body = multipartStream(frame, source, hasher, (sent) => onProgress?.(sent, total))
          // A declared length lets the server refuse a file that is too large before it is sent.
          if (total !== undefined) headers['content-length'] = String(frame.head.byteLength + total + frame.tail.byteLength)
        } else {
          const blob = source.blob ?? (await collect(source))
          body = new Blob([frame.head as Uint8Array<ArrayBuffer>, blob, frame.tail as Uint8Array<ArrayBuffer>])
          hashing = (async () => {
            const reader = blob.stream().getReader()
            for (;;) {
              const { done, value } = await reader.read()
              if (done) break
              hasher.update(value)
            }
          })()
        }
        onProgress?.(0, total)
        const size = total ?? 0
        const result = await this.http.exchangeJson<RawFile>({
          method: 'POST',
          url,
          headers,
          body,
          signal,
          onUploadProgress: onProgress
            ? (loaded) => onProgress(Math.max(0, Math.min(size, loaded - frame.head.byteLength)), total)
            : undefined,
        })
        await hashing
        return { result, hasher }
      },
      () => source.replayable,
    )
    const file = toFileRecord(answer.result.data)
    const actual = answer.hasher.digestHex()
    if (file.sha256 !== actual) {
      throw new IntegrityError(`the server stored file ${file.file_id} with SHA-256 ${file.sha256}, but the bytes sent hash to ${actual}`, {
        expected: file.sha256,
        actual,
      })
    }
    onProgress?.(file.size, total ?? file.size)
    return file
  }

  /** One page of the account's files, newest first. */
  async list(options: { page?: number | undefined; limit?: number | undefined } & RequestOptions = {}): Promise<FileList> {
    const { data } = await this.http.request<Parameters<typeof toFileList>[0]>({
      method: 'GET',
      url: this.http.url('/files', { page: options.page, limit: options.limit }),
      signal: options.signal,
    })
    return toFileList(data)
  }

  /**
   * Every file of the account, page after page (`limit` per request, default 100). A file is
   * never yielded twice, even when uploads during the iteration shift the pages.
   */
  async *iterate(options: { limit?: number | undefined } & RequestOptions = {}): AsyncGenerator<FileRecord, void, undefined> {
    const limit = options.limit ?? 100
    const seen = new Set<number>()
    for (let page = 1; ; page++) {
      const { files, pagination } = await this.list({ page, limit, signal: options.signal })
      for (const file of files) {
        if (seen.has(file.file_id)) continue
        seen.add(file.file_id)
        yield file
      }
      if (files.length < limit || page >= pagination.pages) return
    }
  }

  /** One file's record. */
  async get(id: number | string, options: RequestOptions = {}): Promise<FileRecord> {
    const { data } = await this.http.request<{ file: RawFile }>({
      method: 'GET',
      url: this.http.url(`/files/${fileId(id)}`),
      signal: options.signal,
    })
    return toFileRecord(data.file)
  }

  /**
   * Changes a file: its expiry (`expires_in` seconds from now, or `expires_at`; `expires_at: null`
   * removes it) and its name. Answers the new record.
   */
  async update(id: number | string, changes: FileUpdate & RequestOptions = {}): Promise<FileRecord> {
    const data = await this.http.json<{ file: RawFile }>('PATCH', `/files/${fileId(id)}`, {
      body: jsonBody(changes),
      signal: changes.signal,
    })
    return toFileRecord(data.file)
  }

  /** Deletes a file; its links stop working at once. */
  async delete(id: number | string, options: RequestOptions = {}): Promise<void> {
    await this.http.request<unknown>({ method: 'DELETE', url: this.http.url(`/files/${fileId(id)}`), signal: options.signal })
  }
}

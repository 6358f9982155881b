// client.files: upload, list, iterate, get, delete.
import { downloadArchive } from '../archive.js'
import type { DownloadDestination } from '../download.js'
import { ConfigurationError, FileshareError } from '../errors.js'
import { checkUploadSha256, createSha256, sha256OfSource } from '../hash.js'
import { call, type APIPromise } from '../api-promise.js'
import { isReplay, type Http } from '../http.js'
import { multipartFrame, multipartStream } from '../multipart.js'
import { toFileList, toFileRecord, type RawFile } from '../records.js'
import { withRetries } from '../retry.js'
import { canStreamRequestBodies } from '../runtime.js'
import { assertTus, tusUpload, type TusCapabilities } from '../tus.js'
import type {
  ArchiveDownloadOptions,
  ArchiveDownloadResult,
  BulkDeleteResult,
  IdempotencyOptions,
  FileList,
  FileQuery,
  FileRecord,
  IterateOptions,
  FileUpdate,
  ListOptions,
  RequestOptions,
  UploadOptions,
} from '../types.js'
import { byUploadDate, expiryHeader, idempotencyHeader, jsonBody, listOf, resourceId } from './params.js'

/** The most files one {@link Files.deleteMany} takes (the server's limit). */
export const MAX_BULK_DELETE = 100
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
   *
   * Every attempt of the call carries one `Idempotency-Key` (`idempotencyKey`, else a new UUID):
   * a retry after a lost answer gets the stored file back instead of storing it twice. With your
   * own key a later call is the same upload: it returns the first call's file, or continues its
   * resumable upload where it stands.
   */
  upload(source: UploadInput, options: UploadOptions = {}): APIPromise<FileRecord> {
    return call(this.http, options, async (http) => {
      const idempotency = idempotencyHeader(options.idempotencyKey)
      const prepared = await toUploadSource(source, options.size)
      const filename = options.filename ?? prepared.name ?? 'file'
      if (options.chunkSize !== undefined && !(Number.isSafeInteger(options.chunkSize) && options.chunkSize > 0)) {
        throw new ConfigurationError('chunkSize must be a positive integer')
      }
      if (options.uploadUrl !== undefined && options.resumable === false) {
        throw new ConfigurationError('uploadUrl continues a resumable upload: not with resumable: false')
      }
      let useTus = options.resumable === true || options.uploadUrl !== undefined
      if (options.resumable === undefined) {
        const large = prepared.size !== undefined && prepared.size >= this.settings.resumableThreshold
        // Browsers cannot stream a request body over HTTP/1.1: a stream is sent in chunks instead.
        const unbufferedStream = !canStreamRequestBodies && prepared.blob === undefined
        if (large || unbufferedStream) useTus = (await this.settings.tus(options.signal)).available
      }
      if (useTus) {
        const capabilities = await this.settings.tus(options.signal)
        assertTus(capabilities)
        return tusUpload(http, prepared, {
          filename,
          contentType: options.contentType,
          expiresIn: options.expires_in,
          idempotency,
          keepUnfinished: options.idempotencyKey !== undefined || options.onUploadCreated !== undefined || options.uploadUrl !== undefined,
          keepOnFailure: options.keepOnFailure,
          uploadUrl: options.uploadUrl,
          onUploadCreated: options.onUploadCreated,
          chunkSize: options.chunkSize ?? this.settings.chunkSize,
          checksum: capabilities.checksumSha256,
          onProgress: options.onProgress,
          signal: options.signal,
        })
      }
      return this.uploadMultipart(http, prepared, filename, idempotency, options)
    })
  }

  private async uploadMultipart(
    http: Http,
    source: UploadSource,
    filename: string,
    idempotency: Record<string, string>,
    options: UploadOptions,
  ): Promise<FileRecord> {
    const { onProgress, signal } = options
    const frame = multipartFrame(filename, options.contentType ?? 'application/octet-stream')
    const url = http.url('/files/upload')
    const total = source.size
    const answer = await withRetries(
      http.options.retry,
      signal,
      async () => {
        const hasher = await createSha256()
        const headers: Record<string, string> = {
          'content-type': frame.contentType,
          ...expiryHeader(options.expires_in),
          ...idempotency,
        }
        let hashing: Promise<void> | undefined
        let body
        // Whether every byte went into the hasher: a replayed answer may come before the body went.
        let hashedAll = !canStreamRequestBodies
        if (canStreamRequestBodies) {
          body = multipartStream(
            frame,
            source,
            hasher,
            (sent) => onProgress?.(sent, total),
            () => (hashedAll = true),
          )
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
        const result = await http.exchangeJson<RawFile>({
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
        return { result, actual: hashedAll ? hasher.digestHex() : undefined }
      },
      () => source.replayable,
    )
    const file = toFileRecord(answer.result.data)
    // The server replayed the key's first answer without reading the body: hash the source apart,
    // where it can be read again (a one-shot stream cannot be checked then).
    const actual = answer.actual ?? (source.replayable ? await sha256OfSource(source) : undefined)
    if (actual !== undefined) checkUploadSha256(file, actual, isReplay(answer.result.headers))
    onProgress?.(file.size, total ?? file.size)
    return file
  }

  /**
   * One page of the account's files (`limit` 1 to 100), newest first unless `sort`/`order` say
   * otherwise, only those whose name contains `q` (any case), of a `type` and in a `state` when
   * given (several values of one: any of them; different filters: all of them): page `page` (from 1), or
   * the files after `before_id` (a page's `pagination.next_before_id`), which no upload or deletion
   * meanwhile can shift. Not both (a `BadRequestError`); `before_id` only with the orders by
   * upload date (`sort` `upload_date`, either `order`).
   */
  list(options: ListOptions & RequestOptions = {}): APIPromise<FileList> {
    return call(this.http, options, async (http) => {
      const { data } = await http.request<Parameters<typeof toFileList>[0]>({
        method: 'GET',
        url: http.url('/files', {
          page: options.page,
          limit: options.limit,
          before_id: options.before_id,
          q: options.q,
          sort: options.sort,
          order: options.order,
          type: listOf(options.type),
          state: listOf(options.state),
        }),
        signal: options.signal,
      })
      return toFileList(data)
    })
  }

  /**
   * Every file of the account (only those whose name contains `q`, of a `type` and in a `state`,
   * when given) in the order of `sort` and `order` (newest first by default), `limit` per request
   * (default 100), the same search, filters and order on every page. Ordered by upload date, each page is asked for with the
   * `next_before_id` of the one before: files uploaded or deleted meanwhile (even the ones
   * yielded, deleted as they come) shift nothing, and no file is yielded twice. The other orders
   * go by page number: no file is yielded twice, but one deleted or renamed meanwhile can shift
   * another out of view.
   */
  async *iterate(options: IterateOptions & RequestOptions = {}): AsyncGenerator<FileRecord, void, undefined> {
    const { limit = 100, page: _page, before_id: _before, q, sort, order, type, state, ...call } = options as ListOptions & RequestOptions
    const query = { limit, q, sort, order, type, state }
    let result = await this.list({ ...call, ...query })
    if (!byUploadDate(query) || !('next_before_id' in result.pagination)) {
      yield* this.iterateByPage(result, query, call)
      return
    }
    const ascending = order === 'asc'
    const after = (id: number, mark: number) => (ascending ? id > mark : id < mark)
    let last: number | undefined // the last file yielded: every later one comes after it
    let asked: number | undefined
    for (;;) {
      for (const file of result.files) {
        if (last !== undefined && !after(file.file_id, last)) continue
        last = file.file_id
        yield file
      }
      const next = result.pagination.next_before_id
      if (next === null) return
      if (asked !== undefined && !after(next, asked))
        throw new FileshareError(`the server's next_before_id ${next} does not move past ${asked}`)
      asked = next
      result = await this.list({ ...call, ...query, before_id: next })
    }
  }

  /** Page numbers: for the orders without `before_id` (and an older server): no file twice, but a deletion meanwhile can shift one out of view. */
  private async *iterateByPage(
    first: FileList,
    query: FileQuery & { limit: number },
    call: RequestOptions,
  ): AsyncGenerator<FileRecord, void, undefined> {
    const seen = new Set<number>()
    let result = first
    for (let page = 1; ; page++) {
      for (const file of result.files) {
        if (seen.has(file.file_id)) continue
        seen.add(file.file_id)
        yield file
      }
      if (result.files.length < query.limit || page >= result.pagination.pages) return
      result = await this.list({ ...call, ...query, page: page + 1 })
    }
  }

  /** One file's record. */
  get(id: number | string, options: RequestOptions = {}): APIPromise<FileRecord> {
    return call(this.http, options, async (http) => {
      const { data } = await http.request<{ file: RawFile }>({
        method: 'GET',
        url: http.url(`/files/${fileId(id)}`),
        signal: options.signal,
      })
      return toFileRecord(data.file)
    })
  }

  /**
   * Changes a file: its expiry (`expires_in` seconds from now, or `expires_at`; `expires_at: null`
   * removes it) and its name. Answers the new record.
   */
  update(id: number | string, changes: FileUpdate & RequestOptions = {}): APIPromise<FileRecord> {
    return call(this.http, changes, async (http) => {
      const data = await http.json<{ file: RawFile }>('PATCH', `/files/${fileId(id)}`, {
        body: jsonBody(changes),
        signal: changes.signal,
      })
      return toFileRecord(data.file)
    })
  }

  /** Deletes a file; its links stop working at once. */
  delete(id: number | string, options: RequestOptions = {}): APIPromise<void> {
    return call(this.http, options, async (http) => {
      await http.request<unknown>({ method: 'DELETE', url: http.url(`/files/${fileId(id)}`), signal: options.signal })
    })
  }

  /**
   * Deletes several files in one call (`POST /files/delete`, scope `files:delete`): 1 to 100
   * distinct ids, each deleted as {@link delete} deletes one (wholly or not at all, with its audit
   * row and webhook event). Answers which were deleted and which name none of your files, each in
   * the order given. Every attempt carries the call's `Idempotency-Key` (`idempotencyKey`, else a
   * new UUID): a retry after a lost answer gets the first answer back.
   */
  deleteMany(ids: ReadonlyArray<number | string>, options: IdempotencyOptions & RequestOptions = {}): APIPromise<BulkDeleteResult> {
    return call(this.http, options, async (http) => {
      if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_BULK_DELETE) {
        throw new ConfigurationError(`deleteMany takes 1 to ${MAX_BULK_DELETE} file ids`)
      }
      const body = { ids: ids.map((id) => Number(fileId(id))) }
      const headers = idempotencyHeader(options.idempotencyKey)
      const data = await http.json<{ deleted?: unknown; not_found?: unknown }>('POST', '/files/delete', {
        body,
        headers,
        signal: options.signal,
      })
      if (!Array.isArray(data?.deleted) || !Array.isArray(data.not_found))
        throw new FileshareError('the answer holds no deleted and not_found lists')
      return { deleted: data.deleted as number[], not_found: data.not_found as number[] }
    })
  }

  /**
   * Downloads several files as one ZIP (`POST /files/archive`) to a path (Node),
   * a Node Writable or a WritableStream: one entry per id, in the order given, stored uncompressed,
   * names made safe and unique (`a.txt`, `a (2).txt`). 1 to 1000 distinct ids; one that is not
   * yours, or does not exist, throws {@link NotFoundError} before any byte. Nothing counts as a
   * download. A connection lost mid-archive starts it again from the first byte (a path; at most
   * `maxRetries` times in all, since nothing resumes) or throws; a path that did not get the whole
   * archive is removed. The key needs both `files:read` and `links:write` (a key that can list files
   * and make public links can fetch their bytes anyway); a key without `links:write` gets
   * {@link InsufficientScopeError} naming it.
   */
  downloadArchive(
    ids: ReadonlyArray<number | string>,
    destination: DownloadDestination,
    options: ArchiveDownloadOptions = {},
  ): APIPromise<ArchiveDownloadResult> {
    return call(this.http, options, (http) => downloadArchive(http, ids, destination, options))
  }
}

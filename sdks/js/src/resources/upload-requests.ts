// client.uploadRequests: asking someone without an account for files (scope requests:manage).
// A request has a URL (`<public URL>/r/<token>`) to give the guest; what the guest sends lands in
// the account, each file with `source: { type: 'upload_request', request_id }`.
import { FileshareError } from '../errors.js'
import { call, type APIPromise } from '../api-promise.js'
import type { Http } from '../http.js'
import { toUploadRequest, toUploadRequestFileList, type RawUploadRequest } from '../records.js'
import type {
  FileRecord,
  IdempotencyOptions,
  RequestOptions,
  UploadRequest,
  UploadRequestCreateParams,
  UploadRequestFileList,
  UploadRequestFileListOptions,
  UploadRequestUpdateParams,
} from '../types.js'
import { beforeIdOption, idempotencyHeader, jsonBody, resourceId } from './params.js'

const requestPath = (id: number | string) => `/upload-requests/${resourceId(id, 'upload request')}`

export class UploadRequests {
  /** @internal */
  constructor(private readonly http: Http) {}

  /**
   * A new upload request: give its `url` to the guest. `label` and one of `expires_in` (seconds)
   * or `expires_at` are required; `max_files`, `max_file_size`, `max_total_size`, `password`,
   * `file_expires_in` and `message` are optional. Every attempt carries the call's
   * `Idempotency-Key`, so a retry after a lost answer gets the request made the first time. A field
   * the server refuses is a `BadRequestError` (`invalid_parameter`, its message naming the field).
   */
  create(params: UploadRequestCreateParams & IdempotencyOptions & RequestOptions): APIPromise<UploadRequest> {
    return call(this.http, params, async (http) => {
      const headers = idempotencyHeader(params.idempotencyKey)
      const data = await http.json<{ upload_request: RawUploadRequest }>('POST', '/upload-requests', {
        body: jsonBody(params),
        headers,
        signal: params.signal,
      })
      return toUploadRequest(data.upload_request)
    })
  }

  /** The account's upload requests, newest first (every status: active, full, expired, closed). */
  list(options: RequestOptions = {}): APIPromise<UploadRequest[]> {
    return call(this.http, options, async (http) => {
      const data = await http.json<{ upload_requests: RawUploadRequest[] }>('GET', '/upload-requests', { signal: options.signal })
      if (!Array.isArray(data?.upload_requests)) throw new FileshareError('the answer holds no upload request list')
      return data.upload_requests.map(toUploadRequest)
    })
  }

  /** One upload request, with its counts (`files_received`, `bytes_received`) and `status`. */
  get(requestId: number | string, options: RequestOptions = {}): APIPromise<UploadRequest> {
    return call(this.http, options, async (http) => {
      const data = await http.json<{ upload_request: RawUploadRequest }>('GET', requestPath(requestId), { signal: options.signal })
      return toUploadRequest(data.upload_request)
    })
  }

  /**
   * Changes an upload request: the fields given are set, the others kept; `null` removes the
   * message, the password or a limit. A later expiry opens an expired request again; a closed one
   * stays closed.
   */
  update(requestId: number | string, changes: UploadRequestUpdateParams & RequestOptions = {}): APIPromise<UploadRequest> {
    return call(this.http, changes, async (http) => {
      const data = await http.json<{ upload_request: RawUploadRequest }>('PATCH', requestPath(requestId), {
        body: jsonBody(changes),
        signal: changes.signal,
      })
      return toUploadRequest(data.upload_request)
    })
  }

  /**
   * Deletes an upload request: its URL stops working at once. The files it received stay in the
   * account. Answers the request as it was (status `closed`).
   */
  delete(requestId: number | string, options: RequestOptions = {}): APIPromise<UploadRequest> {
    return call(this.http, options, async (http) => {
      const data = await http.json<{ upload_request: RawUploadRequest }>('DELETE', requestPath(requestId), { signal: options.signal })
      return toUploadRequest(data.upload_request)
    })
  }

  /**
   * Closes an upload request (status `closed`): it takes no more files, and stays listed with
   * what it received. Closing a closed request changes nothing, so the call is retried like a GET.
   */
  close(requestId: number | string, options: RequestOptions = {}): APIPromise<UploadRequest> {
    return call(this.http, options, async (http) => {
      const data = await http.json<{ upload_request: RawUploadRequest }>('POST', `${requestPath(requestId)}/close`, {
        signal: options.signal,
      })
      return toUploadRequest(data.upload_request)
    })
  }

  /**
   * One page of the files a request received, newest first (`limit` 1 to 100, default 20; the
   * files older than `before_id`, a page's `pagination.next_before_id`). File records, each with
   * `source: { type: 'upload_request', request_id }`; files deleted since are not listed.
   */
  files(requestId: number | string, options: UploadRequestFileListOptions & RequestOptions = {}): APIPromise<UploadRequestFileList> {
    return call(this.http, options, async (http) => {
      const query = { limit: options.limit, before_id: beforeIdOption(options) }
      const { data } = await http.request<Parameters<typeof toUploadRequestFileList>[0]>({
        method: 'GET',
        url: http.url(`${requestPath(requestId)}/files`, query),
        signal: options.signal,
      })
      return toUploadRequestFileList(data)
    })
  }

  /**
   * Every file a request received, newest first, `limit` per request (default 100), each page
   * asked for with the `next_before_id` of the one before: no file is yielded twice.
   */
  async *iterateFiles(
    requestId: number | string,
    options: Omit<UploadRequestFileListOptions, 'before_id' | 'beforeId'> & RequestOptions = {},
  ): AsyncGenerator<FileRecord, void, undefined> {
    const { limit = 100, before_id: _before, beforeId: _camel, ...rest } = options as UploadRequestFileListOptions & RequestOptions
    let result = await this.files(requestId, { ...rest, limit })
    let below: number | undefined // the last file yielded: every later one is older
    let asked: number | undefined
    for (;;) {
      for (const file of result.files) {
        if (below !== undefined && file.file_id >= below) continue
        below = file.file_id
        yield file
      }
      const next = result.pagination.next_before_id
      if (next === null || next === undefined) return
      if (asked !== undefined && next >= asked) throw new FileshareError(`the server's next_before_id ${next} does not move past ${asked}`)
      asked = next
      result = await this.files(requestId, { ...rest, limit, before_id: next })
    }
  }
}

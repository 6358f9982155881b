// Record types. The `Api*` types mirror the components of the server's OpenAPI document
// (GET /api/v1/openapi.json) field for field; test/openapi-drift.test.ts fails when they drift.

/** Field names of the `File` schema, in the order of the OpenAPI document. */
export const FILE_FIELDS = [
  'file_id',
  'filename',
  'size',
  'upload_date',
  'download_count',
  'public_link',
  'content_type',
  'sha256',
] as const
export const PAGINATION_FIELDS = ['page', 'limit', 'total', 'pages'] as const
export const STATS_FIELDS = ['total_files', 'total_size', 'total_downloads', 'uploads_today'] as const
export const LIMITS_FIELDS = ['max_file_size', 'daily_uploads', 'requests_per_minute', 'requests_per_day'] as const

/** A file as the API returns it (`components.schemas.File`). */
export interface ApiFile {
  /** Unique across the service, never reused. */
  file_id: number
  filename: string
  /** Bytes. */
  size: number
  /** UTC, `YYYY-MM-DD HH:MM:SS`. See {@link FileRecord.uploaded_at} for a `Date`. */
  upload_date: string
  download_count: number
  /** `<public URL>/download/<token>`; works without a key. */
  public_link: string
  content_type: string
  /** Lower-case hex SHA-256 of the content; also the download `ETag`. */
  sha256: string
}

/** `components.schemas.Pagination`. */
export interface ApiPagination {
  page: number
  limit: number
  /** Number of files the account has now. */
  total: number
  /** `ceil(total / limit)`; 0 when there are no files. */
  pages: number
}

/** `components.schemas.Stats`. */
export interface ApiStats {
  total_files: number
  total_size: number
  total_downloads: number
  uploads_today: number
}

/** `components.schemas.Limits`. */
export interface ApiLimits {
  max_file_size: number
  daily_uploads: number
  requests_per_minute: number
  requests_per_day: number
}

/** The error codes of `components.schemas.Error` (`error.code`). */
export const ERROR_CODES = [
  'missing_file',
  'invalid_parameter',
  'invalid_request',
  'unauthorized',
  'plan_not_supported',
  'file_too_large',
  'daily_upload_limit_exceeded',
  'not_found',
  'upload_expired',
  'tus_version_not_supported',
  'upload_offset_mismatch',
  'upload_length_exceeded',
  'unsupported_media_type',
  'upload_locked',
  'checksum_mismatch',
  'range_not_satisfiable',
  'rate_limited',
  'internal_error',
  'service_unavailable',
  'insufficient_storage',
] as const
export type ErrorCode = (typeof ERROR_CODES)[number]

/** A file record: the API's fields plus `uploaded_at`, the upload date as a `Date` (UTC). */
export interface FileRecord extends Readonly<ApiFile> {
  /** `upload_date` as a `Date` (the API's value is UTC). */
  readonly uploaded_at: Date
}

/** The answer of `files.list()`. */
export interface FileList {
  readonly files: FileRecord[]
  readonly pagination: Readonly<ApiPagination>
}

/** The answer of `stats()`. Fields the SDK does not know yet are kept. */
export interface StatsResult {
  readonly stats: Readonly<ApiStats> & Readonly<Record<string, unknown>>
  readonly limits: Readonly<ApiLimits> & Readonly<Record<string, unknown>>
  /** Lower-case plan name: `pro`, `business` or `enterprise`. */
  readonly plan: string
  readonly [field: string]: unknown
}

/** `(bytesSent, totalBytes)`; `totalBytes` is `undefined` for a stream of unknown length. */
export type ProgressCallback = (bytesDone: number, totalBytes: number | undefined) => void

/** Options of {@link Files.upload}. */
export interface UploadOptions {
  /** The file name to store. Default: the path's or File's name, else `file`. */
  filename?: string | undefined
  /** Sent as the part's type and tus `filetype`; the server derives `content_type` from the name. */
  contentType?: string | undefined
  /** Called as bytes go out: `(bytesSent, totalBytes)`. */
  onProgress?: ProgressCallback | undefined
  /**
   * `true`: always use resumable uploads (tus); `false`: always the one-request multipart upload;
   * unset: resumable when the server offers it and the source has at least `resumableThreshold` bytes.
   */
  resumable?: boolean | undefined
  /** Length of a stream source, when known (paths, bytes and Blobs know theirs). */
  size?: number | undefined
  /** Chunk size of resumable uploads. Default: the client's `chunkSize` (16 MiB). */
  chunkSize?: number | undefined
  signal?: AbortSignal | undefined
}

/** Options of {@link Fileshare.download}. */
export interface DownloadOptions {
  /** Called as bytes arrive: `(bytesReceived, totalBytes)`, counting a resumed part. */
  onProgress?: ProgressCallback | undefined
  /** Continue a partial destination file with `Range` + `If-Range` (default true). */
  resume?: boolean | undefined
  signal?: AbortSignal | undefined
}

/** What {@link Fileshare.download} did. */
export interface DownloadResult {
  /** Bytes in the finished file. */
  readonly size: number
  /** Hex SHA-256 of the finished file, equal to the link's `ETag`. */
  readonly sha256: string
  /** Bytes that were already there and were kept (0 when the download started at the beginning). */
  readonly resumedFrom: number
}

/** Per-call options of the calls that take no other options. */
export interface RequestOptions {
  signal?: AbortSignal | undefined
}

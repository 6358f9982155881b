import { Type, type Static } from 'typebox'
import { API_ERROR_CODES } from '../errors.js'

const SafeId = (description: string) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description })

export const ErrorBody = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      code: Type.Enum(API_ERROR_CODES, {
        description: 'Stable snake_case error code: branch on it, not on `message`. Each status lists the codes it can carry.',
      }),
      message: Type.String(),
      request_id: Type.Optional(Type.String({ description: 'Present on 5xx errors, for the operator.' })),
    }),
  },
  { title: 'Error' },
)

export const FileObject = Type.Object(
  {
    file_id: Type.Integer({ description: 'Unique across the service, never reused.' }),
    filename: Type.String(),
    size: Type.Integer({ description: 'Bytes.' }),
    upload_date: Type.String({ description: 'UTC, YYYY-MM-DD HH:MM:SS.', examples: ['2026-11-22 09:30:00'] }),
    download_count: Type.Integer(),
    public_link: Type.String({ format: 'uri', description: '<public base URL>/download/<token>' }),
    content_type: Type.String(),
    sha256: Type.String({ description: 'Hex SHA-256 of the content; also the download ETag.' }),
  },
  { title: 'File' },
)
export type FileObject = Static<typeof FileObject>

/** The upload's body, for the OpenAPI document only: the route streams it with its own parser. */
export const UploadForm = Type.Object(
  {
    file: Type.String({
      format: 'binary',
      contentMediaType: 'application/octet-stream',
      description: 'The file. Exactly one part named `file`, with a `filename`; other fields are ignored.',
    }),
  },
  { title: 'UploadForm', additionalProperties: true },
)

/** The bytes of a download (200 and 206). */
export const FileContent = Type.String({
  format: 'binary',
  contentMediaType: 'application/octet-stream',
  description: 'The stored bytes, or the requested range of them.',
})

export const UploadResponse = Type.Object({
  success: Type.Literal(true),
  file_id: Type.Integer(),
  public_link: Type.String({ format: 'uri' }),
  size: Type.Integer(),
  filename: Type.String(),
  upload_date: Type.String(),
  download_count: Type.Integer(),
  content_type: Type.String(),
  sha256: Type.String(),
})

export const LIST_DEFAULTS = { page: 1, limit: 20 } as const

export const ListQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, default: LIST_DEFAULTS.page })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: LIST_DEFAULTS.limit })),
  },
  { additionalProperties: true },
)

export const Pagination = Type.Object(
  {
    page: Type.Integer(),
    limit: Type.Integer(),
    total: Type.Integer({ description: 'Total number of files of the account.' }),
    pages: Type.Integer({ description: 'ceil(total / limit); 0 when there are no files.' }),
  },
  { title: 'Pagination' },
)

export const ListResponse = Type.Object({
  success: Type.Literal(true),
  files: Type.Array(FileObject),
  pagination: Pagination,
})

export const FileIdParams = Type.Object({ file_id: SafeId('The file_id of an upload.') })

export const DetailResponse = Type.Object({ success: Type.Literal(true), file: FileObject })

export const DeleteResponse = Type.Object({ success: Type.Literal(true), message: Type.String() })

export const Stats = Type.Object(
  {
    total_files: Type.Integer(),
    total_size: Type.Integer({ description: 'Bytes.' }),
    total_downloads: Type.Integer({ description: 'Sum of download_count over the current files.' }),
    uploads_today: Type.Integer({
      description: 'Daily upload slots used since 00:00 UTC: successful uploads, plus resumable uploads still open.',
    }),
  },
  { title: 'Stats' },
)

export const Limits = Type.Object(
  {
    max_file_size: Type.Integer({ description: 'Bytes.' }),
    daily_uploads: Type.Integer(),
    requests_per_minute: Type.Integer(),
    requests_per_day: Type.Integer(),
  },
  { title: 'Limits' },
)

export const StatsResponse = Type.Object({
  success: Type.Literal(true),
  stats: Stats,
  limits: Limits,
  plan: Type.String({ description: 'Lower-case plan name: pro, business or enterprise.' }),
})

// No length bound here: a link of any shape that names no file is a 404, decided by the service.
export const TokenParams = Type.Object({ token: Type.String() })

/** The error responses every authenticated endpoint can give, for the OpenAPI document. */
export const authErrors = {
  401: ErrorBody,
  403: ErrorBody,
  429: ErrorBody,
  500: ErrorBody,
  /** A backend (database, storage, Redis) cannot be reached right now. */
  503: ErrorBody,
}

/**
 * Errors of requests that carry a body the route does not take (every API call but the upload):
 * 400 for malformed JSON, 413 over 1 MiB, 415 for another content type (docs/api.md, Errors).
 */
export const bodyErrors = {
  400: ErrorBody,
  413: ErrorBody,
  415: ErrorBody,
}

/** A resumable upload's id, as it appears in its Location. */
export const UploadIdParams = Type.Object({ upload_id: Type.String({ description: "The id at the end of the upload's Location." }) })

/** GET /api/v1/uploads/{upload_id}: where a resumable upload stands (ours, not tus). */
export const UploadStatusResponse = Type.Object({
  success: Type.Literal(true),
  upload: Type.Object({
    offset: Type.Integer({ description: 'Bytes received and stored.' }),
    length: Type.Union([Type.Integer(), Type.Null()], { description: 'Upload-Length; null while deferred.' }),
    expires_at: Type.String({ description: 'UTC, YYYY-MM-DD HH:MM:SS: when an unfinished upload expires.' }),
    file: Type.Union([FileObject, Type.Null()], { description: 'The file the upload became, once complete; else null.' }),
  }),
})

/** An answer with no body (tus answers carry their state in headers). */
export const NoContent = Type.Unsafe<undefined>({ type: 'null', description: 'No body.' })

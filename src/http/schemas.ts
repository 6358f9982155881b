import { Type, type Static } from 'typebox'
import { API_ERROR_CODES } from '../errors.js'

const SafeId = (description: string) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description })

/** A UTC time `YYYY-MM-DD HH:MM:SS`, or null. */
const NullableTime = (description: string) =>
  Type.Union([Type.String({ examples: ['2026-12-01 00:00:00'] }), Type.Null()], { description: `UTC, YYYY-MM-DD HH:MM:SS. ${description}` })

export const ErrorBody = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      code: Type.Enum(API_ERROR_CODES, {
        description: 'Stable snake_case error code: branch on it, not on `message`. Each status lists the codes it can carry.',
      }),
      message: Type.String(),
      required_scope: Type.Optional(Type.String({ description: 'With `insufficient_scope`: the scope the call needs.' })),
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
    expires_at: NullableTime('When the file expires for everyone (its links and API calls answer 404 from then on); null: never.'),
    source: Type.Union(
      [
        Type.Object({ type: Type.Literal('api') }),
        Type.Object({ type: Type.Literal('dashboard') }),
        Type.Object({ type: Type.Literal('upload_request'), request_id: Type.Integer() }),
      ],
      { description: 'How the file came in: through the API, the dashboard, or a guest of an upload request.', title: 'FileSource' },
    ),
    scan: Type.Union(
      [
        Type.Object(
          {
            status: Type.Union(
              [Type.Literal('pending'), Type.Literal('clean'), Type.Literal('infected'), Type.Literal('error'), Type.Literal('skipped')],
              {
                description:
                  'pending: not scanned yet; infected: its bytes and links are gone (only its owner still reads this record); ' +
                  'error: clamd could not scan it (too large for it); skipped: too large to scan, served unscanned (async mode).',
              },
            ),
            signature: Type.Union([Type.String(), Type.Null()], { description: 'The signature clamd found (infected only).' }),
            scanned_at: NullableTime('When the verdict came; null while pending.'),
          },
          { title: 'FileScan' },
        ),
        Type.Null(),
      ],
      { description: 'The virus scan (ClamAV); null when the server does not scan, or did not when the file was stored.' },
    ),
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
  expires_at: NullableTime('When the file expires; null: never.'),
  source: FileObject.properties.source,
  scan: FileObject.properties.scan,
})

export const LIST_DEFAULTS = { page: 1, limit: 20 } as const

export const ListQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, default: LIST_DEFAULTS.page })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: LIST_DEFAULTS.limit })),
    before_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'Files whose file_id is lower, newest first: stable paging (pagination.next_before_id). Not with `page`.',
      }),
    ),
  },
  { additionalProperties: true },
)

export const Pagination = Type.Object(
  {
    page: Type.Union([Type.Integer(), Type.Null()], { description: 'null in a before_id request.' }),
    limit: Type.Integer(),
    total: Type.Integer({ description: 'Total number of files of the account.' }),
    pages: Type.Integer({ description: 'ceil(total / limit); 0 when there are no files.' }),
    next_before_id: Type.Union([Type.Integer(), Type.Null()], {
      description: "The file_id of the page's last file when more files follow it (pass it as before_id), else null.",
    }),
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
    storage_reserved: Type.Integer({
      description: 'Bytes held against max_storage by uploads in progress; total_size + storage_reserved never passes max_storage.',
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
    max_storage: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Bytes the account may keep, its files and uploads in progress together; null: unlimited.',
    }),
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

/** A grant URL's two secrets. */
export const GrantParams = Type.Object({ token: Type.String(), grant: Type.String() })

/** GET of a link with a policy, for a client that does not prefer HTML. */
export const DownloadOfferResponse = Type.Object(
  {
    success: Type.Literal(true),
    download: Type.Object({
      filename: Type.String(),
      size: Type.Integer({ description: 'Bytes.' }),
      content_type: Type.String(),
      password_required: Type.Boolean({ description: 'POST `password` with the download.' }),
      expires_at: NullableTime("The earlier of the link's and the file's expiry; null: none."),
      downloads_left: Type.Union([Type.Integer(), Type.Null()], { description: 'null: no download limit.' }),
    }),
  },
  { title: 'DownloadOffer' },
)

/** The 303 of a counted download. */
export const GrantResponse = Type.Object(
  {
    success: Type.Literal(true),
    download_url: Type.String({ format: 'uri', description: 'The grant URL, as in Location.' }),
    expires_at: Type.String({ description: 'UTC, YYYY-MM-DD HH:MM:SS: the grant is valid until then.' }),
  },
  { title: 'DownloadGrant' },
)

export const LinkObject = Type.Object(
  {
    link_id: Type.Integer({ description: 'Unique across the service, never reused.' }),
    file_id: Type.Integer(),
    url: Type.String({ format: 'uri', description: '<public base URL>/download/<token>' }),
    default: Type.Boolean({ description: "The file's default link: its public_link. It cannot be deleted." }),
    label: Type.Union([Type.String(), Type.Null()]),
    expires_at: NullableTime('The link answers 404 from then on; null: no expiry of its own.'),
    max_downloads: Type.Union([Type.Integer(), Type.Null()], { description: 'null: no download limit.' }),
    download_count: Type.Integer(),
    password_protected: Type.Boolean(),
    status: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('exhausted'), Type.Literal('revoked')], {
      description:
        'expired: past its expires_at or its file expired; exhausted: download_count reached max_downloads; revoked: deleted (shown 30 days).',
    }),
    created_at: Type.String({ description: 'UTC, YYYY-MM-DD HH:MM:SS.' }),
  },
  { title: 'Link' },
)
export type LinkObject = Static<typeof LinkObject>

export const LinkIdParams = Type.Object({ link_id: SafeId('The link_id of a link.') })

const ExpiresIn = Type.Integer({ minimum: 1, maximum: 315_360_000, description: 'Seconds from now (at most 10 years).' })
const ExpiresAt = Type.Union([Type.String({ description: 'UTC, YYYY-MM-DD HH:MM:SS, in the future.' }), Type.Null()])

/** The fields of a link's create and update (links.md); on update, null clears one. */
export const LinkBody = Type.Object(
  {
    label: Type.Optional(Type.Union([Type.String({ maxLength: 100, description: 'One line, at most 100 characters.' }), Type.Null()])),
    expires_in: Type.Optional(ExpiresIn),
    expires_at: Type.Optional(ExpiresAt),
    max_downloads: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Null()])),
    password: Type.Optional(
      Type.Union([
        Type.String({ minLength: 8, maxLength: 1024, description: 'Stored only as a slow salted hash; never returned.' }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false, title: 'LinkFields' },
)

/** PATCH /files/{file_id}. */
export const FileUpdateBody = Type.Object(
  {
    expires_in: Type.Optional(ExpiresIn),
    expires_at: Type.Optional(
      Type.Union([Type.String({ description: 'UTC, YYYY-MM-DD HH:MM:SS, in the future.' }), Type.Null()], {
        description: 'null removes the expiry.',
      }),
    ),
    filename: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: "Made safe as an upload's name is: no path, no control characters, at most 255 bytes.",
      }),
    ),
  },
  { additionalProperties: false, title: 'FileChanges' },
)

export const LinkResponse = Type.Object({ success: Type.Literal(true), link: LinkObject })
export const LinkListResponse = Type.Object({ success: Type.Literal(true), links: Type.Array(LinkObject) })

/** The errors of a request with an Idempotency-Key (api-semantics.md): 409 while one runs, 422 for another request. */
export const idempotencyErrors = {
  409: ErrorBody,
  422: ErrorBody,
}

export const IDEMPOTENCY_KEY_HEADER = {
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Up to 255 printable ASCII characters. Sending the same request again with it replays the first 2xx answer ' +
        '(Idempotent-Replayed: true) instead of creating again; kept 24 hours.',
    }),
  ),
}

/** The calling key (GET /key). */
export const CurrentKeyObject = Type.Object(
  {
    key_id: Type.Integer(),
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key, to recognise it; never the whole key.' }),
    scopes: Type.Array(Type.String(), { description: 'The scopes the key holds: all nine for a full key.' }),
    allowed_ips: Type.Array(Type.String(), { description: 'Addresses and CIDR ranges the key may be used from; empty: anywhere.' }),
    created_at: Type.String({ description: 'UTC, YYYY-MM-DD HH:MM:SS.' }),
    expires_at: NullableTime('When the key stops working; null: never.'),
    last_used_at: NullableTime('Recorded to the minute; null: never used.'),
  },
  { title: 'CurrentKey' },
)
export const CurrentKeyResponse = Type.Object({ success: Type.Literal(true), key: CurrentKeyObject, plan: Type.String() })

export const AuditEventObject = Type.Object(
  {
    event_id: Type.Integer({ description: 'Positive and increasing.' }),
    at: Type.String({ description: 'UTC, YYYY-MM-DD HH:MM:SS.' }),
    action: Type.String({ examples: ['file.deleted'] }),
    actor: Type.Object({
      type: Type.Union([
        Type.Literal('key'),
        Type.Literal('session'),
        Type.Literal('operator'),
        Type.Literal('public'),
        Type.Literal('system'),
        Type.Literal('guest'),
      ]),
      id: Type.Union([Type.Integer(), Type.Null()], {
        description: "The key's id, the account's for a session, the upload request's for a guest.",
      }),
      name: Type.Optional(Type.String()),
    }),
    ip: Type.Union([Type.String(), Type.Null()], {
      description: 'As FILESHARE_AUDIT_IP keeps it: whole, truncated (IPv4 /24, IPv6 /48) or null.',
    }),
    user_agent: Type.Union([Type.String(), Type.Null()], { description: 'At most 200 characters.' }),
    target: Type.Union([Type.Object({ type: Type.String(), id: Type.Union([Type.Integer(), Type.Null()]) }), Type.Null()]),
    details: Type.Object({}, { additionalProperties: true, description: 'A small object; never a key, password, token or link URL.' }),
  },
  { title: 'AuditEvent' },
)

export const AuditEventsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    before_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Events with a lower event_id.' })),
    action: Type.Optional(Type.String({ maxLength: 100, description: 'One action (file.deleted) or a family (file.*).' })),
    since: Type.Optional(
      Type.String({ maxLength: 40, description: 'UTC: YYYY-MM-DD, YYYY-MM-DD HH:MM:SS or YYYY-MM-DDTHH:MM:SSZ; events at or after it.' }),
    ),
  },
  { additionalProperties: true },
)

export const AuditEventsResponse = Type.Object({
  success: Type.Literal(true),
  events: Type.Array(AuditEventObject),
  pagination: Type.Object({
    limit: Type.Integer(),
    next_before_id: Type.Union([Type.Integer(), Type.Null()], { description: 'Pass as before_id for the next page; null on the last.' }),
  }),
})

export const WebhookIdParams = Type.Object({ webhook_id: SafeId('The webhook_id of an endpoint.') })
export const WebhookDeliveryParams = Type.Object({
  webhook_id: SafeId('The webhook_id of an endpoint.'),
  delivery_id: SafeId('The delivery_id of one of its deliveries.'),
})

export const WebhookObject = Type.Object(
  {
    webhook_id: Type.Integer(),
    url: Type.String({ format: 'uri' }),
    events: Type.Array(Type.String(), { description: 'The event types it receives, or ["*"] for all.' }),
    description: Type.Union([Type.String(), Type.Null()]),
    enabled: Type.Boolean(),
    disabled_reason: Type.Union([Type.Literal('gone'), Type.Literal('failing'), Type.Literal('owner'), Type.Null()], {
      description: 'gone: it answered 410; failing: no success for 5 days while failing; owner: turned off by its owner.',
    }),
    created_at: Type.String({ description: 'UTC, YYYY-MM-DD HH:MM:SS.' }),
    secret: Type.Optional(
      Type.String({ description: 'whsec_…: only in the answers of create and rotate-secret. Signs every message (Standard Webhooks).' }),
    ),
  },
  { title: 'Webhook' },
)

/** The fields of an endpoint's create and update; on update, absent fields stay. */
export const WebhookBody = Type.Object(
  {
    url: Type.Optional(
      Type.String({ maxLength: 2048, description: 'https:// (http:// only when the operator allows it), public hosts only.' }),
    ),
    events: Type.Optional(Type.Array(Type.String({ maxLength: 50 }), { maxItems: 20, description: 'Event types, or ["*"].' })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, title: 'WebhookFields' },
)

export const WebhookResponse = Type.Object({ success: Type.Literal(true), webhook: WebhookObject })
export const WebhookListResponse = Type.Object({ success: Type.Literal(true), webhooks: Type.Array(WebhookObject) })
export const WebhookTestResponse = Type.Object({ success: Type.Literal(true), message_id: Type.String() })
export const AcceptedResponse = Type.Object({ success: Type.Literal(true) })

export const WebhookDeliveryObject = Type.Object(
  {
    delivery_id: Type.Integer(),
    event_type: Type.String(),
    message_id: Type.String({ description: 'The webhook-id header of every attempt.' }),
    attempts: Type.Integer(),
    last_status: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    next_attempt_at: NullableTime('When the next attempt is due; null once it succeeded or failed for good.'),
    state: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
    created_at: Type.String({ description: 'UTC, YYYY-MM-DD HH:MM:SS.' }),
  },
  { title: 'WebhookDelivery' },
)

export const WebhookDeliveriesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    before_id: Type.Optional(
      Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Deliveries with a lower delivery_id.' }),
    ),
  },
  { additionalProperties: true },
)

export const WebhookDeliveriesResponse = Type.Object({
  success: Type.Literal(true),
  deliveries: Type.Array(WebhookDeliveryObject),
  pagination: Type.Object({ limit: Type.Integer(), next_before_id: Type.Union([Type.Integer(), Type.Null()]) }),
})

// Upload requests (../shared/spec/upload-requests.md).
export const UploadRequestObject = Type.Object(
  {
    request_id: Type.Integer({ description: 'Unique across the service, never reused.' }),
    url: Type.String({ format: 'uri', description: "<public URL>/r/<token>: the guest's page. Whoever has it can send files." }),
    label: Type.String(),
    message: Type.Union([Type.String(), Type.Null()], { description: 'Shown to the guest as plain text.' }),
    expires_at: Type.String({ description: 'UTC, YYYY-MM-DD HH:MM:SS: guests lose access then.' }),
    max_files: Type.Union([Type.Integer(), Type.Null()], { description: 'null: no limit of its own.' }),
    max_file_size: Type.Union([Type.Integer(), Type.Null()], { description: "Bytes; null: the holder plan's." }),
    max_total_size: Type.Union([Type.Integer(), Type.Null()], { description: 'Bytes; null: no limit of its own.' }),
    file_expires_in: Type.Union([Type.Integer(), Type.Null()], { description: 'Seconds each received file lives; null: no expiry.' }),
    password_protected: Type.Boolean(),
    files_received: Type.Integer(),
    bytes_received: Type.Integer(),
    status: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('closed'), Type.Literal('full')], {
      description: 'closed: by its holder; expired: past expires_at; full: max_files or max_total_size received.',
    }),
    created_at: Type.String({ description: 'UTC, YYYY-MM-DD HH:MM:SS.' }),
  },
  { title: 'UploadRequest' },
)

const NullableCount = (minimum: number, maximum: number, description: string) =>
  Type.Optional(Type.Union([Type.Integer({ minimum, maximum }), Type.Null()], { description }))

/** The fields of an upload request's create and update; on update, null clears the ones that may be cleared. */
export const UploadRequestBody = Type.Object(
  {
    label: Type.Optional(Type.String({ maxLength: 1000, description: 'One line, 1 to 200 characters (required on create).' })),
    message: Type.Optional(
      Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()], { description: 'Plain text, at most 2,000 characters.' }),
    ),
    expires_in: Type.Optional(ExpiresIn),
    expires_at: Type.Optional(ExpiresAt),
    max_files: NullableCount(1, 10_000, 'At most this many files.'),
    max_file_size: NullableCount(1, Number.MAX_SAFE_INTEGER, "Bytes, at most the plan's max_file_size."),
    max_total_size: NullableCount(1, Number.MAX_SAFE_INTEGER, 'Bytes, all files together.'),
    password: Type.Optional(
      Type.Union([
        Type.String({ minLength: 8, maxLength: 1024, description: 'Guests must give it; stored only as a slow salted hash.' }),
        Type.Null(),
      ]),
    ),
    file_expires_in: NullableCount(1, 315_360_000, 'Seconds each received file lives from its upload.'),
  },
  { additionalProperties: false, title: 'UploadRequestFields' },
)

export const UploadRequestIdParams = Type.Object({ request_id: SafeId('The request_id of an upload request.') })
export const UploadRequestResponse = Type.Object({ success: Type.Literal(true), upload_request: UploadRequestObject })
export const UploadRequestListResponse = Type.Object({ success: Type.Literal(true), upload_requests: Type.Array(UploadRequestObject) })
export const UploadRequestFilesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    before_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Files with a lower file_id.' })),
  },
  { additionalProperties: true },
)
export const UploadRequestFilesResponse = Type.Object({
  success: Type.Literal(true),
  files: Type.Array(FileObject),
  pagination: Type.Object({ limit: Type.Integer(), next_before_id: Type.Union([Type.Integer(), Type.Null()]) }),
})

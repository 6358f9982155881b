// @fileshare/sdk: the official JavaScript/TypeScript SDK of the Fileshare API.
export { Fileshare, DEFAULT_CHUNK_SIZE, DEFAULT_MAX_RETRIES, DEFAULT_RESUMABLE_THRESHOLD, DEFAULT_TIMEOUT_MS } from './client.js'
export { Fileshare as default } from './client.js'
export type { FileshareOptions, LoggerLike, LogLevel } from './client.js'
export { APIPromise } from './api-promise.js'
export type { WithResponse } from './api-promise.js'
export { Files, MAX_BULK_DELETE } from './resources/files.js'
export { Links } from './resources/links.js'
export { AuditEvents } from './resources/audit-events.js'
export { Webhooks } from './resources/webhooks.js'
export { UploadRequests } from './resources/upload-requests.js'
export { DEFAULT_WEBHOOK_TOLERANCE_SECONDS } from './webhook-verify.js'
export type { WebhookBody, WebhookHeaders, WebhookVerifyOptions } from './webhook-verify.js'
export {
  APIConnectionError,
  APITimeoutError,
  AuthenticationError,
  BadRequestError,
  ConfigurationError,
  FileshareError,
  InsufficientScopeError,
  IntegrityError,
  IpNotAllowedError,
  LimitExceededError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ScanPendingError,
  ServerError,
  WebhookVerificationError,
} from './errors.js'
export type { FileshareErrorInit, RateLimitInfo } from './errors.js'
export type { DownloadDestination, FileOrLink, NodeWritableLike } from './download.js'
export type { TusCapabilities } from './tus.js'
export type { UploadInput } from './upload-source.js'
export {
  AUDIT_EVENT_FIELDS,
  CURRENT_KEY_FIELDS,
  ERROR_CODES,
  FILE_FIELDS,
  FILE_SCAN_FIELDS,
  FILE_SCAN_STATUSES,
  FILE_SORTS,
  FILE_STATES,
  LIMITS_FIELDS,
  LINK_FIELDS,
  PAGINATION_FIELDS,
  SCOPES,
  SORT_ORDERS,
  STATS_FIELDS,
  UPLOAD_REQUEST_FIELDS,
  WEBHOOK_DELIVERY_FIELDS,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_FIELDS,
} from './types.js'
export type {
  BulkDeleteResult,
  ArchiveDownloadOptions,
  ArchiveDownloadResult,
  ApiAuditEvent,
  ApiCurrentKey,
  ApiFile,
  ApiLimits,
  ApiLink,
  ApiPagination,
  ApiStats,
  AuditAction,
  AuditActorType,
  AuditEvent,
  AuditEventIterateOptions,
  AuditEventList,
  AuditEventListOptions,
  CurrentKey,
  DateInput,
  DownloadOptions,
  DownloadResult,
  ErrorCode,
  FileList,
  FileQuery,
  FileRecord,
  FileScan,
  FileScanStatus,
  FileSort,
  FileSource,
  FileState,
  FileUpdate,
  IdempotencyOptions,
  IterateOptions,
  Limits,
  Link,
  LinkOptions,
  LinkStatus,
  ListOptions,
  ProgressCallback,
  RequestOptions,
  Scope,
  SortOrder,
  Stats,
  StatsResult,
  UploadOptions,
  ApiUploadRequest,
  UploadRequest,
  UploadRequestCreateParams,
  UploadRequestFileList,
  UploadRequestFileListOptions,
  UploadRequestStatus,
  UploadRequestUpdateParams,
  ApiWebhook,
  ApiWebhookDelivery,
  Webhook,
  WebhookCreateParams,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookDeliveryListOptions,
  WebhookDeliveryState,
  WebhookDisabledReason,
  WebhookEvent,
  WebhookEventData,
  WebhookEventSelector,
  WebhookEventType,
  WebhookTestResult,
  WebhookUpdateParams,
  WebhookWithSecret,
} from './types.js'
export { MAX_ARCHIVE_FILES } from './archive.js'
export { VERSION, USER_AGENT } from './version.js'

// @fileshare/sdk: the official JavaScript/TypeScript SDK of the Fileshare API.
export { Fileshare, DEFAULT_CHUNK_SIZE, DEFAULT_MAX_RETRIES, DEFAULT_RESUMABLE_THRESHOLD, DEFAULT_TIMEOUT_MS } from './client.js'
export { Fileshare as default } from './client.js'
export type { FileshareOptions, LoggerLike, LogLevel } from './client.js'
export { APIPromise } from './api-promise.js'
export type { WithResponse } from './api-promise.js'
export { Files } from './resources/files.js'
export { Links } from './resources/links.js'
export {
  APIConnectionError,
  APITimeoutError,
  AuthenticationError,
  BadRequestError,
  ConfigurationError,
  FileshareError,
  IntegrityError,
  LimitExceededError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
} from './errors.js'
export type { FileshareErrorInit, RateLimitInfo } from './errors.js'
export type { DownloadDestination, FileOrLink, NodeWritableLike } from './download.js'
export type { TusCapabilities } from './tus.js'
export type { UploadInput } from './upload-source.js'
export { ERROR_CODES, FILE_FIELDS, LIMITS_FIELDS, LINK_FIELDS, PAGINATION_FIELDS, STATS_FIELDS } from './types.js'
export type {
  ApiFile,
  ApiLimits,
  ApiLink,
  ApiPagination,
  ApiStats,
  DateInput,
  DownloadOptions,
  DownloadResult,
  ErrorCode,
  FileList,
  FileRecord,
  FileUpdate,
  IdempotencyOptions,
  Limits,
  Link,
  LinkOptions,
  LinkStatus,
  ListOptions,
  ProgressCallback,
  RequestOptions,
  Stats,
  StatsResult,
  UploadOptions,
} from './types.js'
export { VERSION, USER_AGENT } from './version.js'

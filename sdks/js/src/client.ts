// new Fileshare(options): configuration, the resources, stats() and download().
import { download, type DownloadDestination, type FileOrLink } from './download.js'
import { call, type APIPromise } from './api-promise.js'
import { ConfigurationError } from './errors.js'
import { Http, type Log } from './http.js'
import { toCurrentKey, toStats } from './records.js'
import { AuditEvents } from './resources/audit-events.js'
import { Files } from './resources/files.js'
import { Links } from './resources/links.js'
import { UploadRequests } from './resources/upload-requests.js'
import { Webhooks } from './resources/webhooks.js'
import type { RetryPolicy } from './retry.js'
import { env } from './runtime.js'
import { detectTus, type TusCapabilities } from './tus.js'
import type { CurrentKey, DownloadOptions, DownloadResult, RequestOptions, StatsResult } from './types.js'

export interface FileshareOptions {
  /** Ends in `/api/v1`, e.g. `https://files.example.com/api/v1`. Default: `FILESHARE_BASE_URL`. */
  baseUrl?: string | undefined
  /** `fsk_…`. Default: `FILESHARE_API_KEY`. */
  apiKey?: string | undefined
  /** Retries of a failed call (429, 500, 502, 503, 504, 409 `idempotency_in_progress`, no connection). Default 2. */
  maxRetries?: number | undefined
  /** Idle timeout in ms for connecting and for each read or write; never a deadline for a whole transfer. Default 60000. */
  timeoutMs?: number | undefined
  /** Sources of at least this many bytes use resumable uploads when the server offers them. Default 64 MiB. */
  resumableThreshold?: number | undefined
  /** Chunk size of resumable uploads. Default 16 MiB. */
  chunkSize?: number | undefined
  /** A fetch implementation (tests, proxies). Default: the global `fetch`. */
  fetch?: typeof globalThis.fetch | undefined
  /** Headers sent with every request (`Authorization` cannot be changed). */
  defaultHeaders?: Record<string, string | null | undefined> | undefined
  /**
   * Node: an `http.Agent`/`https.Agent` (a proxy agent such as `https-proxy-agent`'s, keep-alive
   * settings). Every request then goes through `node:http` with it: JSON calls, downloads and
   * streamed uploads alike (flat memory).
   */
  httpAgent?: unknown
  /**
   * Merged into the init of every `fetch` the SDK makes, e.g. `{ dispatcher: new ProxyAgent(url) }`
   * of undici. With a `dispatcher` (and no `httpAgent`) streamed uploads go through fetch too, so
   * that they use it; undici then holds a streamed body in memory until it is sent (nodejs/undici#4058).
   */
  fetchOptions?: (RequestInit & Record<string, unknown>) | undefined
  /** Where log lines go: any object with `debug` and `info` methods, as `console` (the default) or pino's. */
  logger?: LoggerLike | undefined
  /** `debug`: every request (method, URL, status, ms, request id) and what `info` shows; `info`: retries, continued and kept uploads; `off`. Default: `FILESHARE_LOG`, else `off`. Never a header, so never the key. */
  logLevel?: LogLevel | undefined
  /** @internal For tests: replaces the waits between retries. */
  sleep?: RetryPolicy['sleep'] | undefined
  /** @internal For tests: replaces Math.random in the backoff. */
  random?: (() => number) | undefined
}

/** A console-like logger. */
export interface LoggerLike {
  debug(message: string, ...rest: unknown[]): void
  info(message: string, ...rest: unknown[]): void
}

export type LogLevel = 'debug' | 'info' | 'off'

/** The SDK's log for `logger` at `logLevel` (default `FILESHARE_LOG`): `undefined` when off. */
function makeLog(logger: LoggerLike | undefined, level: string | undefined): Log | undefined {
  const chosen = (level ?? env('FILESHARE_LOG') ?? 'off').toLowerCase()
  if (chosen !== 'debug' && chosen !== 'info') {
    if (chosen !== 'off' && level !== undefined) throw new ConfigurationError('logLevel must be "debug", "info" or "off"')
    return undefined
  }
  const sink = logger ?? console
  return {
    debug: (message) => {
      if (chosen === 'debug') sink.debug(`fileshare: ${message}`)
    },
    info: (message) => sink.info(`fileshare: ${message}`),
  }
}

export const DEFAULT_MAX_RETRIES = 2
export const DEFAULT_TIMEOUT_MS = 60_000
export const DEFAULT_RESUMABLE_THRESHOLD = 64 * 1024 * 1024
export const DEFAULT_CHUNK_SIZE = 16 * 1024 * 1024

const inspectSymbol = Symbol.for('nodejs.util.inspect.custom')

function nonNegativeInteger(value: number | undefined, name: string, fallback: number, positive = false): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < (positive ? 1 : 0)) {
    throw new ConfigurationError(`${name} must be a ${positive ? 'positive' : 'non-negative'} integer`)
  }
  return value
}

/** The Fileshare API client. The API key never shows in messages, `toString`, `inspect` or JSON. */
export class Fileshare {
  /** Upload, list, iterate, get, update, delete. */
  readonly files: Files
  /** A file's links: create, list, get, update, delete, rotate. */
  readonly links: Links
  /** The account's audit log: list, iterate (scope `audit:read`). */
  readonly auditEvents: AuditEvents
  /** The account's webhook endpoints and their deliveries (scope `webhooks:manage`). `Webhooks.verify` checks what they receive. */
  readonly webhooks: Webhooks
  /** Upload requests: ask someone without an account for files (scope `requests:manage`). */
  readonly uploadRequests: UploadRequests
  readonly baseUrl: string
  readonly maxRetries: number
  readonly timeoutMs: number
  readonly resumableThreshold: number
  readonly chunkSize: number
  readonly #apiKey: string
  readonly #options: FileshareOptions
  readonly #http: Http
  #tus: Promise<TusCapabilities> | undefined

  constructor(options: FileshareOptions = {}) {
    const baseUrl = options.baseUrl ?? env('FILESHARE_BASE_URL')
    const apiKey = options.apiKey ?? env('FILESHARE_API_KEY')
    if (!baseUrl) {
      throw new ConfigurationError('no base URL: pass { baseUrl } (e.g. "https://files.example.com/api/v1") or set FILESHARE_BASE_URL')
    }
    if (!/^https?:\/\/[^/]+/.test(baseUrl)) throw new ConfigurationError('baseUrl must be an http(s) URL ending in /api/v1')
    if (!/\/api\/v1\/*$/.test(baseUrl)) {
      const fixed = `${baseUrl.replace(/\/+$/, '')}/api/v1`
      throw new ConfigurationError(`baseUrl must end in /api/v1: add it, as in ${JSON.stringify(fixed)} (got ${JSON.stringify(baseUrl)})`)
    }
    if (!apiKey) throw new ConfigurationError('no API key: pass { apiKey } or set FILESHARE_API_KEY')
    const fetchImpl = options.fetch ?? globalThis.fetch
    if (typeof fetchImpl !== 'function') throw new ConfigurationError('no fetch: pass { fetch } on platforms without a global fetch')
    this.baseUrl = baseUrl.replace(/\/+$/, '')
    this.maxRetries = nonNegativeInteger(options.maxRetries, 'maxRetries', DEFAULT_MAX_RETRIES)
    this.timeoutMs = nonNegativeInteger(options.timeoutMs, 'timeoutMs', DEFAULT_TIMEOUT_MS)
    this.resumableThreshold = nonNegativeInteger(options.resumableThreshold, 'resumableThreshold', DEFAULT_RESUMABLE_THRESHOLD)
    this.chunkSize = nonNegativeInteger(options.chunkSize, 'chunkSize', DEFAULT_CHUNK_SIZE, true)
    this.#apiKey = apiKey
    this.#options = options
    const log = makeLog(options.logger, options.logLevel)
    const retry: RetryPolicy = { maxRetries: this.maxRetries }
    if (options.sleep) retry.sleep = options.sleep
    if (options.random) retry.random = options.random
    if (log) retry.onRetry = (n, delay, error) => log.info(`retry ${n} in ${delay} ms after ${error.name}: ${error.message}`)
    this.#http = new Http({
      baseUrl: this.baseUrl,
      apiKey: () => this.#apiKey,
      timeoutMs: this.timeoutMs,
      retry,
      fetch: (input, init) => fetchImpl(input, init),
      nativeFetch: options.fetch === undefined,
      headers: options.defaultHeaders,
      httpAgent: options.httpAgent,
      fetchOptions: options.fetchOptions,
      log,
    })
    this.files = new Files(this.#http, {
      resumableThreshold: this.resumableThreshold,
      chunkSize: this.chunkSize,
      tus: (signal) => this.resumableUploads(signal),
    })
    this.links = new Links(this.#http)
    this.auditEvents = new AuditEvents(this.#http)
    this.webhooks = new Webhooks(this.#http)
    this.uploadRequests = new UploadRequests(this.#http)
  }

  /**
   * A copy of this client with some options changed (the key stays unless given), as
   * openai-node's `withOptions`: `client.withOptions({ maxRetries: 8, timeoutMs: 120_000 })`.
   */
  withOptions(options: FileshareOptions): Fileshare {
    return new Fileshare({ ...this.#options, baseUrl: this.baseUrl, apiKey: this.#apiKey, ...options })
  }

  /** The account's statistics, limits and plan (fields this SDK does not know are kept). */
  stats(options: RequestOptions = {}): APIPromise<StatsResult> {
    return call(this.#http, options, async (http) => {
      const { data } = await http.request<Record<string, unknown>>({ method: 'GET', url: http.url('/stats'), signal: options.signal })
      return toStats(data)
    })
  }

  /**
   * The key this client calls with (`GET /key`, which any valid key may call, whatever its
   * scopes): its id, name, prefix, scopes, allowed addresses, dates, and the account's plan.
   */
  key(options: RequestOptions = {}): APIPromise<CurrentKey> {
    return call(this.#http, options, async (http) => {
      const { data } = await http.request<Parameters<typeof toCurrentKey>[0]>({
        method: 'GET',
        url: http.url('/key'),
        signal: options.signal,
      })
      return toCurrentKey(data)
    })
  }

  /**
   * Downloads a file (its record, a link record, or a link's URL) to a path or a stream. The link
   * is asked for a grant first (a POST with the `password` when given, which counts one download);
   * the grant URL then serves the bytes for an hour. With `resume` (default true) a partial
   * destination file is continued with `Range` + `If-Range`, as is a dropped connection, through
   * the same grant; the finished bytes are checked against the `ETag` (the file's SHA-256).
   */
  download(fileOrLink: FileOrLink, destination: DownloadDestination, options: DownloadOptions = {}): APIPromise<DownloadResult> {
    return call(this.#http, options, (http) => download(http, fileOrLink, destination, options))
  }

  /** What the server offers for resumable uploads (asked once with OPTIONS /uploads, then kept). */
  resumableUploads(signal?: AbortSignal): Promise<TusCapabilities> {
    if (!this.#tus) {
      const asking = detectTus(this.#http, signal)
      this.#tus = asking
      // A failed or aborted question is asked again next time.
      asking.catch(() => {
        if (this.#tus === asking) this.#tus = undefined
      })
    }
    return this.#tus
  }

  toString(): string {
    return `Fileshare { baseUrl: ${JSON.stringify(this.baseUrl)}, apiKey: [redacted] }`
  }

  toJSON(): Record<string, unknown> {
    return {
      baseUrl: this.baseUrl,
      apiKey: '[redacted]',
      maxRetries: this.maxRetries,
      timeoutMs: this.timeoutMs,
      resumableThreshold: this.resumableThreshold,
      chunkSize: this.chunkSize,
    }
  }

  [inspectSymbol](): string {
    return `Fileshare ${JSON.stringify(this.toJSON())}`
  }
}

export default Fileshare

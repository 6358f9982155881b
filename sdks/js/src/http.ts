// One HTTP exchange at a time: headers, the idle timeout, error mapping, and the retry loop.
import { APIConnectionError, APITimeoutError, BadRequestError, FileshareError, errorFromResponse } from './errors.js'
import { abortReason, answered, withRetries, type RetryPolicy } from './retry.js'
import { canStreamRequestBodies, isNode, loadNodeIo } from './runtime.js'
import { USER_AGENT } from './version.js'

/** A request body: a stream (Node; sent with `duplex: 'half'`) or a buffer/Blob. */
export type Body = ReadableStream<Uint8Array> | Uint8Array | Blob | string

export interface SendInit {
  method: string
  url: string
  headers?: Record<string, string>
  /** Send the API key (not for public download links). Default true. */
  auth?: boolean
  body?: Body
  signal?: AbortSignal | undefined
  /** Browser uploads of a Blob: called with bytes sent so far (through XMLHttpRequest). */
  onUploadProgress?: ((loaded: number) => void) | undefined
  /** `manual` (default): a redirect is an error. `follow`: only for a download link's POST outside Node (see grant.ts). */
  redirect?: 'manual' | 'follow' | undefined
}

export interface Exchange {
  response: Response
  watchdog: Watchdog
}

/**
 * Aborts a request when nothing moved for `timeoutMs` (connect, body sent, body received): an idle
 * timeout, never a deadline for the whole transfer. Also follows the caller's signal.
 */
export class Watchdog {
  readonly controller = new AbortController()
  timedOut = false
  private timer: ReturnType<typeof setTimeout> | undefined
  private readonly onCallerAbort: () => void

  constructor(
    private readonly timeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    this.onCallerAbort = () => this.controller.abort(abortReason(callerSignal!))
    if (callerSignal?.aborted) this.onCallerAbort()
    else callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true })
    this.touch()
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** Something moved: the idle clock starts again. */
  touch(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    if (this.timeoutMs > 0 && this.timeoutMs !== Infinity && !this.controller.signal.aborted) {
      this.timer = setTimeout(() => {
        this.timedOut = true
        this.controller.abort(new APITimeoutError(`no data moved for ${this.timeoutMs} ms (timeoutMs)`))
      }, this.timeoutMs)
    }
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort)
  }

  /** Turns a failure of fetch or of reading a body into the error to throw. */
  translate(error: unknown): unknown {
    if (this.callerSignal?.aborted) return abortReason(this.callerSignal)
    if (error instanceof FileshareError) return error
    if (this.timedOut) return this.controller.signal.reason
    const cause = error as { message?: string; cause?: { message?: string; code?: string } }
    const detail = cause?.cause?.code ?? cause?.cause?.message ?? cause?.message ?? String(error)
    return new APIConnectionError(`connection failed: ${detail}`, { cause: error })
  }
}

export interface HttpOptions {
  baseUrl: string
  apiKey: () => string
  timeoutMs: number
  retry: RetryPolicy
  fetch: typeof globalThis.fetch
  /** True when fetch is the platform's own (not one passed in): Node then streams bodies with node:http. */
  nativeFetch: boolean
  /** Headers sent with every request (the client's `defaultHeaders`, a call's `headers`); `null` drops one. */
  headers?: Record<string, string | null | undefined> | undefined
  /** Node: an `http.Agent` (a proxy agent, keep-alive settings) for every request; they then all go through node:http. */
  httpAgent?: unknown
  /** Merged into every fetch's init (e.g. `{ dispatcher }` of undici). */
  fetchOptions?: Record<string, unknown> | undefined
  log?: Log | undefined
  /** Told of every answer (the call's raw response, see api-promise.ts). */
  onResponse?: ((answer: RawAnswer) => void) | undefined
}

/** What one attempt answered: kept for `.withResponse()` / `.asResponse()`. */
export interface RawAnswer {
  url: string
  status: number
  headers: Headers
  /** The body's text, where the SDK read it whole (JSON answers). */
  text?: string | undefined
}

/** The SDK's log lines, already filtered by level. Never given a header, so never the key. */
export interface Log {
  debug(message: string): void
  info(message: string): void
}

/** The per-call options that change how it is sent (see `RequestOptions`). */
export interface CallSettings {
  timeoutMs?: number | undefined
  maxRetries?: number | undefined
  headers?: Record<string, string | null | undefined> | undefined
}

/** Marks a body stream whose own source failed (a file read error): that is not a network error. */
export class SourceError extends Error {}

export class Http {
  constructor(readonly options: HttpOptions) {}

  /** This transport with one call's settings and an observer of its answers. */
  scoped(call: CallSettings, onResponse?: (answer: RawAnswer) => void): Http {
    const options: HttpOptions = { ...this.options, retry: { ...this.options.retry } }
    if (call.timeoutMs !== undefined) options.timeoutMs = call.timeoutMs
    if (call.maxRetries !== undefined) options.retry.maxRetries = call.maxRetries
    if (call.headers) options.headers = { ...this.options.headers, ...call.headers }
    if (onResponse) {
      const outer = this.options.onResponse
      options.onResponse = (answer) => {
        outer?.(answer)
        onResponse(answer)
      }
    }
    return new Http(options)
  }

  /** The URL of `path` with `query`: a list is sent as the name repeated, once per value (none when empty). */
  url(path: string, query?: Record<string, string | number | readonly string[] | undefined>): string {
    const url = new URL(this.options.baseUrl.replace(/\/+$/, '') + path)
    for (const [name, value] of Object.entries(query ?? {})) {
      if (typeof value === 'object') for (const each of value) url.searchParams.append(name, each)
      else if (value !== undefined) url.searchParams.set(name, String(value))
    }
    return url.href
  }

  headers(init: SendInit): Headers {
    const headers = new Headers()
    for (const [name, value] of Object.entries({ ...this.options.headers, ...init.headers })) {
      if (typeof value === 'string') headers.set(name, value)
    }
    if (init.auth !== false) headers.set('authorization', `Bearer ${this.options.apiKey()}`)
    if (canStreamRequestBodies) headers.set('user-agent', USER_AGENT)
    if (!headers.has('accept')) headers.set('accept', 'application/json')
    return headers
  }

  /** One attempt. Resolves with any response (also errors); the caller reads the body. */
  async send(init: SendInit): Promise<Exchange> {
    const watchdog = new Watchdog(this.options.timeoutMs, init.signal)
    const headers = this.headers(init)
    const started = Date.now()
    if (init.body instanceof ReadableStream) {
      // Bytes going out count as activity for the idle timeout (a long upload answers only at its end).
      init = {
        ...init,
        body: init.body.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform: (chunk, controller) => {
              watchdog.touch()
              controller.enqueue(chunk)
            },
          }),
        ),
      }
    }
    try {
      let response: Response
      if (init.onUploadProgress && init.body instanceof Blob && typeof XMLHttpRequest !== 'undefined' && !canStreamRequestBodies) {
        response = await xhrSend(init, headers, watchdog)
      } else if (this.options.nativeFetch && isNode && (this.options.httpAgent !== undefined || this.streamsThroughNodeHttp(init))) {
        const io = await loadNodeIo()
        response = await io.sendStreamed(init.url, init.method, headers, init.body, watchdog.signal, this.options.httpAgent)
      } else {
        // Redirects are never followed (as in the other SDKs): the key is not re-sent anywhere, and a
        // 3xx surfaces as BadRequestError with its status (browsers answer an opaque redirect instead).
        const redirect = init.redirect ?? 'manual'
        const requestInit: RequestInit & { duplex?: 'half' } = {
          ...this.options.fetchOptions,
          method: init.method,
          headers,
          signal: watchdog.signal,
          redirect,
        }
        if (init.body !== undefined) {
          requestInit.body = init.body as BodyInit
          if (init.body instanceof ReadableStream) requestInit.duplex = 'half'
        }
        response = await this.options.fetch(init.url, requestInit)
        if (response.type === 'opaqueredirect') {
          throw new BadRequestError('the server answered with a redirect, which is not followed: check baseUrl', {
            requestId: response.headers.get('x-request-id') ?? undefined,
          })
        }
      }
      watchdog.touch()
      const requestId = response.headers.get('x-request-id')
      this.options.log?.debug(
        `${init.method} ${init.url} -> ${response.status} (${Date.now() - started} ms${requestId ? `, request id ${requestId}` : ''})`,
      )
      this.options.onResponse?.({ url: init.url, status: response.status, headers: response.headers })
      return { response, watchdog }
    } catch (error) {
      watchdog.stop()
      const source = findSourceError(error)
      if (source) throw source.cause ?? source
      const thrown = watchdog.translate(error)
      this.options.log?.debug(`${init.method} ${init.url} failed after ${Date.now() - started} ms: ${(thrown as Error)?.message ?? thrown}`)
      throw thrown
    }
  }

  /**
   * A streamed body in Node goes through node:http (flat memory), unless a `dispatcher` was given
   * in `fetchOptions` without an `httpAgent`: then fetch sends it, through that dispatcher.
   */
  private streamsThroughNodeHttp(init: SendInit): boolean {
    return init.body instanceof ReadableStream && this.options.fetchOptions?.dispatcher === undefined
  }

  /** Reads a whole (small) body as text under the idle timeout. */
  async readText(exchange: Exchange): Promise<string> {
    const { response, watchdog } = exchange
    try {
      if (!response.body) return ''
      const reader = response.body.getReader()
      const decoder = new TextDecoder()
      let text = ''
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        watchdog.touch()
        text += decoder.decode(value, { stream: true })
      }
      return text + decoder.decode()
    } catch (error) {
      throw watchdog.translate(error)
    } finally {
      watchdog.stop()
    }
  }

  /** One attempt that throws the mapped error for a non-2xx answer. Returns status, headers, JSON. */
  async exchangeJson<T>(init: SendInit): Promise<{ status: number; headers: Headers; data: T }> {
    const exchange = await this.send(init)
    const text = await this.readText(exchange)
    const { status, headers } = exchange.response
    this.options.onResponse?.({ url: init.url, status, headers, text })
    if (status < 200 || status > 299) throw errorFromResponse(status, headers, text)
    let data: T
    try {
      data = (text === '' ? undefined : JSON.parse(text)) as T
    } catch (error) {
      throw new FileshareError(`${status}: the answer is not JSON`, {
        status,
        requestId: headers.get('x-request-id') ?? undefined,
        headers,
        body: text,
        cause: error,
      })
    }
    return { status, headers, data }
  }

  /** A JSON call with retries (GET, DELETE and the like, whose body can be sent again). */
  request<T>(init: SendInit): Promise<{ status: number; headers: Headers; data: T }> {
    return withRetries(this.options.retry, init.signal, () => this.exchangeJson<T>(init))
  }

  /**
   * A call to `path` with `body` (when given) as JSON; answers the parsed JSON. `once`: for a POST
   * that changes something each time and takes no idempotency key, retried only when the server
   * answered 429 or 503 (nothing was done), never after a connection failure, a timeout or
   * another 5xx. A POST with an `Idempotency-Key` in `headers` is retried like a GET.
   */
  async json<T>(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal | undefined; once?: boolean } = {},
  ): Promise<T> {
    const init: SendInit = { method, url: this.url(path), headers: { ...options.headers }, signal: options.signal }
    if (options.body !== undefined) {
      init.headers = { ...init.headers, 'content-type': 'application/json' }
      init.body = JSON.stringify(options.body)
    }
    const canRetry = options.once ? answered : undefined
    const { data } = await withRetries(this.options.retry, init.signal, () => this.exchangeJson<T>(init), canRetry)
    return data
  }
}

/** The server answered with the stored answer of the request's idempotency key (nothing was done again). */
export function isReplay(headers: Headers): boolean {
  return headers.get('idempotent-replayed')?.trim().toLowerCase() === 'true'
}

function findSourceError(error: unknown): SourceError | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    if (e instanceof SourceError) return e
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}

/** Browsers: XMLHttpRequest is the one way to see upload progress. Answers a standard Response. */
function xhrSend(init: SendInit, headers: Headers, watchdog: Watchdog): Promise<Response> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open(init.method, init.url)
    xhr.responseType = 'arraybuffer'
    headers.forEach((value, name) => {
      if (name !== 'user-agent') xhr.setRequestHeader(name, value)
    })
    const onAbort = () => xhr.abort()
    watchdog.signal.addEventListener('abort', onAbort, { once: true })
    xhr.upload.onprogress = (event) => {
      watchdog.touch()
      init.onUploadProgress?.(event.loaded)
    }
    xhr.onprogress = () => watchdog.touch()
    xhr.onload = () => {
      watchdog.signal.removeEventListener('abort', onAbort)
      const responseHeaders = new Headers()
      for (const line of xhr
        .getAllResponseHeaders()
        .trim()
        .split(/[\r\n]+/)) {
        const colon = line.indexOf(':')
        if (colon > 0) responseHeaders.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim())
      }
      const nullBody = xhr.status === 204 || xhr.status === 205 || xhr.status === 304
      resolve(new Response(nullBody ? null : (xhr.response as ArrayBuffer), { status: xhr.status, headers: responseHeaders }))
    }
    const fail = () => {
      watchdog.signal.removeEventListener('abort', onAbort)
      reject(watchdog.signal.aborted ? watchdog.signal.reason : new TypeError('network error'))
    }
    xhr.onerror = fail
    xhr.onabort = fail
    xhr.ontimeout = fail
    if (watchdog.signal.aborted) return fail()
    xhr.send(init.body as Blob)
  })
}

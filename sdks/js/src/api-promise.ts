// The promise every call answers: awaited, the call's result; `.withResponse()` and
// `.asResponse()` give the raw answer too (status and headers), as openai-node's APIPromise does.
import { FileshareError } from './errors.js'
import type { Http, RawAnswer } from './http.js'
import type { RequestOptions } from './types.js'

/** The raw answer of a call's last request, next to its result. */
export interface WithResponse<T> {
  data: T
  /** The last answer of the call (a retried call's last attempt), with its status and headers. Its body was read already. */
  response: Response
}

const NULL_BODY = new Set([101, 204, 205, 304])

function toResponse(answer: RawAnswer): Response {
  const body = NULL_BODY.has(answer.status) ? null : (answer.text ?? null)
  const response = new Response(body, { status: answer.status, headers: answer.headers })
  Object.defineProperty(response, 'url', { value: answer.url })
  return response
}

/**
 * A `Promise` of the call's result, with `.withResponse()` (`{ data, response }`) and
 * `.asResponse()` (the `Response`). `RateLimit-Remaining` of a successful call:
 * `(await client.files.list().withResponse()).response.headers.get('ratelimit-remaining')`.
 */
export class APIPromise<T> extends Promise<T> {
  #last: (() => RawAnswer | undefined) | undefined

  /** @internal Use the calls of the client; a plain `new Promise` executor is accepted for `then`'s sake. */
  constructor(executor: (resolve: (value: T | PromiseLike<T>) => void, reject: (reason?: unknown) => void) => void) {
    super(executor)
  }

  /** @internal */
  static start<T>(result: Promise<T>, last: () => RawAnswer | undefined): APIPromise<T> {
    const promise = new APIPromise<T>((resolve, reject) => void result.then(resolve, reject))
    promise.#last = last
    return promise
  }

  // then/catch/finally answer plain Promises, not APIPromises.
  static override get [Symbol.species](): PromiseConstructor {
    return Promise
  }

  /**
   * The result and the raw answer of the call's last request. Rejects as the call does, and with
   * a `FileshareError` for a call that needed no request (a download that was already complete).
   */
  withResponse(): Promise<WithResponse<T>> {
    return this.then((data) => {
      const answer = this.#last?.()
      if (!answer) throw new FileshareError('the call made no request: there is no response to show')
      return { data, response: toResponse(answer) }
    })
  }

  /** The raw answer of the call's last request (status, headers; the body was read already). */
  asResponse(): Promise<Response> {
    return this.withResponse().then((o) => o.response)
  }
}

/** Runs a call with its `RequestOptions` (timeout, retries, headers) and keeps its last answer. */
export function call<T>(http: Http, options: RequestOptions | undefined, run: (http: Http) => Promise<T>): APIPromise<T> {
  let last: RawAnswer | undefined
  const scoped = http.scoped(options ?? {}, (answer) => (last = answer))
  return APIPromise.start(run(scoped), () => last)
}

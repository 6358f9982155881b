/**
 * Every HTTP exchange of the chaos soak, as the clients saw it: when it started, when its answer
 * ended (the last body byte read, or the failure), its status and Retry-After, or the error that
 * ended it. The checks judge each one by the phase of the run it fell in (chaos-checks.ts).
 */

export interface Exchange {
  method: string
  /** The path without its query, tokens and ids folded (`/download/:token`, `/api/v1/files/:id`). */
  route: string
  /** ms since the epoch */
  startedAt: number
  /** When the status line came (0 if none came). */
  headersAt: number
  /** When the exchange ended: its body read to the end, or the failure (0 while it runs). */
  endedAt: number
  /** The HTTP status, or undefined when no answer came (connection refused, reset, timed out). */
  status: number | undefined
  retryAfter: string | null
  /** Why the exchange failed on the client's side: no answer, or an answer whose body was cut. */
  error: string | undefined
}

/** The error of an exchange the client itself broke off on purpose (a resumable upload's cut chunk). */
export const CUT_BY_CLIENT = 'cut by the client'

/** A client gives up on an exchange after this long: far past any limit checked, only so that the soak itself never hangs. */
const CLIENT_TIMEOUT_MS = 120_000

/** Statuses whose Response may carry no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304])

export function routeOf(url: string): string {
  return new URL(url).pathname
    .replace(/^\/download\/[^/]+/, '/download/:token')
    .replace(/\/files\/[0-9]+/, '/files/:id')
    .replace(/\/uploads\/[^/]+/, '/uploads/:id')
}

/** An exchange starting now, nothing heard yet. */
export function newExchange(method: string, url: string): Exchange {
  return {
    method,
    route: routeOf(url),
    startedAt: Date.now(),
    headersAt: 0,
    endedAt: 0,
    status: undefined,
    retryAfter: null,
    error: undefined,
  }
}

export class ExchangeLog {
  readonly exchanges: Exchange[] = []

  /**
   * A fetch that records its exchange. The answer's body is passed through a counting stream, so
   * that the exchange ends when the caller has read it all (or it broke off), not at the headers.
   */
  readonly fetch = async (input: string, init: RequestInit = {}): Promise<Response> => {
    const method = init.method ?? 'GET'
    const exchange = newExchange(method, input)
    this.exchanges.push(exchange)
    const signal = init.signal ?? AbortSignal.timeout(CLIENT_TIMEOUT_MS)
    let response: Response
    try {
      response = await fetch(input, { ...init, signal })
    } catch (error) {
      exchange.endedAt = Date.now()
      exchange.error = describe(error)
      throw error
    }
    exchange.headersAt = Date.now()
    exchange.status = response.status
    exchange.retryAfter = response.headers.get('retry-after')
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) {
      exchange.endedAt = Date.now()
      return response
    }
    const ended = (error?: unknown) => {
      if (exchange.endedAt !== 0) return
      exchange.endedAt = Date.now()
      if (error !== undefined) exchange.error = `body: ${describe(error)}`
    }
    const reader = response.body.getReader()
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read()
          if (done) {
            ended()
            controller.close()
          } else {
            controller.enqueue(value)
          }
        } catch (error) {
          ended(error)
          controller.error(error)
        }
      },
      cancel(reason) {
        ended()
        return reader.cancel(reason)
      },
    })
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
  }

  /** Records an exchange made without fetch (the tus client's cut chunks go over node:http). */
  record(exchange: Exchange): void {
    this.exchanges.push(exchange)
  }
}

export function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : ''
  return `${message}${cause}`.slice(0, 200)
}

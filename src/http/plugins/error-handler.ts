import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify'
import fp from 'fastify-plugin'
import {
  AppError,
  ERROR_REGISTRY,
  type ErrorCode,
  InsufficientScopeError,
  InvalidParameterError,
  InvalidRequestError,
  NotFoundError,
  RateLimitedError,
  ScanPendingError,
} from '../../errors.js'
import { sendHtmlNotFound } from '../not-found-page.js'
import { sendHtmlScanPending } from '../scan-pending-page.js'
import { setAsideUnreadBody } from '../refused-body.js'
import { http } from '../../lib/node-http.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's JSON body is a set of fields (links, file changes): a field that breaks its rule, or
     * an unknown one, is 400 invalid_parameter naming it; a body that is not a JSON object stays
     * invalid_request.
     */
    bodyFieldsAreParameters?: boolean
  }
  interface FastifyRequest {
    /** The code of the error this request was answered with, if any (the access log and the metrics read it). */
    errorCode: ErrorCode | null
  }
}

/**
 * A schema violation in the API's own words: the field's name, not where Fastify keeps it
 * (`querystring/limit`, `body/name`). Integer parameters never get here (integer-parameters.ts).
 */
function validationMessage(issue: FastifySchemaValidationError | undefined): string {
  if (!issue) return ERROR_REGISTRY.invalid_request.message
  const params = issue.params as { missingProperty?: string; additionalProperty?: string }
  const path = issue.instancePath.replace(/^\//, '').replace(/\//g, '.')
  if (issue.keyword === 'required') return `${[path, params.missingProperty].filter(Boolean).join('.')} is required.`
  if (issue.keyword === 'additionalProperties') return `${params.additionalProperty} is not a known field.`
  return `${path || 'The body'} ${issue.message ?? 'is invalid'}.`
}

function toAppError(error: FastifyError | Error, request: FastifyRequest): AppError {
  if (error instanceof AppError) return error
  const fastifyError = error as FastifyError
  if (fastifyError.validation) {
    const issue = fastifyError.validation[0]
    const message = validationMessage(issue)
    if (fastifyError.validationContext !== 'body') return new InvalidParameterError(message)
    const aboutAField =
      issue !== undefined && (issue.instancePath !== '' || issue.keyword === 'additionalProperties' || issue.keyword === 'required')
    return aboutAField && request.routeOptions.config.bodyFieldsAreParameters
      ? new InvalidParameterError(message)
      : new InvalidRequestError(message)
  }
  // Fastify's own client errors (bad JSON, bad content type, body too large ...) keep their message.
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new InvalidRequestError(fastifyError.message)
  }
  return new AppError('internal_error')
}

/**
 * The status of a request whose client went away before its body ended (nginx's "client closed
 * request"): nobody receives the answer, and it is no failure of the service (not a 500).
 */
export const CLIENT_CLOSED_STATUS = 499

/** Stream errors that mean the request's body stopped coming because its connection closed. */
const CUT_BODY_CODES = new Set(['ECONNRESET', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE'])

/**
 * Whether `error` is the client cutting its own request off (a tus PATCH or a multipart upload
 * aborted part-way): the body is incomplete, its connection is gone, and the error is the body
 * stream's own, not one the service raised (a 503 met while the client left stays a 503).
 */
function isClientAbort(error: FastifyError | Error, request: FastifyRequest): boolean {
  if (error instanceof AppError || request.raw.complete) return false
  const code = (error as { code?: unknown }).code
  const connectionGone = request.raw.destroyed || request.raw.socket?.destroyed === true
  return connectionGone && typeof code === 'string' && CUT_BODY_CODES.has(code) && peerClosed(request.raw.socket)
}

/**
 * Whether the client closed the connection (its FIN arrived, or its reset): a connection the
 * service destroyed itself after a failure of its own shows the same stream errors, but neither.
 */
function peerClosed(socket: Socket | null | undefined): boolean {
  if (!socket) return false
  const errored = (socket as Socket & { errored?: { code?: unknown } | null }).errored
  return socket.readableEnded || (typeof errored?.code === 'string' && CUT_BODY_CODES.has(errored.code))
}

/**
 * Writes the one error body of the API for every error, and hides the details of 5xx. A body the
 * client is still sending is read to its end first when small, else the connection lingers after
 * the answer (refused-body.ts), so that the client reads the answer instead of a reset.
 */
export async function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: FastifyError | Error,
  /** Statuses a scope answers for some codes instead of the registry's (tus: file_too_large is 413). */
  statusOverrides: Partial<Record<ErrorCode, number>> = {},
) {
  if (isClientAbort(error, request)) {
    // Thousands of these under a load of flaky clients: one line each at info, no stack, no 500
    // (what the body brought before the cut is kept where documented: a tus PATCH's bytes).
    request.log.info({ cause: (error as { code?: string }).code }, 'the client closed the request before its body ended')
    return reply.code(CLIENT_CLOSED_STATUS).send()
  }
  const appError = toAppError(error, request)
  request.errorCode = appError.code
  if (appError.status >= 500) {
    request.log.error({ err: error }, 'request failed')
  }
  if (appError.code === 'unauthorized') reply.header('WWW-Authenticate', 'Bearer')
  // RFC 6750 section 3.1: the scope the call needs, for clients that read the challenge.
  if (appError instanceof InsufficientScopeError) {
    reply.header('WWW-Authenticate', `Bearer error="insufficient_scope", scope="${appError.requiredScope}"`)
  }
  if (appError instanceof RateLimitedError || appError instanceof ScanPendingError) {
    reply.header('Retry-After', String(appError.retryAfterSeconds))
  }
  // A backend that went away is usually back within seconds (a restart, a failover).
  if (appError.code === 'service_unavailable') reply.header('Retry-After', '5')
  // A request with the same Idempotency-Key is running: the client retries in a second.
  if (appError.code === 'idempotency_in_progress') reply.header('Retry-After', '1')
  // Not read to its end for nothing: answer, then close without a reset.
  await setAsideUnreadBody(request.raw, reply)
  const fastifyStatus = (error as FastifyError).statusCode
  const status =
    statusOverrides[appError.code] ??
    (appError.code === 'invalid_request' && fastifyStatus && fastifyStatus !== 400 && fastifyStatus < 500 ? fastifyStatus : appError.status)
  const message = appError.status >= 500 ? ERROR_REGISTRY[appError.code].message : appError.message
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send({
      success: false,
      error: {
        code: appError.code,
        message,
        ...(appError instanceof InsufficientScopeError && { required_scope: appError.requiredScope }),
        ...(appError.status >= 500 ? { request_id: request.id } : {}),
      },
    })
}

/**
 * Requests that Node's HTTP parser refuses (an unknown method, a malformed request line, headers
 * too large or too slow) never reach Fastify's handlers; they still get the API's JSON error body.
 */
export function writeClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  // The bad bytes follow a whole request that is still being answered (an upload with a short
  // Content-Length): its own answer goes out first, untouched, then the connection closes. A 400
  // written now would reach the client before, and in place of, that answer (say a 201).
  const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  if (pending && !pending.writableEnded && pending.req.complete) {
    pending.once('close', () => socket.destroy())
    return
  }
  const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
  const body = JSON.stringify({ success: false, error: { code: 'invalid_request', message: ERROR_REGISTRY.invalid_request.message } })
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy(error)
}

/**
 * The answer to a path or method no route takes: the JSON 404, or a page for a browser on an
 * unknown dashboard path. The API and the dashboard use it as their own not-found handlers, so
 * that their hooks (CORS, security headers) run for it too.
 */
export function sendNotFound(request: FastifyRequest, reply: FastifyReply) {
  if (sendHtmlNotFound(request, reply, true)) {
    request.errorCode = 'not_found'
    return reply
  }
  return sendError(request, reply, new NotFoundError(`No route for ${request.method} ${request.url.split('?')[0]}.`))
}

export default fp(
  async (app) => {
    app.decorateRequest('errorCode', null)
    app.setErrorHandler((error, request, reply) => {
      // A browser following a dead public link gets a page instead of JSON (not-found-page.ts).
      if (error instanceof NotFoundError && sendHtmlNotFound(request, reply, false)) {
        request.errorCode = 'not_found'
        return reply
      }
      // A browser following a link of a file still being scanned: a page too (scan-pending-page.ts).
      if (error instanceof ScanPendingError && sendHtmlScanPending(request, reply, error.retryAfterSeconds)) {
        request.errorCode = 'scan_pending'
        return reply
      }
      return sendError(request, reply, error as FastifyError)
    })
    app.setNotFoundHandler(sendNotFound)
  },
  { name: 'error-handler' },
)

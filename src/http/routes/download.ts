import { publicActor } from '../actor.js'
import contentDisposition from 'content-disposition'
import type { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fresh from 'fresh'
import parseRange from 'range-parser'
import { Type } from 'typebox'
import { AppError, InvalidPasswordError, RangeNotSatisfiableError, RateLimitedError } from '../../errors.js'
import type { FileRow } from '../../db/schema.js'
import type { LinkWithFile } from '../../db/repositories/links-repository.js'
import type { DownloadOffer } from '../../services/downloads.js'
import type { ByteRange } from '../../storage/blob-store.js'
import { landingPage, type LandingProblem } from '../download-page.js'
import { emptyBodyIsNoFields } from '../empty-body.js'
import { FORM_PAGE_HEADERS } from '../html-page.js'
import { prefersHtml } from '../not-found-page.js'
import { formatUtcTime } from '../../lib/utc-time.js'
import { DownloadOfferResponse, ErrorBody, FileContent, GrantParams, GrantResponse, TokenParams } from '../schemas.js'

const DEAD_LINK_404 = {
  description:
    'No file behind this link (unknown, deleted, expired, exhausted, revoked or rotated-away link, or a malformed token): the JSON ' +
    'error body, or, when Accept ranks text/html above application/json, a small HTML page that is the same for every dead link.',
  content: { 'application/json': { schema: ErrorBody }, 'text/html': { schema: { type: 'string' } } },
}

/** Virus scanning in required mode (FILESHARE_SCAN=required): the file is not served until scanned clean. */
const SCAN_RESPONSES = {
  403: {
    description: 'file_not_scannable: clamd could not scan the file (larger than its StreamMaxLength), and only scanned files are served.',
    content: { 'application/json': { schema: ErrorBody } },
  },
  409: {
    description:
      'scan_pending: the file has not been scanned for viruses yet (or clamd is unreachable); ask again after Retry-After. A browser ' +
      '(Accept ranking text/html first) gets a small page.',
    headers: { 'Retry-After': { type: 'integer', description: 'Seconds.' } },
    content: { 'application/json': { schema: ErrorBody }, 'text/html': { schema: { type: 'string' } } },
  },
}

/** What a grant URL answers besides errors, and its 404, for the OpenAPI document. */
const GRANT_RESPONSES = {
  ...SCAN_RESPONSES,
  404: DEAD_LINK_404,
  200: { description: 'The whole file.', content: { 'application/octet-stream': { schema: FileContent } } },
  206: {
    description: 'The requested range (one range; see Content-Range).',
    content: { 'application/octet-stream': { schema: FileContent } },
  },
  304: { description: 'Not modified: the ETag or the date matches (If-None-Match, If-Modified-Since).' },
}

/** What a link's GET answers besides errors: the bytes of a link without a policy, the offer of one with a policy. */
const DOWNLOAD_RESPONSES = {
  ...GRANT_RESPONSES,
  200: {
    description:
      'A link without a policy: the whole file (a download counts when it starts at byte 0). A link with a download limit or a ' +
      'password: nothing is streamed or counted; the JSON offer, or, when Accept ranks text/html first, a page with a form that POSTs back.',
    content: {
      'application/octet-stream': { schema: FileContent },
      'application/json': { schema: DownloadOfferResponse },
      'text/html': { schema: { type: 'string' } },
    },
  },
}

/** What the counted POST answers besides its errors. */
const GRANT_POST_RESPONSES = {
  ...SCAN_RESPONSES,
  303: {
    description: 'Counted: `Location` is the grant URL, valid for an hour, which streams the file and resumes without counting again.',
    headers: { Location: { type: 'string', format: 'uri', description: 'The grant URL.' } },
    content: { 'application/json': { schema: GrantResponse } },
  },
  401: {
    description: 'invalid_password: the password is missing or wrong (a browser gets the page again).',
    content: { 'application/json': { schema: ErrorBody }, 'text/html': { schema: { type: 'string' } } },
  },
  404: DEAD_LINK_404,
  429: {
    description: 'Too many downloads from this address, or ten wrong passwords on this link from it within 15 minutes.',
    content: { 'application/json': { schema: ErrorBody }, 'text/html': { schema: { type: 'string' } } },
  },
}

/**
 * An ASCII stand-in for old clients; content-disposition adds the exact name as UTF-8 `filename*`
 * whenever they differ. `%` goes too: RFC 6266 (4.3) warns that some clients decode `%XX` in a
 * plain `filename`, so `percent%41.txt` would arrive as `percentA.txt`.
 */
function asciiFallback(filename: string): string {
  return filename
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]|["\\%]/g, '_')
}

/** The one range we serve, or undefined for the whole file (no, malformed or multiple ranges). */
function requestedRange(request: FastifyRequest, file: FileRow, etag: string): ByteRange | undefined {
  const header = request.headers.range
  if (!header) return undefined
  const ifRange = request.headers['if-range']
  if (ifRange && ifRange !== etag && ifRange !== new Date(file.created_at).toUTCString()) return undefined
  // range-parser refuses a suffix longer than the file; RFC 9110 14.1.1 says it means the whole file.
  const suffixesClamped = header.replace(/([=,]\s*)-(\d+)/g, (match, lead: string, digits: string) =>
    Number(digits) > file.size ? `${lead}0-` : match,
  )
  const ranges = parseRange(file.size, suffixesClamped, { combine: true })
  if (ranges === -1) throw new RangeNotSatisfiableError(file.size)
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return undefined
  return ranges[0]
}

/** The body of the counted POST: a form's fields or JSON; only `password` is read. */
const GrantBody = Type.Object(
  { password: Type.Optional(Type.String({ maxLength: 4096, description: "The link's password, when it has one." })) },
  { additionalProperties: true },
)

/** A form's password field is at most 1024 characters, percent-encoded up to 12 bytes each. */
const GRANT_BODY_LIMIT = 16 * 1024

function presentOffer(offer: DownloadOffer) {
  return {
    filename: offer.filename,
    size: offer.size,
    content_type: offer.contentType,
    password_required: offer.passwordRequired,
    expires_at: offer.expiresAt === null ? null : formatUtcTime(offer.expiresAt),
    downloads_left: offer.downloadsLeft,
  }
}

export const downloadRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { downloads } = app.services

  // A browser form posts application/x-www-form-urlencoded; JSON keeps Fastify's own parser.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: GRANT_BODY_LIMIT },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  )

  async function limitDownloads(request: FastifyRequest) {
    const wait = await app.limiters.downloads.hit(request.ip)
    if (wait > 0) {
      app.metrics.rateLimitRefused('none', 'downloads')
      throw new RateLimitedError(wait, 'Too many downloads from this address.')
    }
  }

  /** Streams `file` with its validators and ranges; `counting` is the policy-free link whose GET counts. */
  async function sendFile(request: FastifyRequest, reply: FastifyReply, file: FileRow, counting?: LinkWithFile) {
    const etag = `"${file.sha256}"`
    const lastModified = new Date(file.created_at).toUTCString()
    // User content is never active on our origin: always an attachment, never sniffed, sandboxed.
    reply.headers({
      'Content-Type': file.content_type,
      'Content-Disposition': contentDisposition(file.filename, { type: 'attachment', fallback: asciiFallback(file.filename) }),
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': 'sandbox',
      ETag: etag,
      'Last-Modified': lastModified,
      'Accept-Ranges': 'bytes',
      // Revalidate every time, so that a deleted file is gone from caches at once.
      'Cache-Control': 'private, no-cache',
    })
    // Only the validators count: fetch() adds `Cache-Control: no-cache` to every conditional request,
    // which `fresh` would otherwise take as a reload and never answer 304 (RFC 9110 13.2.1).
    const { 'if-none-match': ifNoneMatch, 'if-modified-since': ifModifiedSince } = request.headers
    if (fresh({ 'if-none-match': ifNoneMatch, 'if-modified-since': ifModifiedSince }, { etag, 'last-modified': lastModified })) {
      return reply.code(304).send()
    }

    let range: ByteRange | undefined
    try {
      range = requestedRange(request, file, etag)
    } catch (error) {
      reply.header('Content-Range', `bytes */${file.size}`)
      throw error
    }
    const length = range ? range.end - range.start + 1 : file.size
    reply.code(range ? 206 : 200).header('Content-Length', String(length))
    if (range) reply.header('Content-Range', `bytes ${range.start}-${range.end}/${file.size}`)
    if (request.method === 'HEAD') return reply.send()

    const body = await downloads.open(file, range, counting)
    // The folder store reuses its read buffers once the response has written them (fs-blob-store.ts).
    ;(body as { drainsInto?: (sink: FastifyReply['raw']) => void }).drainsInto?.(reply.raw)
    return reply.send(body)
  }

  /** The offer of a link with a policy: a page for a browser, JSON for any other client. */
  function sendOffer(request: FastifyRequest, reply: FastifyReply, offer: DownloadOffer, status = 200, problem?: LandingProblem) {
    reply.header('Vary', 'Accept')
    if (prefersHtml(request.headers.accept)) {
      return reply.code(status).headers(FORM_PAGE_HEADERS).send(landingPage(offer, problem))
    }
    reply.header('Cache-Control', 'no-store')
    return reply.code(status).send({ success: true as const, download: presentOffer(offer) })
  }

  async function serveLink(request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) {
    await limitDownloads(request)
    const found = await downloads.find(request.params.token)
    if (downloads.needsConfirmation(found)) return sendOffer(request, reply, downloads.offer(found))
    return sendFile(request, reply, found.file, found)
  }

  async function serveGrant(request: FastifyRequest<{ Params: { token: string; grant: string } }>, reply: FastifyReply) {
    await limitDownloads(request)
    return sendFile(request, reply, await downloads.findGranted(request.params.token, request.params.grant))
  }

  const schema = {
    params: TokenParams,
    security: [],
    response: { 404: ErrorBody, 416: ErrorBody, 429: ErrorBody, 500: ErrorBody, 503: ErrorBody },
  }
  // The bytes (200, 206), the offer and 304 are documented, not serialised: the handler sends them itself.
  const documented =
    (responses: object): FastifyContextConfig['swaggerTransform'] =>
    ({ schema: routeSchema, url }) => ({
      schema: { ...routeSchema, response: { ...(routeSchema.response as object), ...responses } },
      url,
    })
  const linkConfig: FastifyContextConfig = { swaggerTransform: documented(DOWNLOAD_RESPONSES) }
  const grantConfig: FastifyContextConfig = { swaggerTransform: documented(GRANT_RESPONSES) }
  app.get(
    '/download/:token',
    {
      schema: {
        ...schema,
        operationId: 'downloadFile',
        summary: 'Download a file through a link (no authentication)',
        description:
          'A link without a policy streams the file. A link with a download limit or a password streams and counts nothing: it ' +
          'answers its offer (JSON, or a page with a form for a browser); POST to the same URL to download.',
      },
      config: linkConfig,
      exposeHeadRoute: false,
    },
    serveLink,
  )
  app.head(
    '/download/:token',
    {
      schema: { ...schema, operationId: 'headDownload', summary: 'The headers a GET of the link would have, without the body' },
      config: linkConfig,
    },
    serveLink,
  )

  app.post(
    '/download/:token',
    {
      bodyLimit: GRANT_BODY_LIMIT,
      // curl -X POST and fetch(url, {method: 'POST'}) send no body for a link without a password.
      preValidation: emptyBodyIsNoFields,
      schema: {
        operationId: 'grantDownload',
        summary: 'Count one download through a link and get a one-hour grant URL (no authentication)',
        description:
          'Works on every link. Form-encoded or JSON; `password` when the link has one. Answers 303 to the grant URL, so that ' +
          '`curl -L -d password=... URL -o file` and a browser form download the file.',
        params: TokenParams,
        body: GrantBody,
        security: [],
        response: { 303: GrantResponse, 400: ErrorBody, 413: ErrorBody, 415: ErrorBody, 500: ErrorBody, 503: ErrorBody },
      },
      config: { swaggerTransform: documented(GRANT_POST_RESPONSES) },
    },
    async (request, reply) => {
      await limitDownloads(request)
      try {
        const { grant, expiresAt } = await downloads.grant(request.params.token, request.body.password, publicActor(request))
        const url = `${app.config.linkBaseUrl}/download/${request.params.token}/${grant}`
        return reply
          .code(303)
          .header('Location', url)
          .header('Cache-Control', 'no-store')
          .send({ success: true as const, download_url: url, expires_at: formatUtcTime(expiresAt) })
      } catch (error) {
        // A browser that sent the form gets the page again, saying what went wrong.
        const problem: LandingProblem | undefined =
          error instanceof InvalidPasswordError
            ? request.body.password
              ? 'wrong_password'
              : 'password_required'
            : error instanceof RateLimitedError
              ? 'rate_limited'
              : undefined
        if (!prefersHtml(request.headers.accept) || !problem || !(error instanceof AppError)) throw error
        const found = await downloads.find(request.params.token)
        if (error instanceof RateLimitedError) reply.header('Retry-After', String(error.retryAfterSeconds))
        request.errorCode = error.code
        return sendOffer(request, reply, downloads.offer(found), error.status, problem)
      }
    },
  )

  app.get(
    '/download/:token/:grant',
    {
      schema: {
        params: GrantParams,
        security: [],
        response: schema.response,
        operationId: 'downloadGranted',
        summary: 'Download through a grant URL: the file, with ranges, counting nothing more (valid for an hour)',
      },
      config: grantConfig,
      exposeHeadRoute: false,
    },
    serveGrant,
  )
  app.head(
    '/download/:token/:grant',
    {
      schema: {
        params: GrantParams,
        security: [],
        response: schema.response,
        operationId: 'headDownloadGranted',
        summary: 'The headers a GET of the grant URL would have, without the bytes',
      },
      config: grantConfig,
    },
    serveGrant,
  )
}

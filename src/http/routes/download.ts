import contentDisposition from 'content-disposition'
import type { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fresh from 'fresh'
import parseRange from 'range-parser'
import { RangeNotSatisfiableError, RateLimitedError } from '../../errors.js'
import type { FileRow } from '../../db/schema.js'
import type { ByteRange } from '../../storage/blob-store.js'
import { ErrorBody, FileContent, TokenParams } from '../schemas.js'

/** What a download answers besides errors, and its 404 in both forms, for the OpenAPI document. */
const DOWNLOAD_RESPONSES = {
  404: {
    description:
      'No file behind this link (unknown, deleted, or malformed token): the JSON error body, or, when Accept ranks text/html ' +
      'above application/json, a small HTML page that is the same for every dead link.',
    content: { 'application/json': { schema: ErrorBody }, 'text/html': { schema: { type: 'string' } } },
  },
  200: { description: 'The whole file.', content: { 'application/octet-stream': { schema: FileContent } } },
  206: {
    description: 'The requested range (one range; see Content-Range).',
    content: { 'application/octet-stream': { schema: FileContent } },
  },
  304: { description: 'Not modified: the ETag or the date matches (If-None-Match, If-Modified-Since).' },
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

export const downloadRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { downloads } = app.services

  async function serve(request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) {
    const wait = await app.limiters.downloads.hit(request.ip)
    if (wait > 0) {
      app.metrics.rateLimitRefused('none', 'downloads')
      throw new RateLimitedError(wait, 'Too many downloads from this address.')
    }
    const file = await downloads.find(request.params.token)

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

    const body = await downloads.open(file, range)
    // The folder store reuses its read buffers once the response has written them (fs-blob-store.ts).
    ;(body as { drainsInto?: (sink: FastifyReply['raw']) => void }).drainsInto?.(reply.raw)
    return reply.send(body)
  }

  const schema = {
    params: TokenParams,
    security: [],
    response: { 404: ErrorBody, 416: ErrorBody, 429: ErrorBody, 500: ErrorBody, 503: ErrorBody },
  }
  // The bytes (200, 206) and 304 are documented, not serialised: the handler sends a stream.
  const config: FastifyContextConfig = {
    swaggerTransform: ({ schema: routeSchema, url }) => ({
      schema: { ...routeSchema, response: { ...(routeSchema.response as object), ...DOWNLOAD_RESPONSES } },
      url,
    }),
  }
  app.get(
    '/download/:token',
    {
      schema: { ...schema, operationId: 'downloadFile', summary: 'Download a file through its public link (no authentication)' },
      config,
      exposeHeadRoute: false,
    },
    serve,
  )
  app.head(
    '/download/:token',
    { schema: { ...schema, operationId: 'headDownload', summary: 'The headers a download would have, without the bytes' }, config },
    serve,
  )
}

import contentDisposition from 'content-disposition'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fresh from 'fresh'
import parseRange from 'range-parser'
import { RangeNotSatisfiableError, RateLimitedError } from '../../errors.js'
import type { FileRow } from '../../db/schema.js'
import type { ByteRange } from '../../storage/blob-store.js'
import { ErrorBody, TokenParams } from '../schemas.js'

/** An ASCII stand-in for old clients; content-disposition adds the UTF-8 `filename*` when they differ. */
function asciiFallback(filename: string): string {
  return filename
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]|["\\]/g, '_')
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
    if (wait > 0) throw new RateLimitedError(wait, 'Too many downloads from this address.')
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
    if (!range || range.start === 0) await downloads.count(file)
    return reply.send(body)
  }

  const schema = {
    summary: 'Download a file through its public link (no authentication)',
    params: TokenParams,
    response: { 404: ErrorBody, 416: ErrorBody, 429: ErrorBody, 503: ErrorBody },
  }
  app.get('/download/:token', { schema, exposeHeadRoute: false }, serve)
  app.head('/download/:token', { schema }, serve)
}

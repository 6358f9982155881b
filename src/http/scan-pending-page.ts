import type { FastifyReply, FastifyRequest } from 'fastify'
import { PAGE_HEADERS, page } from './html-page.js'
import { prefersHtml } from './not-found-page.js'

/** One page for every link whose file is still being scanned (required mode). */
const SCAN_PENDING_PAGE = page(
  'This file is being checked',
  `      <p>The file behind this link is being checked for viruses. It can be downloaded once the check is done.</p>
      <p>Try again in a minute.</p>`,
)

/**
 * Sends the HTML 409 to a browser that follows a public link (`/download/<token>`, or a grant URL)
 * of a file not scanned yet, and returns true; otherwise only marks the answer as varying by Accept.
 * Other clients keep the JSON body (409 scan_pending); both carry Retry-After.
 */
export function sendHtmlScanPending(request: FastifyRequest, reply: FastifyReply, retryAfterSeconds: number): boolean {
  const route = request.routeOptions.url ?? ''
  if (!route.startsWith('/download/')) return false
  reply.header('Vary', 'Accept')
  if (!prefersHtml(request.headers.accept)) return false
  reply.code(409).headers(PAGE_HEADERS).header('Retry-After', String(retryAfterSeconds)).send(SCAN_PENDING_PAGE)
  return true
}

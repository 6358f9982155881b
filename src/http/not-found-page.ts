import type { FastifyReply, FastifyRequest } from 'fastify'
import { PAGE_HEADERS, page } from './html-page.js'

/**
 * The HTML 404 that a browser gets for a dead public link (`/download/<token>`) and for an unknown
 * path under `/dashboard/`, instead of the API's JSON error body. Chosen by content negotiation
 * only: a client whose Accept header does not prefer text/html over application/json (every API
 * client, fetch() with its default `*\/*`, curl) keeps the JSON body.
 */

/** The q-value a media range list gives `type/subtype`: its most specific matching range wins (RFC 9110 12.5.1). */
function quality(ranges: { type: string; q: number }[], mediaType: string): number {
  const [main] = mediaType.split('/')
  let best: { specificity: number; q: number } = { specificity: -1, q: 0 }
  for (const range of ranges) {
    const specificity = range.type === mediaType ? 2 : range.type === `${main}/*` ? 1 : range.type === '*/*' ? 0 : -1
    if (specificity > best.specificity) best = { specificity, q: range.q }
  }
  return best.q
}

/** Whether the Accept header prefers text/html over application/json (a browser's navigation does). */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false
  const ranges = accept.split(',').map((part) => {
    const [type = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase())
    const q = parameters.find((parameter) => parameter.startsWith('q='))
    const value = q === undefined ? 1 : Number(q.slice(2))
    return { type, q: Number.isFinite(value) ? Math.min(Math.max(value, 0), 1) : 0 }
  })
  const html = quality(ranges, 'text/html')
  return html > 0 && html > quality(ranges, 'application/json')
}

/**
 * One page for every dead link: an unknown, a mistyped and a deleted file's token get the same
 * bytes, so the page tells nobody whether a link ever worked.
 */
const DOWNLOAD_PAGE = page(
  'This link no longer works',
  `      <p>There is no file to download at this address.</p>
      <p>Check that you copied the whole link, or ask the person who shared it for a new one.</p>`,
)

/** Links back go relative (`files`, `../files`), so that they also work behind a proxy that serves us under a path. */
function dashboardPage(path: string): string {
  const depth = path.slice('/dashboard/'.length).split('/').length - 1
  const files = `${'../'.repeat(depth)}files`
  return page(
    'Page not found',
    `      <p>There is no page at this address in the dashboard.</p>
      <p><a href="${files}">Go to your files</a></p>`,
  )
}

/**
 * Sends the HTML 404 when the request asks for one and returns true: GET, HEAD or POST of a public
 * link (`/download/<token>`, or a grant URL, on any host) or GET or HEAD of an unknown path under `/dashboard/`, with an Accept header
 * that prefers text/html. Otherwise it only marks the answer as varying by Accept where it could
 * have been HTML (caches must keep the two apart), and returns false.
 * `routerMiss`: no route matched (the not-found handler), as opposed to a route that found nothing.
 */
export function sendHtmlNotFound(request: FastifyRequest, reply: FastifyReply, routerMiss: boolean): boolean {
  const path = request.url.split('?')[0]!
  const route = request.routeOptions.url
  // `/download/` (no token at all) is no link anyone was given: it keeps the JSON. A browser's form
  // POSTs to the link: a link that died since its page was shown gets the same page.
  const download =
    (route === '/download/:token' && /^\/download\/[^/]+$/.test(path) && request.method !== 'OPTIONS') ||
    (route === '/download/:token/:grant' && /^\/download\/[^/]+\/[^/]+$/.test(path))
  if (request.method !== 'GET' && request.method !== 'HEAD' && !(download && request.method === 'POST')) return false
  if (!download && !(routerMiss && path.startsWith('/dashboard/'))) return false
  reply.header('Vary', 'Accept')
  if (!prefersHtml(request.headers.accept)) return false
  reply
    .code(404)
    .headers(PAGE_HEADERS)
    .send(download ? DOWNLOAD_PAGE : dashboardPage(path))
  return true
}

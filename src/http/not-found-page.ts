import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'

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

const STYLE = `
body{margin:0;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1b1f24;background:#f3f5f8}
header{background:#10213f;color:#fff;padding:.75rem 1.25rem;font-weight:700;font-size:1.15rem}
main{max-width:34rem;margin:2rem auto;padding:1.5rem 1.25rem;background:#fff;border:1px solid #c9ced6;border-radius:8px}
@media (max-width:40rem){main{margin:1rem .75rem}}
h1{font-size:1.6rem;margin:0 0 1rem}
p{margin:0 0 .75rem}
a{color:#1f4fbf}
a:focus-visible{outline:3px solid #f2a900;outline-offset:2px}
`
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64')

/** Nothing runs on these pages: no script at all, and the one inline style by its hash. */
const HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy':
    `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src data:; ` + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="robots" content="noindex">
    <title>${title} · Fileshare</title>
    <link rel="icon" href="data:,">
    <style>${STYLE}</style>
  </head>
  <body>
    <header>Fileshare</header>
    <main>
      <h1>${title}</h1>
${body}
    </main>
  </body>
</html>
`
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
 * Sends the HTML 404 when the request asks for one and returns true: GET or HEAD of a public link
 * (`/download/<token>`, on any host) or of an unknown path under `/dashboard/`, with an Accept header
 * that prefers text/html. Otherwise it only marks the answer as varying by Accept where it could
 * have been HTML (caches must keep the two apart), and returns false.
 * `routerMiss`: no route matched (the not-found handler), as opposed to a route that found nothing.
 */
export function sendHtmlNotFound(request: FastifyRequest, reply: FastifyReply, routerMiss: boolean): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false
  const path = request.url.split('?')[0]!
  // `/download/` (no token at all) is no link anyone was given: it keeps the JSON.
  const download = request.routeOptions.url === '/download/:token' && /^\/download\/[^/]+$/.test(path)
  if (!download && !(routerMiss && path.startsWith('/dashboard/'))) return false
  reply.header('Vary', 'Accept')
  if (!prefersHtml(request.headers.accept)) return false
  reply
    .code(404)
    .headers(HEADERS)
    .send(download ? DOWNLOAD_PAGE : dashboardPage(path))
  return true
}

import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import escapeHtml from 'escape-html'
import { formatUtcTime } from '../../lib/utc-time.js'
import type { GuestView } from '../../services/upload-requests.js'
import { publicActor } from '../actor.js'
import { PAGE_HEADERS, page } from '../html-page.js'
import { ErrorBody } from '../schemas.js'
import { serveTusClient } from '../tus-client-assets.js'

const ASSETS_DIR = fileURLToPath(new URL('../../../public/upload-request/', import.meta.url))

/** One page for every link that does not take files: an unknown token and a dead request's are the same bytes. */
const DEAD_PAGE = page(
  'This upload link does not work',
  `      <p>There is nowhere to send files at this address.</p>
      <p>Check that you copied the whole link, or ask the person who sent it for a new one.</p>`,
)

const PAGE_SECURITY = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src data:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  // The token is in the page's URL: it must not leave in a Referer.
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
}

/** The guest view as the page's script reads it (times in the API's UTC form). */
function viewData(view: GuestView) {
  return { ...view, expires_at: formatUtcTime(view.expires_at) }
}

/** JSON inside a <script> element: `<` escaped, so that no string can end the element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
}

/**
 * The page; the script (public/upload-request/guest.js) does the uploading. A protected request
 * shows its password form and nothing of itself until the password is given.
 */
function guestPage(view: GuestView, data: Record<string, unknown>): string {
  const title = view.password_protected ? 'Send files' : view.label
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="robots" content="noindex">
    <title>${escapeHtml(title)} · Fileshare</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="assets/guest.css">
    <script src="assets/vendor/tus.min.js" defer></script>
    <script src="assets/guest.js" type="module"></script>
  </head>
  <body>
    <header>Fileshare</header>
    <main>
      <h1 id="title" tabindex="-1">${escapeHtml(title)}</h1>
      <form id="password-form" class="password-form" novalidate${view.password_protected ? '' : ' hidden'}>
        <p>This upload link is protected. Enter the password you were given to see the request and send files.</p>
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required aria-describedby="password-error">
        <p id="password-error" class="error" role="alert"></p>
        <button type="submit" id="password-submit">Continue</button>
      </form>
      <div id="request"${view.password_protected ? ' hidden' : ''}>
        <p id="message" class="message">${escapeHtml(view.password_protected ? '' : (view.message ?? ''))}</p>
        <h2 id="limits-title">What this link takes</h2>
        <dl id="limits"></dl>
        <section aria-labelledby="send-title" class="send">
          <h2 id="send-title">Send files</h2>
          <div id="dropzone" class="dropzone">
            <p class="drag-hint">Drag files here, or</p>
            <label for="file-input" class="button" id="choose-files">Choose files</label>
            <input id="file-input" type="file" multiple class="visually-hidden" aria-describedby="resume-hint">
          </div>
          <p id="resume-hint" class="hint">Files are sent in pieces. If the connection drops, sending continues by itself. If this page is closed or reloaded, choose the same file again and it continues where it stopped.</p>
          <p id="closed" class="notice" role="alert" hidden></p>
          <h3 id="uploads-title" hidden>Your files</h3>
          <ul id="uploads" class="uploads" aria-labelledby="uploads-title"></ul>
        </section>
      </div>
      <p id="status" class="status" role="status"></p>
      <noscript><p class="error">This page needs JavaScript to send files.</p></noscript>
      <script type="application/json" id="upload-request-data">${scriptJson(data)}</script>
    </main>
  </body>
</html>
`
}

/**
 * The guest's side of an upload request (../shared/spec/upload-requests.md): the page at
 * /r/<token>, its script and style, and the grant a password gives. No session, no key: the token
 * is the guest's only credential, and the uploads go through the tus API with it.
 */
export const uploadRequestPageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { uploadRequests } = app.services
  const uploadsUrl = `${new URL(app.config.publicUrl).pathname.replace(/\/+$/, '')}/api/v1/uploads`

  await app.register(fastifyStatic, {
    root: ASSETS_DIR,
    prefix: '/assets/',
    decorateReply: false,
    index: false,
    list: false,
    allowedPath: (pathName) => pathName === '/guest.js' || pathName === '/guest.css',
  })
  await serveTusClient(app, '/assets/vendor/')

  app.get(
    '/:token',
    { schema: { hide: true, params: Type.Object({ token: Type.String({ maxLength: 200 }) }) } },
    async (request, reply) => {
      const found = await uploadRequests.findOpen(request.params.token)
      if (!found) return reply.code(404).headers(PAGE_HEADERS).send(DEAD_PAGE)
      const view = await uploadRequests.guestView(found)
      const data = {
        uploads_url: uploadsUrl,
        password_protected: view.password_protected,
        // A protected request says nothing of itself before its password.
        request: view.password_protected ? null : viewData(view),
      }
      return reply.code(200).headers(PAGE_SECURITY).send(guestPage(view, data))
    },
  )

  app.post(
    '/:token/grant',
    {
      schema: {
        operationId: 'grantUploadRequest',
        summary: "A guest's grant for a password-protected upload request (no key needed)",
        description:
          'Body `{"password": "…"}` → a grant good for 6 hours: send it as `Fileshare-Upload-Grant` with every tus request. ' +
          'With a valid grant in `Fileshare-Upload-Grant` and no password, answers the request again (what is left). ' +
          'Wrong password: 401 invalid_password; ten wrong ones per address and request in 15 minutes: 429. ' +
          'A request without a password needs no grant (this answers one anyway). A dead or unknown link: 404.',
        security: [],
        params: Type.Object({ token: Type.String({ maxLength: 200, description: "The last segment of the request's url." }) }),
        body: Type.Object({ password: Type.Optional(Type.String({ maxLength: 1024 })) }),
        response: {
          200: Type.Object({
            success: Type.Literal(true),
            grant: Type.String(),
            expires_at: Type.String(),
            request: Type.Object({}, { additionalProperties: true }),
          }),
          401: ErrorBody,
          404: ErrorBody,
          429: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      // With a valid grant in Fileshare-Upload-Grant and no password: the request read again.
      const held = request.headers['fileshare-upload-grant']
      const {
        grant,
        expiresAt,
        request: found,
      } = await uploadRequests.grant(
        request.params.token,
        request.body.password,
        publicActor(request),
        typeof held === 'string' ? held : undefined,
      )
      reply.header('Cache-Control', 'no-store')
      return {
        success: true as const,
        grant,
        expires_at: formatUtcTime(expiresAt),
        request: viewData(await uploadRequests.guestView(found)),
      }
    },
  )
}

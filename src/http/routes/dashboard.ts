import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import cookie from '@fastify/cookie'
import fastifyStatic from '@fastify/static'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { loadSession, mustEnrol } from '../plugins/dashboard-session.js'
import { sendNotFound } from '../plugins/error-handler.js'
import { dashboardApiRoutes } from './dashboard-api.js'
import { serveTusClient } from '../tus-client-assets.js'
import { serveQrCodeLibrary } from '../qr-code-assets.js'
import { NotFoundError } from '../../errors.js'

/** public/dashboard: the same path from src/http/routes and from dist/http/routes. */
const PUBLIC_DIR = fileURLToPath(new URL('../../../public/dashboard/', import.meta.url))
/** Swagger UI's browser bundle, as @fastify/swagger-ui ships it (no CDN, no install script). */
const SWAGGER_UI_DIR = path.join(path.dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui')), 'static')

/** Pages and the scripts of theirs that run in the browser. `public`: shown without a session. */
const PAGES = {
  'sign-in': { title: 'Sign in', script: 'sign-in.js', public: true },
  invite: { title: 'Choose your password', script: 'invite.js', public: true },
  files: { title: 'Files', script: 'files.js', public: false },
  usage: { title: 'Usage', script: 'usage.js', public: false },
  activity: { title: 'Activity', script: 'activity.js', public: false },
  webhooks: { title: 'Webhooks', script: 'webhooks.js', public: false },
  requests: { title: 'Upload requests', script: 'requests.js', public: false },
  settings: { title: 'Account settings', script: 'settings.js', public: false },
  reference: { title: 'API reference', script: 'reference.js', public: false },
  'get-started': { title: 'Get started', script: 'get-started.js', public: false },
} as const
type PageName = keyof typeof PAGES

const NAV: [PageName, string][] = [
  ['files', 'Files'],
  ['requests', 'Requests'],
  ['usage', 'Usage'],
  ['activity', 'Activity'],
  ['webhooks', 'Webhooks'],
  ['settings', 'Account settings'],
  ['get-started', 'Get started'],
  ['reference', 'API reference'],
]

/**
 * Same-origin scripts, styles and requests only; no inline script, no framing, no plugins.
 * Swagger UI's bundle runs under this policy too (its SVG icons are data: URLs).
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
  // Powerful browser features the dashboard never uses stay off, for its pages and anything they embed.
  'Permissions-Policy':
    'accelerometer=(), camera=(), display-capture=(), geolocation=(), gyroscope=(), magnetometer=(), microphone=(), ' +
    'midi=(), payment=(), usb=(), clipboard-read=(), clipboard-write=(self)',
}

/** What a page loads before its own script: browser builds of packages, served by us (no CDN). */
const PAGE_HEADS: Partial<Record<PageName, string>> = {
  // Resumable uploads of large files; `defer` still runs it before the page's module script.
  // files.css: finding and acting on many files; file-panel.css: a file's panel (previews, QR codes, rename).
  // The referrer: "Download as ZIP" posts a plain form (assets/files.js), whose Origin no-referrer would make "null".
  files:
    '<meta name="referrer" content="same-origin">\n    <link rel="stylesheet" href="assets/files.css">\n    <link rel="stylesheet" href="assets/file-panel.css">\n' +
    '    <script src="assets/vendor/tus.min.js" defer></script>',
  // reference.css after Swagger UI's own: its colours and the dashboard's button style, fixed for contrast.
  reference:
    '<link rel="stylesheet" href="assets/swagger-ui/swagger-ui.css">\n    <link rel="stylesheet" href="assets/reference.css">\n' +
    '    <script src="assets/swagger-ui/swagger-ui-bundle.js"></script>',
  'get-started': '<link rel="stylesheet" href="assets/get-started.css">',
  // Two-factor sign-in, sessions, email change and the width of their fields.
  'sign-in': '<link rel="stylesheet" href="assets/account.css">',
  invite: '<link rel="stylesheet" href="assets/account.css">',
  settings: '<link rel="stylesheet" href="assets/account.css">',
}

/** Fills the layout with one page. Pages hold no user data: it arrives as JSON and goes in as text. */
function renderPage(name: PageName, layout: string): string {
  const page = PAGES[name]
  const main = fs.readFileSync(path.join(PUBLIC_DIR, 'pages', `${name}.html`), 'utf8')
  const nav = page.public
    ? ''
    : fs
        .readFileSync(path.join(PUBLIC_DIR, 'pages', 'nav.html'), 'utf8')
        .replace(
          '{{links}}',
          NAV.map(([href, label]) => `<li><a href="${href}"${href === name ? ' aria-current="page"' : ''}>${label}</a></li>`).join(
            '\n        ',
          ),
        )
  const head = PAGE_HEADS[name] ?? ''
  return layout
    .replace('{{title}}', page.title)
    .replace('{{head}}', head)
    .replace('{{script}}', page.script)
    .replace('{{nav}}', nav)
    .replace('{{main}}', main)
}

/** A redirect that stays relative, so that it works behind a proxy that serves us under a path. */
function redirect(reply: FastifyReply, location: string, code = 302) {
  return reply.code(code).header('Location', location).header('Cache-Control', 'no-store').send()
}

/** Where `/dashboard` and `/dashboard/` send the browser: relative to themselves. */
function homeLocation(request: FastifyRequest): string {
  return request.url.split('?')[0]!.endsWith('/') ? 'files' : 'dashboard/files'
}

/** The account holder's web dashboard, under /dashboard: pages, their assets and the JSON endpoints. */
export const dashboardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // The dashboard is not part of the public API: keep its routes out of the OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true }
  })
  // Browsers honour Cross-Origin-Opener-Policy on https only (and complain about it on http).
  const headers = app.config.publicUrl.startsWith('https:')
    ? { ...SECURITY_HEADERS, 'Cross-Origin-Opener-Policy': 'same-origin' }
    : SECURITY_HEADERS
  app.addHook('onSend', async (_request, reply, payload) => {
    // Where absent only: the not-found page brings a stricter policy of its own.
    for (const [name, value] of Object.entries(headers)) if (!reply.hasHeader(name)) reply.header(name, value)
    const type = String(reply.getHeader('content-type') ?? '')
    if (type.startsWith('text/html') || type.startsWith('application/json')) reply.header('Cache-Control', 'no-store')
    return payload
  })
  await app.register(cookie)
  app.addHook('onRequest', loadSession(app))
  // A path no route takes is answered in this scope, so that the headers above go on it too.
  app.setNotFoundHandler(sendNotFound)

  await app.register(fastifyStatic, { root: path.join(PUBLIC_DIR, 'assets'), prefix: '/assets/', index: false, list: false })
  await app.register(fastifyStatic, {
    root: SWAGGER_UI_DIR,
    prefix: '/assets/swagger-ui/',
    decorateReply: false,
    index: false,
    allowedPath: (pathName) => pathName === '/swagger-ui.css' || pathName === '/swagger-ui-bundle.js',
  })
  await serveTusClient(app, '/assets/vendor/')
  await serveQrCodeLibrary(app, '/assets/vendor/uqr/')

  const layout = fs.readFileSync(path.join(PUBLIC_DIR, 'pages', 'layout.html'), 'utf8')
  const pages = new Map((Object.keys(PAGES) as PageName[]).map((name) => [name, renderPage(name, layout)]))

  app.get('/', async (request, reply) => redirect(reply, homeLocation(request)))
  for (const name of Object.keys(PAGES) as PageName[]) {
    app.get(`/${name}`, async (request, reply) => {
      const signedIn = request.dashboardSession !== undefined
      if (!PAGES[name].public && !signedIn) return redirect(reply, 'sign-in', 303)
      if (name === 'sign-in' && signedIn) return redirect(reply, 'files', 303)
      // A holder the operator requires a second factor of, without one: Settings (where they enrol) only.
      if (!PAGES[name].public && name !== 'settings' && mustEnrol(app, request.dashboardSession))
        return redirect(reply, 'settings#security', 303)
      return reply.type('text/html; charset=utf-8').send(pages.get(name))
    })
  }

  await app.register(dashboardApiRoutes, { prefix: '/api' })
}

/** `/` has nothing of its own: send browsers to the dashboard. */
export const rootRedirect: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    // The router files the asterisk-form target (`GET *`) under `/` too; it names no page.
    if (!request.url.startsWith('/')) throw new NotFoundError(`No route for ${request.method} ${request.url}.`)
    return redirect(reply, 'dashboard/files')
  })
}

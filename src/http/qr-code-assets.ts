import path from 'node:path'
import { createRequire } from 'node:module'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'

/**
 * uqr's ES module build: one self-contained file (no imports), which a browser can import as it is.
 * The package exports no package.json: its CommonJS entry sits beside the module in dist/.
 */
const UQR_DIR = path.dirname(createRequire(import.meta.url).resolve('uqr'))

/** Serves uqr's ES module under `prefix` (`<prefix>index.mjs`), for the QR codes of links in the dashboard: no CDN. */
export async function serveQrCodeLibrary(app: FastifyInstance, prefix: string): Promise<void> {
  await app.register(fastifyStatic, {
    root: UQR_DIR,
    prefix,
    decorateReply: false,
    index: false,
    allowedPath: (pathName) => pathName === '/index.mjs',
    // A module script needs a JavaScript type (the page sends nosniff): said here, not left to a MIME table.
    setHeaders: (response) => {
      response.setHeader('Content-Type', 'text/javascript; charset=utf-8')
    },
  })
}

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
    // A module script needs a JavaScript type under nosniff: @fastify/send's table gives .mjs one.
    allowedPath: (pathName) => pathName === '/index.mjs',
  })
}

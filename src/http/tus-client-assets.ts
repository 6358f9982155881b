import path from 'node:path'
import { createRequire } from 'node:module'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'

/** tus-js-client's browser build (a UMD script that defines `window.tus`), as the installed package ships it. */
const TUS_CLIENT_DIR = path.join(path.dirname(createRequire(import.meta.url).resolve('tus-js-client/package.json')), 'dist')

/** Serves tus-js-client's browser build (and its map) under `prefix`, for the pages that upload: no CDN. */
export async function serveTusClient(app: FastifyInstance, prefix: string): Promise<void> {
  await app.register(fastifyStatic, {
    root: TUS_CLIENT_DIR,
    prefix,
    decorateReply: false,
    index: false,
    allowedPath: (pathName) => pathName === '/tus.min.js' || pathName === '/tus.min.js.map',
  })
}

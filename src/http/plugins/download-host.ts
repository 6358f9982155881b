import fp from 'fastify-plugin'
import { NotFoundError } from '../../errors.js'

/**
 * What the download host (FILESHARE_DOWNLOAD_URL) serves. Everything else there answers 404, so no
 * API or dashboard ever shares an origin with user content. Downloads on other hosts keep working:
 * links handed out before the download host was configured must not break.
 */
const DOWNLOAD_HOST_ROUTES = new Set(['/download/:token', '/download/:token/:grant', '/healthz', '/readyz'])

export default fp<{ downloadHost: string | undefined }>(
  async (app, { downloadHost }) => {
    if (!downloadHost) return
    app.addHook('onRequest', async (request) => {
      // Host names are case-insensitive, and `name.` is the same host as `name`.
      if (request.hostname.toLowerCase().replace(/\.$/, '') !== downloadHost) return
      // A link's counted POST (links.md) belongs to the download too.
      const served =
        request.method === 'GET' ||
        request.method === 'HEAD' ||
        (request.method === 'POST' && request.routeOptions.url === '/download/:token')
      if (served && DOWNLOAD_HOST_ROUTES.has(request.routeOptions.url ?? '')) return
      throw new NotFoundError(`No route for ${request.method} ${request.url.split('?')[0]}.`)
    })
  },
  { name: 'download-host', dependencies: ['error-handler'] },
)

import { realpathSync } from 'node:fs'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { pathToFileURL } from 'node:url'
import { buildApp, type App } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { BackendUnreachableError } from './errors.js'
import { http } from './lib/node-http.js'

/**
 * GET /metrics (Prometheus text format) on FILESHARE_METRICS_ADDR: a plain listener of its own,
 * never the API's, so that the public port has no /metrics whatever a proxy forwards.
 */
async function startMetricsListener(app: App): Promise<Server | undefined> {
  const { registry } = app.metrics
  const address = app.config.metrics
  if (!registry || !address) return undefined
  const server = http.createServer((request, response) => {
    if (request.url?.split('?')[0] !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Only GET /metrics here.\n')
      return
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'Content-Type': registry.contentType }).end(request.method === 'HEAD' ? undefined : text),
      (error: unknown) => {
        app.log.error({ err: error }, 'metrics could not be collected')
        response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Metrics could not be collected.\n')
      },
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(address.port, address.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { address: host, port } = server.address() as AddressInfo
  app.log.info({ metricsUrl: `http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics` }, 'metrics are served')
  return server
}

/** Starts the service and stops it gracefully on SIGTERM/SIGINT. */
export async function startServer(config: Config) {
  const app = await buildApp(config)
  // Before the API: a metrics address that cannot be had stops the start, before any traffic.
  let metricsServer: Server | undefined
  try {
    metricsServer = await startMetricsListener(app)
  } catch (error) {
    await app.close()
    throw error
  }
  await app.listen({ port: config.port, host: config.host })
  app.log.info({ publicUrl: config.publicUrl, dataDir: config.dataDir }, 'fileshare is serving')
  if (config.redisUrl) app.log.info('rate limits are kept in Redis, shared by every instance')
  else
    app.log.warn(
      'rate limits are kept in this process (in memory): exact for a single instance only; set FILESHARE_REDIS_URL to run several',
    )

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    app.log.info({ signal }, 'stopping: no new connections, waiting for requests in flight')
    // In-flight requests get a bounded time to finish; then their connections are cut.
    const deadline = setTimeout(() => {
      app.log.warn('shutdown deadline reached: closing remaining connections')
      app.server.closeAllConnections()
    }, config.shutdownTimeoutMs)
    deadline.unref()
    try {
      await app.close()
      metricsServer?.close()
      process.exit(0)
    } catch (error) {
      app.log.error({ err: error }, 'error while stopping')
      process.exit(1)
    }
  }
  process.once('SIGTERM', () => void stop('SIGTERM'))
  process.once('SIGINT', () => void stop('SIGINT'))
  return app
}

// Node runs the main module from its real path (symlinks resolved, URL-encoded), so compare like with like;
// a symlinked release folder or a path with spaces must still start the server.
function isMainModule(): boolean {
  try {
    return process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href
  } catch {
    return false
  }
}
const isEntryPoint = isMainModule()
if (isEntryPoint) {
  try {
    await startServer(loadConfig())
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message)
      process.exit(2)
    }
    if (error instanceof BackendUnreachableError) {
      console.error(`fileshare: ${error.message}`)
      process.exit(1)
    }
    throw error
  }
}

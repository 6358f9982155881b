import { realpathSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { buildApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'

/** Starts the service and stops it gracefully on SIGTERM/SIGINT. */
export async function startServer(config: Config) {
  const app = await buildApp(config)
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
    throw error
  }
}

import { buildApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'

/** Starts the service and stops it gracefully on SIGTERM/SIGINT. */
export async function startServer(config: Config) {
  const app = await buildApp(config)
  await app.listen({ port: config.port, host: config.host })
  app.log.info({ publicUrl: config.publicUrl, dataDir: config.dataDir }, 'fileshare is serving')
  app.log.info('rate limits are kept in this process (in memory)')

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

const isEntryPoint = import.meta.url === `file://${process.argv[1]}`
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

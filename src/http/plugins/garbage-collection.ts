import fp from 'fastify-plugin'

/**
 * Sweeps the store for garbage (see services/garbage-collector.ts) every FILESHARE_GC_INTERVAL_MS,
 * the first time one interval after start; 0 turns it off. The next sweep is scheduled only when
 * the last one has ended, so sweeps never overlap. A failed sweep is logged and the next one runs
 * as planned. The timer never keeps the process alive, and closing the app stops it.
 */
export default fp(
  async (app) => {
    const { gcIntervalMs: intervalMs, gcGraceMs: graceMs } = app.config
    if (intervalMs === 0) return
    const stop = new AbortController()
    let timer: NodeJS.Timeout | undefined
    let sweeping: Promise<void> | undefined

    const sweep = async () => {
      try {
        const report = await app.services.garbageCollector.collect({ graceMs, signal: stop.signal })
        app.log.info({ gc: report }, 'garbage collection swept')
        app.metrics.gcSwept(report)
      } catch (error) {
        app.log.error({ err: error }, 'garbage collection failed')
        app.metrics.gcSwept(undefined)
      }
    }
    const schedule = () => {
      timer = setTimeout(() => {
        sweeping = sweep().finally(() => {
          sweeping = undefined
          if (!stop.signal.aborted) schedule()
        })
      }, intervalMs)
      timer.unref()
    }

    app.addHook('onReady', async () => schedule())
    // preClose, not onClose: a sweep under way must end before the database closes.
    app.addHook('preClose', async () => {
      stop.abort()
      clearTimeout(timer)
      await sweeping
    })
  },
  { name: 'garbage-collection', dependencies: ['backends', 'observability'] },
)

import fp from 'fastify-plugin'

/**
 * Runs the virus scanner (services/scanner.ts) while the server runs, when FILESHARE_CLAMD is set.
 * clamd not answering at start is a warning, never a refusal to start: files wait, pending, until it
 * answers (in required mode nothing unscanned is served meanwhile).
 */
export default fp(
  async (app) => {
    const scanner = app.services.scanner
    const scan = app.config.scan
    if (!scanner || !scan) return
    app.metrics.watchScanBacklog(() => scanner.pending())
    app.addHook('onReady', async () => {
      const where = 'path' in scan.clamd ? `unix:${scan.clamd.path}` : `tcp://${scan.clamd.host}:${scan.clamd.port}`
      try {
        await scanner.ping()
        app.log.info({ clamd: where, mode: scan.mode }, 'virus scanning with clamd')
      } catch (error) {
        app.log.warn(
          { err: error, clamd: where, mode: scan.mode },
          `clamd does not answer at ${where}: files wait, pending, until it does` +
            (scan.mode === 'required' ? ' (and are not served meanwhile)' : ''),
        )
      }
      scanner.start()
    })
    // preClose, not onClose: scans in flight record their verdict before the database closes.
    app.addHook('preClose', async () => scanner.stop())
  },
  { name: 'scanning', dependencies: ['backends', 'observability'] },
)

import fp from 'fastify-plugin'

/**
 * Runs the webhook dispatcher (services/webhook-dispatcher.ts) while the server runs, unless
 * FILESHARE_WEBHOOKS_DELIVER=false; closing the app stops it after the attempts in flight.
 */
export default fp(
  async (app) => {
    const dispatcher = app.services.webhookDispatcher
    app.metrics.watchWebhookBacklog(() => dispatcher.oldestPendingAge())
    if (!app.config.webhooks.deliver) return
    app.addHook('onReady', async () => dispatcher.start())
    // preClose, not onClose: attempts in flight record their outcome before the database closes.
    app.addHook('preClose', async () => dispatcher.stop())
  },
  { name: 'webhook-dispatch', dependencies: ['backends', 'observability'] },
)

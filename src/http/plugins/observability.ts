import type { WebhookEvents } from '../../services/webhook-dispatcher.js'
import type { ScanEvents } from '../../services/scanner.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Counter, Gauge, Histogram, Metric, Registry } from 'prom-client'
import { NO_UPLOAD_EVENTS, type UploadEvents } from '../../services/upload-events.js'
import { RequestDurations } from '../request-durations.js'
import { CLIENT_CLOSED_STATUS } from './error-handler.js'

/**
 * The access log and the Prometheus metrics, at the cost of one hook on the way in and one on the
 * way out (docs/reliability.md, "Access log" and "Metrics").
 *
 * Access log: one line per request, at level info, in place of Fastify's two (incoming and
 * completed). It names the route's pattern, never the raw URL: a public link's token appears only
 * as a short prefix, and no header is ever logged (the Authorization header stays redacted anyway).
 *
 * Metrics exist only when FILESHARE_METRICS_ADDR is set (prom-client is not even loaded otherwise),
 * in a registry of this app's own. They are counted where each fact is known: request durations,
 * bytes downloaded and refused or failed uploads here, by the HTTP answer; rate-limit refusals
 * where the HTTP layer refuses (authenticate.ts, download.ts); garbage collection by its plugin;
 * bytes kept and files stored by the upload services themselves, through the UploadEvents
 * interface they are given (services/upload-events.ts), since a resumable upload completes and
 * commits its bytes in places no single HTTP answer reveals.
 */

/** Which rate limit refused a request: an account's request limits, or a per-IP guard. */
export type RefusedLimit = 'requests' | 'auth_failures' | 'downloads'

export interface Metrics {
  /** The registry GET /metrics serves (server.ts); undefined when metrics are off. */
  readonly registry: Registry | undefined
  /** Handed to the upload services (plugins/backends.ts). */
  readonly uploadEvents: UploadEvents
  /** A request refused by a rate limit; `plan` is the account's, or `none` before any key was accepted. */
  rateLimitRefused(plan: string, limit: RefusedLimit): void
  /** A garbage-collection sweep ended: its report, or undefined when it failed. */
  gcSwept(report: { bytesFreed: number; interrupted: boolean } | undefined): void
  /** Handed to the webhook dispatcher (plugins/backends.ts): each attempt. */
  readonly webhookEvents: WebhookEvents
  /** Where the age of the oldest pending webhook message comes from, read at each scrape. */
  watchWebhookBacklog(oldestPendingAgeMs: () => Promise<number>): void
  /** Handed to the virus scanner (plugins/backends.ts): each scan. */
  readonly scanEvents: ScanEvents
  /** Where the number of files waiting for a scan comes from, read at each scrape. */
  watchScanBacklog(pendingCount: () => Promise<number>): void
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
  interface FastifyRequest {
    /** socket.bytesWritten when the request arrived: what was written since is this request's answer. */
    bytesWrittenAtStart: number
    /** Whether its access line and metrics are written: once, when its answer ends or its client leaves first. */
    answerObserved: boolean
  }
}

const NO_METRICS: Metrics = {
  registry: undefined,
  uploadEvents: NO_UPLOAD_EVENTS,
  rateLimitRefused: () => {},
  gcSwept: () => {},
  webhookEvents: { attempted: () => {} },
  watchWebhookBacklog: () => {},
  scanEvents: { scanned: () => {} },
  watchScanBacklog: () => {},
}

/** How much of a public link's token a log line shows. */
const TOKEN_PREFIX_LENGTH = 6
/** The longest path of an unknown route that a log line shows. */
const MAX_LOGGED_PATH = 120

function tokenPrefix(token: string): string {
  return token.length > TOKEN_PREFIX_LENGTH ? `${token.slice(0, TOKEN_PREFIX_LENGTH)}…` : token
}

/**
 * The path of a request no route matched, without its query, cut short, a token (a download link's,
 * an upload request's guest link's) only as a prefix.
 */
function unmatchedPath(url: string): string {
  const path = url
    .split('?')[0]!
    .replace(/(\/download\/|\/r\/)([^/]*)/g, (_match, lead: string, token: string) => lead + tokenPrefix(token))
  return path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path
}

/**
 * The body bytes this request's answer put on its connection: all that was written since it
 * arrived, less the status line and headers (and a `100 Continue`). Exact for an answer cut short
 * too, where Content-Length would claim the whole body.
 */
function bodyBytesSent(request: FastifyRequest, reply: FastifyReply): number {
  const written = (request.raw.socket?.bytesWritten ?? request.bytesWrittenAtStart) - request.bytesWrittenAtStart
  // Node's own fields: the header block it wrote, and whether an interim 100 Continue went first.
  const response = reply.raw as unknown as { _header?: string | null; _sent100?: boolean }
  const headerBytes = (response._header?.length ?? 0) + (response._sent100 ? 'HTTP/1.1 100 Continue\r\n\r\n'.length : 0)
  return Math.max(0, written - headerBytes)
}

/** Which upload a route receives, if any: the multipart upload, or the requests that carry a resumable upload's bytes. */
function uploadKind(method: string, route: string): 'multipart' | 'resumable' | undefined {
  if (method === 'POST' && route.endsWith('/files/upload')) return 'multipart'
  if ((method === 'POST' && route.endsWith('/uploads')) || (method === 'PATCH' && route.endsWith('/uploads/:upload_id'))) {
    return 'resumable'
  }
  return undefined
}

interface Instruments {
  registry: Registry
  duration: RequestDurations
  uploadedBytes: Counter
  downloadedBytes: Counter
  uploads: Counter<'kind' | 'outcome' | 'code'>
  rateLimitRefusals: Counter<'plan' | 'limit'>
  gcRuns: Counter<'outcome'>
  gcBytesReclaimed: Counter
  webhookAttempts: Histogram<'outcome'>
  webhookBacklog: Gauge
  webhookBacklogSource: { read?: () => Promise<number> }
  scans: Histogram<'result'>
  scanBacklogSource: { read?: () => Promise<number> }
}

/**
 * The one histogram every request observes, kept by a counter of its own (request-durations.ts:
 * prom-client's observe cost some 2.5 µs a request) and read by the registry like any other metric.
 */
function requestDurations(registry: Registry): RequestDurations {
  const durations = new RequestDurations({
    name: 'http_request_duration_seconds',
    help: 'Time from the request to the end of its answer, by method, route pattern and status.',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  })
  // The registry reads a metric through its name, get() (and reset()); prom-client's type names only its own classes.
  registry.registerMetric(durations as unknown as Metric)
  return durations
}

/** prom-client is loaded only here, when metrics are on: it costs every start some 30 ms. */
async function createInstruments(): Promise<Instruments> {
  const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = await import('prom-client')
  // Our own registry, never prom-client's global one: each app (and each test's app) counts alone.
  const registry = new Registry()
  // Process CPU, memory, handles, GC, and event-loop lag (nodejs_eventloop_lag_*).
  collectDefaultMetrics({ register: registry })
  const registers = [registry]
  // Read at each scrape, so that it always says what the outbox holds now.
  const webhookBacklogSource: { read?: () => Promise<number> } = {}
  const webhookBacklog = new Gauge({
    name: 'fileshare_webhook_oldest_pending_seconds',
    help: 'Age of the oldest webhook message not yet delivered (0: none), across every instance.',
    registers,
    async collect() {
      if (webhookBacklogSource.read) this.set((await webhookBacklogSource.read()) / 1000)
    },
  })
  const scanBacklogSource: { read?: () => Promise<number> } = {}
  new Gauge({
    name: 'fileshare_scan_pending_files',
    help: 'Files waiting for a virus scan, across every instance (0 when scanning is off).',
    registers,
    async collect() {
      if (scanBacklogSource.read) this.set(await scanBacklogSource.read())
    },
  })
  return {
    registry,
    scans: new Histogram({
      name: 'fileshare_scan_duration_seconds',
      help: 'Virus scans of this process by result (clean, infected, skipped, error, retry: no verdict), and how long each took.',
      labelNames: ['result'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    }),
    scanBacklogSource,
    duration: requestDurations(registry),
    uploadedBytes: new Counter({
      name: 'fileshare_uploaded_bytes_total',
      help: 'Bytes of uploads kept: the files of one-request uploads, the committed chunks of resumable uploads.',
      registers,
    }),
    downloadedBytes: new Counter({
      name: 'fileshare_downloaded_bytes_total',
      help: 'Bytes of files sent by GET /download/{token} and its grant URLs, including answers cut short.',
      registers,
    }),
    uploads: new Counter({
      name: 'fileshare_uploads_total',
      help: 'Uploads by kind (multipart, resumable) and outcome: stored (a file), refused (4xx, with its code), failed (5xx).',
      labelNames: ['kind', 'outcome', 'code'] as const,
      registers,
    }),
    rateLimitRefusals: new Counter({
      name: 'fileshare_rate_limit_refusals_total',
      help: "Requests refused with 429, by the account's plan (none: no key accepted yet) and the limit.",
      labelNames: ['plan', 'limit'] as const,
      registers,
    }),
    gcRuns: new Counter({
      name: 'fileshare_gc_runs_total',
      help: 'Garbage-collection sweeps of this process, by outcome (ok, interrupted, failed).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    gcBytesReclaimed: new Counter({
      name: 'fileshare_gc_bytes_reclaimed_total',
      help: 'Bytes the garbage collector of this process removed from storage.',
      registers,
    }),
    webhookAttempts: new Histogram({
      name: 'fileshare_webhook_attempt_duration_seconds',
      help: 'Webhook delivery attempts of this process by outcome (succeeded, retrying, failed), and how long each took.',
      labelNames: ['outcome'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers,
    }),
    webhookBacklog,
    webhookBacklogSource,
  }
}

function metricsOf(instruments: Instruments): Metrics {
  return {
    registry: instruments.registry,
    uploadEvents: {
      bytesKept: (bytes) => instruments.uploadedBytes.inc(bytes),
      fileStored: (via) => instruments.uploads.inc({ kind: via, outcome: 'stored', code: '' }),
    },
    rateLimitRefused: (plan, limit) => instruments.rateLimitRefusals.inc({ plan, limit }),
    gcSwept(report) {
      instruments.gcRuns.inc({ outcome: report ? (report.interrupted ? 'interrupted' : 'ok') : 'failed' })
      if (report) instruments.gcBytesReclaimed.inc(report.bytesFreed)
    },
    webhookEvents: {
      attempted: (outcome, durationMs) => instruments.webhookAttempts.observe({ outcome }, durationMs / 1000),
    },
    watchWebhookBacklog(oldestPendingAgeMs) {
      instruments.webhookBacklogSource.read = oldestPendingAgeMs
    },
    scanEvents: {
      scanned: (result, durationMs) => instruments.scans.observe({ result }, durationMs / 1000),
    },
    watchScanBacklog(pendingCount) {
      instruments.scanBacklogSource.read = pendingCount
    },
  }
}

export default fp(
  async (app, { metricsOn }: { metricsOn: boolean }) => {
    const instruments = metricsOn ? await createInstruments() : undefined
    app.decorate('metrics', instruments ? metricsOf(instruments) : NO_METRICS)
    // pino's own check (Fastify's logger type leaves it out); a logger without it gets the lines.
    const logging = (app.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info') ?? true
    if (!instruments && !logging) return

    // The access line's fields are all set below, never a header. The app's wildcard redaction
    // (`*.headers.authorization`, app.ts) ran on each of its fields, several µs per line; this
    // child keeps only the top-level path, which the line never has either. reqId goes first,
    // where request.log's binding put it, so the line reads as before.
    const accessLog = app.log.child({}, { redact: { paths: ['headers.authorization'], censor: '[redacted]' } })
    app.decorateRequest('bytesWrittenAtStart', 0)
    app.decorateRequest('answerObserved', false)

    /**
     * A request whose client closes the connection while the service still reads its body (an
     * upload cut part-way) never ends its answer: Fastify's onResponse waits for a 'finish' or an
     * 'error' of the response that do not come. Such a request is observed when its connection
     * closes, as 499 (nginx's "client closed request") unless an answer had begun. Only requests
     * with a body get the listener: a request without one is read whole before any work starts,
     * and a listener on every request would cost every request.
     */
    const observeIfLeft = (request: FastifyRequest, reply: FastifyReply) => () => {
      if (!reply.raw.writableFinished) observeAnswer(request, reply, reply.raw.headersSent ? reply.statusCode : CLIENT_CLOSED_STATUS)
    }

    app.addHook('onRequest', (request, reply, done) => {
      request.bytesWrittenAtStart = request.raw.socket?.bytesWritten ?? 0
      const { headers } = request
      const declared = headers['content-length']
      if (declared === undefined ? headers['transfer-encoding'] !== undefined : declared !== '0') {
        reply.raw.once('close', observeIfLeft(request, reply))
      }
      done()
    })

    app.addHook('onResponse', (request, reply, done) => {
      observeAnswer(request, reply, reply.statusCode)
      done()
    })

    // A request without a body whose client left while the service worked on it (a GET held by a
    // stalled backend): its answer goes nowhere and onResponse never comes, so it is observed here,
    // as 499, when the service hands over an answer the connection can no longer carry.
    app.addHook('onSend', (request, reply, payload, done) => {
      if (request.raw.socket?.destroyed && !reply.raw.headersSent) observeAnswer(request, reply, CLIENT_CLOSED_STATUS)
      done(null, payload)
    })

    /** The access line and the metrics of one request, once. */
    function observeAnswer(request: FastifyRequest, reply: FastifyReply, status: number): void {
      if (request.answerObserved) return
      request.answerObserved = true
      const { method } = request
      const route = request.routeOptions.url
      const bytes = bodyBytesSent(request, reply)
      // A getter that may read the clock: once for both the histogram and the line.
      const elapsedMs = reply.elapsedTime
      if (instruments) {
        instruments.duration.observe(method, route ?? '(unmatched)', status, elapsedMs / 1000)
        if ((route === '/download/:token' || route === '/download/:token/:grant') && method === 'GET')
          instruments.downloadedBytes.inc(bytes)
        const kind = status >= 400 && route ? uploadKind(method, route) : undefined
        if (kind) {
          const outcome = status === CLIENT_CLOSED_STATUS ? 'aborted' : status >= 500 ? 'failed' : 'refused'
          instruments.uploads.inc({ kind, outcome, code: outcome === 'aborted' ? 'client_closed' : (request.errorCode ?? String(status)) })
        }
      }
      if (logging) {
        const line: Record<string, unknown> = { reqId: request.id, method, route: route ?? null }
        if (!route) line.path = unmatchedPath(request.url)
        const token = (request.params as { token?: unknown } | undefined)?.token
        if (typeof token === 'string') line.token = tokenPrefix(token)
        line.status = status
        if (request.errorCode) line.error = request.errorCode
        line.res_bytes = bytes
        const declared = request.headers['content-length']
        if (declared !== undefined) line.req_bytes = Number(declared)
        line.duration_ms = Math.round(elapsedMs * 10) / 10
        const principal = request.principal as { keyId: number; account: { id: number } } | undefined
        if (principal) {
          line.account_id = principal.account.id
          // 0: a dashboard session, no key.
          if (principal.keyId) line.key_id = principal.keyId
        }
        line.ip = request.ip
        if (!reply.raw.writableFinished) line.aborted = true
        accessLog.info(line, 'request completed')
      }
    }
  },
  { name: 'observability' },
)

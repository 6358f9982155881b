import fs from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { eventually, freePort, outputOf, startServerProcess, stopServerProcess } from '../helpers/server-process.js'
import { bearer, makeTempDir, startTestApp, uploadFile, type TestApp } from '../helpers/test-app.js'

/** The Prometheus metrics (src/http/plugins/observability.ts), read from the app's own registry after real requests. */

const TUS = { 'tus-resumable': '1.0.0' }
const METRICS_ON = { FILESHARE_METRICS_ADDR: '127.0.0.1:0' }

/** The value of one series of `name` whose labels include `labels` (0 when there is none yet). */
async function metric(t: TestApp, name: string, labels: Record<string, string> = {}): Promise<number> {
  const registry = t.app.metrics.registry!
  const found = (await registry.getMetricsAsJSON()).find((entry) => entry.name === name)
  if (!found) throw new Error(`no metric ${name}`)
  const values = (found as unknown as { values: Array<{ value: number; labels: Record<string, string | number>; metricName?: string }> })
    .values
  return values
    .filter((value) => (value.metricName ?? name) === name)
    .filter((value) => Object.entries(labels).every(([key, wanted]) => String(value.labels[key]) === wanted))
    .reduce((sum, value) => sum + value.value, 0)
}

/** How many requests the duration histogram counted for these labels. */
async function requestCount(t: TestApp, labels: Record<string, string>): Promise<number> {
  const found = (await t.app.metrics.registry!.getMetricsAsJSON()).find((entry) => entry.name === 'http_request_duration_seconds')
  const values = (found as unknown as { values: Array<{ value: number; labels: Record<string, string | number>; metricName: string }> })
    .values
  return values
    .filter((value) => value.metricName === 'http_request_duration_seconds_count')
    .filter((value) => Object.entries(labels).every(([key, wanted]) => String(value.labels[key]) === wanted))
    .reduce((sum, value) => sum + value.value, 0)
}

/** The metrics are counted once the answer is out: wait for `probe` to reach `expected`. */
async function settles(probe: () => Promise<number>, expected: number): Promise<void> {
  await eventually(`metric reaching ${expected}`, async () => ((await probe()) === expected ? true : undefined), 2_000, 10).catch(
    async () => expect(await probe()).toBe(expected),
  )
}

describe('metrics of an app', () => {
  let t: TestApp
  let account: { accountId: number; apiKey: string }

  beforeAll(async () => {
    t = await startTestApp({
      ...METRICS_ON,
      FILESHARE_AUTH_FAILURES_PER_MINUTE: '1',
      FILESHARE_PLANS: JSON.stringify({ business: { requests_per_minute: 1, max_file_size: 10 } }),
    })
    account = await t.createAccount('pro')
  })
  afterAll(async () => {
    await t.close()
  })

  it('times every request by method, route pattern and status', async () => {
    const { body } = await uploadFile(t, account.apiKey, 'timed')
    const labels = { method: 'GET', route: '/api/v1/files/:file_id', status_code: '200' }
    const before = await requestCount(t, labels)
    for (let i = 0; i < 3; i++) await (await fetch(`${t.api}/files/${body.file_id}`, { headers: bearer(account.apiKey) })).arrayBuffer()
    await settles(() => requestCount(t, labels), before + 3)
    // Its buckets and sum as a scrape shows them (the histogram is src/http/request-durations.ts, not prom-client's).
    const text = await t.app.metrics.registry!.metrics()
    const series = 'method="GET",route="/api/v1/files/:file_id",status_code="200"'
    expect(text).toContain(`http_request_duration_seconds_bucket{le="+Inf",${series}} ${before + 3}`)
    expect(text).toMatch(
      /^http_request_duration_seconds_bucket\{le="0\.001",method="GET",route="\/api\/v1\/files\/:file_id",status_code="200"\} \d+$/m,
    )
    expect(
      Number(
        /^http_request_duration_seconds_sum\{method="GET",route="\/api\/v1\/files\/:file_id",status_code="200"\} (\S+)$/m.exec(text)?.[1],
      ),
    ).toBeGreaterThan(0)
    await (await fetch(`${t.url}/no/such/path`)).arrayBuffer()
    await settles(() => requestCount(t, { route: '(unmatched)', status_code: '404' }), 1)
  })

  it('counts multipart uploads: bytes kept, stored, refused with their code', async () => {
    const bytes = await metric(t, 'fileshare_uploaded_bytes_total')
    const stored = await metric(t, 'fileshare_uploads_total', { kind: 'multipart', outcome: 'stored' })
    expect((await uploadFile(t, account.apiKey, '0123456789abcdef')).response.status).toBe(201)
    await settles(() => metric(t, 'fileshare_uploaded_bytes_total'), bytes + 16)
    expect(await metric(t, 'fileshare_uploads_total', { kind: 'multipart', outcome: 'stored' })).toBe(stored + 1)

    const small = await t.createAccount('business')
    expect((await uploadFile(t, small.apiKey, 'more than ten bytes')).response.status).toBe(403)
    await settles(() => metric(t, 'fileshare_uploads_total', { kind: 'multipart', outcome: 'refused', code: 'file_too_large' }), 1)
    expect(await metric(t, 'fileshare_uploaded_bytes_total')).toBe(bytes + 16)
  })

  it('counts resumable uploads: each committed chunk, the file once complete, refused chunks', async () => {
    const bytes = await metric(t, 'fileshare_uploaded_bytes_total')
    const created = await fetch(`${t.api}/uploads`, {
      method: 'POST',
      headers: { ...bearer(account.apiKey), ...TUS, 'upload-length': '6' },
    })
    expect(created.status).toBe(201)
    const url = `${t.url}${created.headers.get('location')!}`
    const patch = (offset: number, body: string) =>
      fetch(url, {
        method: 'PATCH',
        headers: { ...bearer(account.apiKey), ...TUS, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
        body,
      })
    expect((await patch(0, 'abc')).status).toBe(204)
    await settles(() => metric(t, 'fileshare_uploaded_bytes_total'), bytes + 3)
    expect(await metric(t, 'fileshare_uploads_total', { kind: 'resumable', outcome: 'stored' })).toBe(0)
    expect((await patch(1, 'zzz')).status).toBe(409)
    await settles(() => metric(t, 'fileshare_uploads_total', { kind: 'resumable', outcome: 'refused', code: 'upload_offset_mismatch' }), 1)
    expect((await patch(3, 'def')).status).toBe(204)
    await settles(() => metric(t, 'fileshare_uploaded_bytes_total'), bytes + 6)
    expect(await metric(t, 'fileshare_uploads_total', { kind: 'resumable', outcome: 'stored' })).toBe(1)
    // A HEAD after completion stores nothing more.
    await fetch(url, { method: 'HEAD', headers: { ...bearer(account.apiKey), ...TUS } })
    expect(await metric(t, 'fileshare_uploads_total', { kind: 'resumable', outcome: 'stored' })).toBe(1)
  })

  it('counts an upload its client cut off part-way: aborted, timed as 499', async () => {
    const timed = { method: 'POST', route: '/api/v1/files/upload', status_code: '499' }
    const before = await requestCount(t, timed)
    const boundary = 'cutboundary'
    const { hostname, port } = new URL(t.url)
    const socket = net.connect(Number(port), hostname)
    socket.on('error', () => {})
    await new Promise<void>((resolve) => socket.once('connect', resolve))
    socket.write(
      `POST /api/v1/files/upload HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${account.apiKey}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${1024 * 1024}\r\n\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n`,
    )
    await new Promise<void>((resolve) => socket.write(Buffer.alloc(64 * 1024, 1), () => resolve()))
    // Cut once the service reads the upload (a fixed pause: nothing else tells it).
    await new Promise((resolve) => setTimeout(resolve, 200))
    socket.destroy()
    await settles(() => metric(t, 'fileshare_uploads_total', { kind: 'multipart', outcome: 'aborted', code: 'client_closed' }), 1)
    await settles(() => requestCount(t, timed), before + 1)
    // Observed once, whatever else the response does later.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await requestCount(t, timed)).toBe(before + 1)
    expect(await metric(t, 'fileshare_uploads_total', { kind: 'multipart', outcome: 'refused', code: '499' })).toBe(0)
  })

  it('counts the bytes downloads sent: whole files, ranges, none for HEAD', async () => {
    const { body } = await uploadFile(t, account.apiKey, 'x'.repeat(1000))
    const before = await metric(t, 'fileshare_downloaded_bytes_total')
    await (await fetch(body.public_link.replace('http://files.example.test', t.url))).arrayBuffer()
    await settles(() => metric(t, 'fileshare_downloaded_bytes_total'), before + 1000)
    const link = body.public_link.replace('http://files.example.test', t.url)
    await (await fetch(link, { headers: { range: 'bytes=10-109' } })).arrayBuffer()
    await settles(() => metric(t, 'fileshare_downloaded_bytes_total'), before + 1100)
    await fetch(link, { method: 'HEAD' })
    expect(await metric(t, 'fileshare_downloaded_bytes_total')).toBe(before + 1100)
  })

  it('counts rate-limit refusals by plan and limit', async () => {
    const limited = await t.createAccount('business')
    await (await fetch(`${t.api}/files`, { headers: bearer(limited.apiKey) })).arrayBuffer()
    expect((await fetch(`${t.api}/files`, { headers: bearer(limited.apiKey) })).status).toBe(429)
    await settles(() => metric(t, 'fileshare_rate_limit_refusals_total', { plan: 'business', limit: 'requests' }), 1)

    const wrong = bearer(`fsk_${'B'.repeat(43)}`)
    expect((await fetch(`${t.api}/files`, { headers: wrong })).status).toBe(401)
    expect((await fetch(`${t.api}/files`, { headers: wrong })).status).toBe(429)
    await settles(() => metric(t, 'fileshare_rate_limit_refusals_total', { plan: 'none', limit: 'auth_failures' }), 1)
    // A refused upload is an upload refused too.
    expect((await uploadFile(t, `fsk_${'C'.repeat(43)}`)).response.status).toBe(429)
    await settles(() => metric(t, 'fileshare_uploads_total', { kind: 'multipart', outcome: 'refused', code: 'rate_limited' }), 1)
  })

  it('has the process metrics and the event-loop lag', async () => {
    const text = await t.app.metrics.registry!.metrics()
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m)
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m)
    // The GC pauses and the heap (prom-client's default metrics, docs/reliability.md "Metrics").
    expect(text).toContain('# TYPE nodejs_gc_duration_seconds histogram')
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m)
    expect(text).toContain('# TYPE http_request_duration_seconds histogram')
  })
})

describe('metrics of garbage collection', () => {
  it('times webhook attempts by outcome, and tells the age of the oldest pending message', async () => {
    const t = await startTestApp(
      { ...METRICS_ON, FILESHARE_WEBHOOKS_ALLOW_PRIVATE: 'true', FILESHARE_WEBHOOKS_ALLOW_HTTP: 'true' },
      {
        webhookDispatch: { pollMs: 20 },
      },
    )
    try {
      const { apiKey } = await t.createAccount('pro')
      // Nothing listens on port 9 (discard): every attempt fails and the message stays pending.
      const created = await fetch(`${t.api}/webhooks`, {
        method: 'POST',
        headers: { ...bearer(apiKey), 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/hooks', events: ['file.uploaded'] }),
      })
      expect(created.status).toBe(201)
      await uploadFile(t, apiKey, 'counted')
      await settles(
        async () =>
          (await t.app.metrics.registry!.getSingleMetricAsString('fileshare_webhook_attempt_duration_seconds')).includes(
            'outcome="retrying"',
          )
            ? 1
            : 0,
        1,
      )
      t.advanceClock(2_000)
      expect(await metric(t, 'fileshare_webhook_oldest_pending_seconds')).toBeGreaterThanOrEqual(2)
    } finally {
      await t.close()
    }
  })

  it('counts sweeps and the bytes they reclaimed', async () => {
    const t = await startTestApp({ ...METRICS_ON, FILESHARE_GC_INTERVAL_MS: '100', FILESHARE_GC_GRACE_MS: '60000' })
    try {
      const key = randomBytes(16).toString('hex')
      const orphan = path.join(t.dataDir, 'blobs', 'objects', key.slice(0, 2), key)
      await fs.mkdir(path.dirname(orphan), { recursive: true })
      await fs.writeFile(orphan, randomBytes(777))
      const old = new Date(Date.now() - 3_600_000)
      await fs.utimes(orphan, old, old)
      await settles(() => metric(t, 'fileshare_gc_bytes_reclaimed_total'), 777)
      expect(await metric(t, 'fileshare_gc_runs_total', { outcome: 'ok' })).toBeGreaterThanOrEqual(1)
    } finally {
      await t.close()
    }
  })
})

describe('metrics are off by default', () => {
  it('keeps no registry when FILESHARE_METRICS_ADDR is unset', async () => {
    const t = await startTestApp()
    try {
      expect(t.app.metrics.registry).toBeUndefined()
      expect((await fetch(`${t.url}/metrics`)).status).toBe(404)
    } finally {
      await t.close()
    }
  })
})

describe('the metrics listener of a real process', () => {
  it('serves GET /metrics in the Prometheus format on FILESHARE_METRICS_ADDR, and nothing on the public port', async () => {
    const dataDir = await makeTempDir('fileshare-metrics-')
    const metricsPort = await freePort()
    const server = await startServerProcess({ dataDir, env: { FILESHARE_METRICS_ADDR: `127.0.0.1:${metricsPort}` } })
    try {
      await (await fetch(`${server.url}/healthz`)).arrayBuffer()
      const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
      const text = await response.text()
      expect(text).toContain('# TYPE http_request_duration_seconds histogram')
      expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/healthz",status_code="200"\} [1-9]/)
      expect(text).toContain('# TYPE fileshare_uploads_total counter')
      expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m)
      expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404)
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404)
      expect(outputOf(server)).toContain('metrics are served')
    } finally {
      await stopServerProcess(server)
      await fs.rm(dataDir, { recursive: true, force: true })
    }
  })

  it('opens no metrics listener by default', async () => {
    const dataDir = await makeTempDir('fileshare-metrics-')
    const server = await startServerProcess({ dataDir })
    try {
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404)
      expect(outputOf(server)).not.toContain('metrics are served')
    } finally {
      await stopServerProcess(server)
      await fs.rm(dataDir, { recursive: true, force: true })
    }
  })
})

describe('FILESHARE_METRICS_ADDR', () => {
  const parse = (value: string) => loadConfig({ FILESHARE_METRICS_ADDR: value }).metrics

  it('reads host:port, an IPv6 host in brackets; unset or blank is off', () => {
    expect(parse('127.0.0.1:9464')).toEqual({ host: '127.0.0.1', port: 9464 })
    expect(parse('[::1]:9464')).toEqual({ host: '::1', port: 9464 })
    expect(parse('metrics.internal:0')).toEqual({ host: 'metrics.internal', port: 0 })
    expect(parse(' ')).toBeUndefined()
    expect(loadConfig({}).metrics).toBeUndefined()
  })

  it('refuses anything else, naming the variable', () => {
    for (const value of ['9464', ':9464', '127.0.0.1', '127.0.0.1:70000', 'http://127.0.0.1:9464', '::1:9464']) {
      expect(() => parse(value), value).toThrow(ConfigError)
      expect(() => parse(value), value).toThrow(/FILESHARE_METRICS_ADDR/)
    }
  })
})

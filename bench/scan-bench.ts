/**
 * The scan section (BENCH_ONLY=scan, opt-in: it needs clamd): issue 35's "scanning a 1 GiB file on
 * S3 keeps the server's memory flat and does not block other requests", and the scan throughput.
 *
 * A real clamd (test/helpers/clamd.ts, the test signature database, StreamMaxLength raised), s3rver
 * in a process of its own (bench/s3rver-process.ts), and a Fileshare server as `npm start` runs it on
 * the S3 store (SQLite for the database) with FILESHARE_CLAMD and FILESHARE_SCAN=required. Then:
 * 1. clamd alone: the same number of bytes straight to clamd with INSTREAM (bench/instream-client.ts),
 *    twice: the first scan after clamd's start (cold) and again (warm).
 * 2. idle: GET /healthz and GET /api/v1/files?limit=1 probed every 50 ms (bench/latency-probe.ts).
 * 3. one multipart upload of that size (bench/upload-client.ts); the probe goes on.
 * 4. from the upload's answer until GET /files/{id} says `scan.status: clean`: the server streams the
 *    object from s3rver to clamd. Its RSS is sampled every 20 ms (and VmHWM, reset when the upload
 *    answered), its CPU time measured, the probe goes on.
 * 5. clamd alone once more (warm), so that the ratio server ÷ clamd has a clamd figure on each side.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { command, startClamd, type TestClamd } from '../test/helpers/clamd.js'
import { freePort, readProcessStatus, ROOT, runCli } from '../test/helpers/server-process.js'
import { S3RVER_CREDENTIALS } from '../test/helpers/scale-out-env.js'
import { formatBytes, MiB, type BenchPlan } from './bench-plan.js'
import { runClientScript, tsScriptArgs } from './child-process.js'
import type { DownloadResult } from './download-client.js'
import type { InstreamJob, InstreamResult } from './instream-client.js'
import type { ProbeJob, ProbeSample } from './latency-probe.js'
import { CpuMeter } from './measure-cpu.js'
import { fileshareEnv, startFileshareWith, type RunningServer } from './spawn-server.js'
import type { UploadJob, UploadResult } from './upload-client.js'

/**
 * clamd's StreamMaxLength and the server's FILESHARE_SCAN_MAX_BYTES: clamd's own ceiling (its
 * MaxFileSize and MaxScanSize in test/helpers/clamd.ts are 2000M; it scans nothing above 2 GiB - 1).
 */
export const SCAN_LIMIT_BYTES = 2000 * MiB
/** A 1 GiB scan: clamd's first one after start took up to a minute here; the default 120 s would be close. */
const SCAN_TIMEOUT_MS = 600_000
const PROBE_INTERVAL_MS = 50
const RSS_INTERVAL_MS = 20
const STATUS_POLL_MS = 50
const INSTREAM_CHUNK_BYTES = 64 * 1024

export interface LatencyStats {
  count: number
  p50Ms: number
  p99Ms: number
  maxMs: number
  /** Answers other than 200 (or no answer). */
  failures: number
}

export interface ScanPhaseLatency {
  healthz: LatencyStats
  api: LatencyStats
}

export interface ScanBench {
  bytes: number
  clamdVersion: string
  /** clamd alone: the first scan after its start, then warm ones (before and after the server's). */
  clamd: { cold: InstreamResult; warm: InstreamResult[] }
  upload: { ms: number }
  /**
   * The read side without clamd, after the scan, for reference: the object straight from s3rver (no
   * server), and the file's public link through the server (S3 → server → client).
   */
  reads: { s3Ms?: number; serverDownloadMs: number }
  server: {
    /** From the upload's answer until GET /files/{id} first said clean (polled every STATUS_POLL_MS). */
    ms: number
    /** The server's own figure: fileshare_scan_duration_seconds_sum{result="clean"}, in ms (undefined if not scraped). */
    metricMs?: number
    cpuSeconds: number
    /** RSS when idle before the upload, when the upload answered (the scan's start), and the peak during the scan. */
    rssIdleBytes: number
    rssStartBytes: number
    rssPeakBytes: number
    rssSamples: number
    /** clamd's own RSS, peak during the server's scan. */
    clamdPeakBytes: number
    /**
     * From the upload's answer until clamd's spool file (in its TemporaryDirectory) had every byte: the
     * streaming part of the scan; the rest is clamd scanning. Undefined if the file was not seen.
     */
    streamedMs?: number
  }
  latency: { idle: ScanPhaseLatency; upload: ScanPhaseLatency; scan: ScanPhaseLatency }
  settings: Record<string, string>
}

const mibPerSecond = (bytes: number, ms: number) => bytes / MiB / (ms / 1000)
export { mibPerSecond }

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

export function latencyStats(samples: ProbeSample[]): LatencyStats {
  const sorted = samples.map((sample) => sample.ms).sort((a, b) => a - b)
  return {
    count: sorted.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.at(-1) ?? NaN,
    failures: samples.filter((sample) => sample.status !== 200).length,
  }
}

function phase(samples: ProbeSample[], from: number, to: number): ScanPhaseLatency {
  const within = samples.filter((sample) => sample.at >= from && sample.at < to)
  return {
    healthz: latencyStats(within.filter((sample) => sample.kind === 'healthz')),
    api: latencyStats(within.filter((sample) => sample.kind === 'api')),
  }
}

/** Starts a client script that runs until its standard input closes, then prints one JSON line. */
function startUntilClosed(script: string, input: unknown): { child: ChildProcess; finish(): Promise<string> } {
  const child = spawn(process.execPath, [...tsScriptArgs(script), JSON.stringify(input)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] })
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (text: string) => (output += text))
  const exited = once(child, 'exit')
  return {
    child,
    async finish() {
      child.stdin!.end()
      const [code] = (await exited) as [number | null]
      if (code !== 0) throw new Error(`bench/${script} exited with code ${code}`)
      return output
    },
  }
}

async function startS3rverProcess(bucket: string) {
  const s3 = spawn(process.execPath, [...tsScriptArgs('s3rver-process.ts'), bucket], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] })
  let output = ''
  s3.stdout!.setEncoding('utf8')
  const line = await new Promise<string>((resolve, reject) => {
    s3.stdout!.on('data', (text: string) => {
      output += text
      if (output.includes('\n')) resolve(output.split('\n')[0]!)
    })
    s3.once('exit', (code) => reject(new Error(`bench/s3rver-process.ts exited with code ${code} before it listened`)))
  })
  const info = JSON.parse(line) as { endpoint: string; bucket: string; directory: string }
  return {
    ...info,
    pid: s3.pid!,
    async stop() {
      if (s3.exitCode !== null || s3.signalCode !== null) return
      const exited = once(s3, 'exit')
      s3.stdin!.end()
      await exited
    },
  }
}

async function instream(clamd: TestClamd, bytes: number): Promise<InstreamResult> {
  const job: InstreamJob = { port: clamd.port, bytes, chunkBytes: INSTREAM_CHUNK_BYTES }
  const result = await runClientScript<InstreamResult>('instream-client.ts', job)
  if (result.answer !== 'stream: OK')
    throw new Error(`clamd answered ${JSON.stringify(result.answer)} to ${formatBytes(bytes)} of random bytes`)
  return result
}

/** fileshare_scan_duration_seconds_sum{result="clean"} from the server's /metrics, in ms. */
async function scanMetricMs(metricsAddress: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(`http://${metricsAddress}/metrics`)).text()
    const match = /^fileshare_scan_duration_seconds_sum\{result="clean"\} ([0-9.e+-]+)$/m.exec(text)
    return match ? Number(match[1]) * 1000 : undefined
  } catch {
    return undefined
  }
}

/** The size of the largest file under `dir` (clamd spools an INSTREAM to a file there), 0 if none. */
function largestFile(dir: string): number {
  let largest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    try {
      largest = Math.max(largest, fs.statSync(path.join(entry.parentPath, entry.name)).size)
    } catch {
      // Removed meanwhile.
    }
  }
  return largest
}

/** GETs the one object of `bytes` from s3rver (anonymous, path-style) in a client process: its time, or undefined if s3rver refuses. */
async function readFromS3rver(endpoint: string, bucket: string, bytes: number): Promise<number | undefined> {
  const listing = await (await fetch(`${endpoint}/${bucket}?list-type=2`)).text()
  const key = [...listing.matchAll(/<Contents>.*?<Key>(.*?)<\/Key>.*?<Size>([0-9]+)<\/Size>/gs)].find(
    (match) => Number(match[2]) === bytes,
  )?.[1]
  if (!key) return undefined
  const result = await runClientScript<DownloadResult>('download-client.ts', { url: `${endpoint}/${bucket}/${key}` })
  return result.status === 200 && result.bytes === bytes ? result.ms : undefined
}

export async function measureScan(
  plan: BenchPlan,
  root: string,
  log: (message: string) => void,
  started: (server: RunningServer) => void,
): Promise<ScanBench> {
  const bytes = plan.scanBytes
  const clamd = await startClamd({ streamMaxLength: SCAN_LIMIT_BYTES })
  let s3: Awaited<ReturnType<typeof startS3rverProcess>> | undefined
  let server: RunningServer | undefined
  try {
    const clamdVersion = await command(clamd.port, 'VERSION')
    log(`scan: clamd ${clamdVersion} at ${clamd.url} (pid ${clamd.child()?.pid}), StreamMaxLength ${formatBytes(SCAN_LIMIT_BYTES)}`)
    log(`scan: clamd alone, ${formatBytes(bytes)} with INSTREAM, cold (its first scan)`)
    const cold = await instream(clamd, bytes)
    log(`scan: clamd alone, cold: ${(cold.ms / 1000).toFixed(2)} s`)
    log(`scan: clamd alone, ${formatBytes(bytes)}, warm`)
    const warm = [await instream(clamd, bytes)]
    log(`scan: clamd alone, warm: ${(warm[0]!.ms / 1000).toFixed(2)} s`)

    s3 = await startS3rverProcess('fileshare-bench')
    const metricsAddress = `127.0.0.1:${await freePort()}`
    const dataDir = path.join(root, 'scan-data')
    const settings: Record<string, string> = {
      FILESHARE_STORAGE: 's3',
      FILESHARE_S3_BUCKET: s3.bucket,
      FILESHARE_S3_ENDPOINT: s3.endpoint,
      FILESHARE_S3_REGION: 'us-east-1',
      FILESHARE_S3_FORCE_PATH_STYLE: 'true',
      FILESHARE_CLAMD: clamd.url,
      FILESHARE_SCAN: 'required',
      FILESHARE_SCAN_MAX_BYTES: String(SCAN_LIMIT_BYTES),
      FILESHARE_SCAN_TIMEOUT_MS: String(SCAN_TIMEOUT_MS),
      FILESHARE_METRICS_ADDR: metricsAddress,
    }
    const credentials = {
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    }
    const cliEnv = { ...fileshareEnv(dataDir, await freePort()), ...settings, ...credentials }
    const migrated = await runCli(['migrate'], cliEnv)
    if (migrated.code !== 0) throw new Error(`fileshare migrate exited with code ${migrated.code}: ${migrated.stderr}`)
    const created = await runCli(['account', 'create', '--email', 'scan@bench.test', '--plan', 'enterprise', '--json'], cliEnv)
    if (created.code !== 0) throw new Error(`fileshare account create exited with code ${created.code}: ${created.stderr}`)
    const key = (JSON.parse(created.stdout) as { api_key: string }).api_key

    server = await startFileshareWith(dataDir, path.join(root, 'server-scan.log'), { ...settings, ...credentials })
    started(server)
    const pid = server.pid
    const clamdPid = clamd.child()!.pid!
    log(`scan: server pid ${pid} at ${server.url} on s3rver ${s3.endpoint} (pid ${s3.pid}), FILESHARE_SCAN=required`)
    // A few requests first, so that the idle figures are not the server's very first ones.
    for (let i = 0; i < 50; i++) await fetch(`${server.url}/healthz`).then((response) => response.arrayBuffer())

    const probeJob: ProbeJob = { url: server.url, key, intervalMs: PROBE_INTERVAL_MS }
    const probe = startUntilClosed('latency-probe.ts', probeJob)
    const idleFrom = Date.now()
    await sleep(plan.scanIdleSeconds * 1000)
    const rssIdleBytes = readProcessStatus(pid).rssBytes

    log(`scan: one ${formatBytes(bytes)} multipart upload to the server (S3 store)`)
    const uploadFrom = Date.now()
    const uploadJob: UploadJob = {
      urls: [`${server.url}/api/v1/files/upload`],
      bytes,
      multipart: true,
      headers: { authorization: `Bearer ${key}` },
    }
    const uploaded = await runClientScript<{ totalMs: number; results: UploadResult[] }>('upload-client.ts', uploadJob)
    // The upload's answer, on the client's clock (the same machine's).
    const answered = uploaded.results[0]!
    const scanFrom = answered.endedAt ?? Date.now()
    // Memory from here on is the scan's: VmHWM is reset now (tens of ms after the answer, the client's exit),
    // and the 20 ms samples cover the gap.
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5')
    const rssStartBytes = readProcessStatus(pid).rssBytes
    const cpu = new CpuMeter(pid)
    let rssPeak = rssStartBytes
    let clamdPeak = readProcessStatus(clamdPid).rssBytes
    let rssSamples = 0
    let streamedAt: number | undefined
    const spoolDir = path.join(clamd.dir, 'tmp')
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, readProcessStatus(pid).rssBytes)
      clamdPeak = Math.max(clamdPeak, readProcessStatus(clamdPid).rssBytes)
      rssSamples++
      if (streamedAt === undefined && largestFile(spoolDir) >= bytes) streamedAt = Date.now()
    }, RSS_INTERVAL_MS)
    if (answered.status !== 201) {
      clearInterval(sampler)
      throw new Error(`the upload answered ${answered.status}: ${answered.body.slice(0, 300)}`)
    }
    const file = JSON.parse(answered.body) as { file_id: number; size: number; public_link: string; scan: { status: string } | null }
    if (file.size !== bytes) throw new Error(`stored ${file.size} bytes of ${bytes}`)
    log(
      `scan: uploaded in ${(answered.ms / 1000).toFixed(2)} s, file ${file.file_id}, scan ${JSON.stringify(file.scan)}; waiting for clean`,
    )
    let status = file.scan?.status ?? 'none'
    let cleanAt = Date.now()
    const deadline = Date.now() + SCAN_TIMEOUT_MS
    while (status === 'pending') {
      if (Date.now() > deadline) throw new Error(`file ${file.file_id} still pending after ${SCAN_TIMEOUT_MS} ms`)
      await sleep(STATUS_POLL_MS)
      const response = await fetch(`${server.url}/api/v1/files/${file.file_id}`, { headers: { authorization: `Bearer ${key}` } })
      cleanAt = Date.now()
      const body = (await response.json()) as { file?: { scan: { status: string } | null } }
      status = body.file?.scan?.status ?? `HTTP ${response.status}`
    }
    clearInterval(sampler)
    const cpuSeconds = cpu.stop()
    const { rssBytes, hwmBytes } = readProcessStatus(pid)
    const rssPeakBytes = Math.max(rssPeak, rssBytes, hwmBytes)
    clamdPeak = Math.max(clamdPeak, readProcessStatus(clamdPid).hwmBytes)
    if (status !== 'clean') throw new Error(`file ${file.file_id}: scan.status ${status}, not clean`)
    const serverMs = cleanAt - scanFrom
    log(`scan: clean after ${(serverMs / 1000).toFixed(2)} s (${mibPerSecond(bytes, serverMs).toFixed(0)} MiB/s)`)
    // A little more probing after the verdict is not the scan's: the scan phase ends at cleanAt.
    const samples = JSON.parse((await probe.finish()).trim().split('\n').pop() ?? '[]') as ProbeSample[]
    const metricMs = await scanMetricMs(metricsAddress)

    log('scan: reading the object back without clamd (from s3rver alone, then through the public link)')
    const s3Ms = await readFromS3rver(s3.endpoint, s3.bucket, bytes)
    const viaServer = await runClientScript<DownloadResult>('download-client.ts', { url: file.public_link })
    if (viaServer.status !== 200 || viaServer.bytes !== bytes)
      throw new Error(`download of ${file.public_link}: ${viaServer.status}, ${viaServer.bytes} bytes`)

    log(`scan: clamd alone, ${formatBytes(bytes)}, warm, again`)
    warm.push(await instream(clamd, bytes))
    log(`scan: clamd alone, warm: ${(warm[1]!.ms / 1000).toFixed(2)} s`)

    return {
      bytes,
      clamdVersion,
      clamd: { cold, warm },
      upload: { ms: answered.ms },
      reads: { s3Ms, serverDownloadMs: viaServer.ms },
      server: {
        ms: serverMs,
        streamedMs: streamedAt === undefined ? undefined : streamedAt - scanFrom,
        metricMs,
        cpuSeconds,
        rssIdleBytes,
        rssStartBytes,
        rssPeakBytes,
        rssSamples,
        clamdPeakBytes: clamdPeak,
      },
      latency: {
        idle: phase(samples, idleFrom, uploadFrom),
        upload: phase(samples, uploadFrom, scanFrom),
        scan: phase(samples, scanFrom, cleanAt),
      },
      settings: {
        ...settings,
        FILESHARE_CLAMD: 'tcp://127.0.0.1:<port>',
        FILESHARE_S3_ENDPOINT: 'http://127.0.0.1:<port>',
        FILESHARE_METRICS_ADDR: '127.0.0.1:<port>',
      },
    }
  } finally {
    await server?.stop()
    await s3?.stop()
    await clamd.close()
  }
}

/**
 * `npm run bench`: the real server next to a bare Node.js baseline, on the same machine, in the
 * same run. Prints the tables and writes them to docs/benchmarks.md (full-size runs only).
 *
 * The transfers run against the peers a user would pick instead too (bench/peer-server.ts: Express 5
 * + Multer 2, res.download), and a full run draws its figures as SVG charts into docs/bench/
 * (bench/charts.ts); a quick or partial run draws them into BENCH_CHART_DIR, or else
 * $TMPDIR/fileshare-bench-charts, and leaves docs/ alone.
 *
 * Environment: BENCH_QUICK=1 shrinks every size for a quick check; BENCH_ONLY=transfer,rss,load,resumable,metrics
 * picks sections (BENCH_ONLY=resumable runs the resumable-upload scenario alone and updates only its
 * part of docs/benchmarks.md, and so does BENCH_ONLY=metrics, the cost of FILESHARE_METRICS_ADDR);
 * BENCH_ONLY=scan runs the virus-scanning section (bench/scan-bench.ts: a 1 GiB file on S3 through a
 * real clamd), which is opt-in, never part of the default run: it needs clamd installed and adds a
 * few minutes; run alone, it updates only its part of docs/benchmarks.md;
 * BENCH_CHART_DIR sets where the charts go; BENCH_SECONDS, BENCH_REPEATS, BENCH_LARGE_ACCOUNT_FILES override figures;
 * BENCH_SERVER_NODE_FLAGS adds node flags to the server, after the start script's (e.g. "--cpu-prof --cpu-prof-dir=DIR",
 * then bench/profile-summary.ts); BENCH_SERVER_JS runs another build's server.js; BENCH_LOG_LEVEL
 * sets the server's log level (default info); BENCH_KEEP_DATA=1 keeps the temp folder.
 */
import { isDeepStrictEqual } from 'node:util'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { freePort, ROOT, runCli } from '../test/helpers/server-process.js'
import { benchPlan, formatBytes } from './bench-plan.js'
import { runClientScript } from './child-process.js'
import type { LoadJob, LoadResult } from './load-client.js'
import { CpuMeter } from './measure-cpu.js'
import { RssSampler } from './measure-rss.js'
import { chartDir, DOCS_CHART_DIR, writeBenchCharts } from './charts.js'
import {
  FIND_CALLS,
  METADATA_CALLS,
  metricsSection,
  renderTables,
  resumableSection,
  scanSection,
  SOAK_HEADING,
  writeBenchmarksDoc,
  writeBenchmarksSection,
  type BenchResults,
  type MeasuredLoad,
  type FindCall,
  type MetadataCall,
  type MetricsCost,
  type PeerComparison,
} from './report.js'
import { measureArchive } from './archive-bench.js'
import { measureScan } from './scan-bench.js'
import { fileIdRange, seedFiles } from './seed-files.js'
import {
  fileshareEnv,
  serverArgs,
  startBaseline,
  startFileshare,
  startFileshareWith,
  startMetadataPeer,
  startPeer,
  startScriptArgs,
  startSink,
  type RunningServer,
} from './spawn-server.js'
import { flushDisk, measureTransfers } from './transfer-bench.js'
import type { ResumableUploadJob, ResumableUploadResult } from './resumable-client.js'
import type { UploadJob, UploadResult } from './upload-client.js'

interface Account {
  id: number
  key: string
}

const plan = benchPlan()
/** Node flags of the extra peak-RSS run: a young generation of 2 x 2 MiB instead of up to 2 x 16 MiB. */
const TUNED_NODE_FLAGS = ['--max-semi-space-size=2']
/** The sections of the default run; `scan` (opt-in, needs clamd) runs only when BENCH_ONLY names it. */
const SECTIONS = ['transfer', 'rss', 'load', 'resumable', 'metrics']
const OPT_IN_SECTIONS = ['scan']
const sections = new Set((process.env.BENCH_ONLY ?? SECTIONS.join(',')).split(',').map((name) => name.trim()))
for (const name of sections) {
  if (!SECTIONS.includes(name) && !OPT_IN_SECTIONS.includes(name)) {
    throw new Error(`BENCH_ONLY: unknown section "${name}"; the sections are ${[...SECTIONS, ...OPT_IN_SECTIONS].join(', ')}`)
  }
}
/** Whether any section needs the embedded server, the baseline and the seeded accounts (all but scan do). */
const embeddedSections = SECTIONS.some((name) => sections.has(name))
const log = (message: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`)

/** Creates the database with the `fileshare` CLI, as an operator would before creating accounts. */
async function migrate(env: Record<string, string>): Promise<void> {
  const result = await runCli(['migrate'], env)
  if (result.code !== 0) throw new Error(`fileshare migrate exited with code ${result.code}: ${result.stderr}`)
}

/** Creates an account with the `fileshare` CLI, as an operator would. */
async function createAccount(env: Record<string, string>, email: string): Promise<Account> {
  const result = await runCli(['account', 'create', '--email', email, '--plan', 'enterprise', '--json'], env)
  if (result.code !== 0) throw new Error(`fileshare account create exited with code ${result.code}: ${result.stderr}`)
  const created = JSON.parse(result.stdout) as { account_id: number; api_key: string }
  return { id: created.account_id, key: created.api_key }
}

async function api(server: RunningServer, account: Account, method: string, route: string): Promise<unknown> {
  const response = await fetch(`${server.url}/api/v1${route}`, { method, headers: { authorization: `Bearer ${account.key}` } })
  const body = (await response.json()) as unknown
  if (!response.ok) throw new Error(`${method} ${route} answered ${response.status}: ${JSON.stringify(body)}`)
  return body
}

function uploads(urls: string[], bytes: number, multipart: boolean, account?: Account) {
  const job: UploadJob = { urls, bytes, multipart, headers: account ? { authorization: `Bearer ${account.key}` } : {} }
  return runClientScript<{ totalMs: number; results: UploadResult[] }>('upload-client.ts', job)
}

function checked(result: { status: number; body: string }, expected: number): void {
  if (result.status !== expected) throw new Error(`expected ${expected}, got ${result.status}: ${result.body.slice(0, 300)}`)
}

async function serviceUpload(server: RunningServer, account: Account, bytes: number, count = 1) {
  const urls = Array.from({ length: count }, () => `${server.url}/api/v1/files/upload`)
  const { totalMs, results } = await uploads(urls, bytes, true, account)
  for (const result of results) checked(result, 201)
  const files = results.map((result) => JSON.parse(result.body) as { file_id: number; public_link: string; size: number })
  for (const file of files) if (file.size !== bytes) throw new Error(`stored ${file.size} bytes of ${bytes}`)
  return { totalMs, results, files }
}

async function deleteFiles(server: RunningServer, account: Account, ids: number[]): Promise<void> {
  for (const id of ids) await api(server, account, 'DELETE', `/files/${id}`)
}

async function measurePeakRss(server: RunningServer, account: Account) {
  log(`peak RSS: one ${formatBytes(plan.largeUploadBytes)} upload`)
  flushDisk()
  let sampler = new RssSampler(server.pid)
  const large = await serviceUpload(server, account, plan.largeUploadBytes)
  const largePeak = { ...sampler.stop(), ms: large.totalMs }
  await deleteFiles(
    server,
    account,
    large.files.map((file) => file.file_id),
  )

  log(`peak RSS: ${plan.concurrentUploads} concurrent ${formatBytes(plan.concurrentUploadBytes)} uploads`)
  flushDisk()
  sampler = new RssSampler(server.pid)
  const concurrent = await serviceUpload(server, account, plan.concurrentUploadBytes, plan.concurrentUploads)
  const concurrentPeak = { ...sampler.stop(), ms: concurrent.totalMs }
  await deleteFiles(
    server,
    account,
    concurrent.files.map((file) => file.file_id),
  )
  return { large: largePeak, concurrent: concurrentPeak }
}

/**
 * Peak RSS of one resumable (tus) upload, PATCH after PATCH, next to the same bytes sent to the bare
 * pipe (the baseline) and as one multipart upload to the same server, in the same run.
 */
async function measureResumable(server: RunningServer, bare: RunningServer, account: Account, bareDir: string) {
  const bytes = plan.resumableUploadBytes
  const chunkBytes = plan.resumableChunkBytes

  log(`resumable: bare pipe, one ${formatBytes(bytes)} upload (baseline)`)
  flushDisk()
  let sampler = new RssSampler(bare.pid)
  let cpu = new CpuMeter(bare.pid)
  const plain = await uploads([`${bare.url}/upload/resumable-baseline`], bytes, false)
  const bareRun = { ...sampler.stop(), cpuSeconds: cpu.stop(), ms: plain.results[0]!.ms }
  checked(plain.results[0]!, 201)
  await fs.rm(path.join(bareDir, 'resumable-baseline'))

  log(`resumable: one ${formatBytes(bytes)} multipart upload (for comparison)`)
  flushDisk()
  sampler = new RssSampler(server.pid)
  cpu = new CpuMeter(server.pid)
  const multipart = await serviceUpload(server, account, bytes)
  const multipartRun = { ...sampler.stop(), cpuSeconds: cpu.stop(), ms: multipart.results[0]!.ms }
  await deleteFiles(
    server,
    account,
    multipart.files.map((file) => file.file_id),
  )

  log(`resumable: one ${formatBytes(bytes)} tus upload in PATCHes of ${formatBytes(chunkBytes)}`)
  flushDisk()
  sampler = new RssSampler(server.pid)
  cpu = new CpuMeter(server.pid)
  const job: ResumableUploadJob = { url: server.url, key: account.key, bytes, chunkBytes }
  const tus = await runClientScript<ResumableUploadResult>('resumable-client.ts', job)
  const resumableRun = { ...sampler.stop(), cpuSeconds: cpu.stop(), ms: tus.ms }
  const { file } = (await api(server, account, 'GET', `/files/${tus.fileId}`)) as { file: { size: number } }
  if (file.size !== bytes) throw new Error(`the resumable upload stored ${file.size} bytes of ${bytes}`)
  await deleteFiles(server, account, [tus.fileId])

  return {
    bytes,
    chunkBytes,
    patches: tus.patches,
    slowestPatchMs: tus.slowestPatchMs,
    resumable: resumableRun,
    multipart: multipartRun,
    bare: bareRun,
  }
}

async function autocannon(url: string, seconds: number, account?: Account): Promise<LoadResult> {
  const job: LoadJob = {
    url,
    headers: account ? { authorization: `Bearer ${account.key}` } : {},
    connections: plan.connections,
    seconds,
  }
  const result = await runClientScript<LoadResult>('load-client.ts', job)
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx responses and ${result.errors} errors of ${result.requests}`)
  }
  return result
}

/** A warm-up run (discarded), then the measured one, with the server's CPU time per request. */
async function load(server: RunningServer, url: string, account?: Account): Promise<MeasuredLoad> {
  await autocannon(url, plan.warmupSeconds, account)
  const cpu = new CpuMeter(server.pid)
  const result = await autocannon(url, plan.loadSeconds, account)
  return { ...result, cpuMicrosPerRequest: (cpu.stop() * 1e6) / result.requests }
}

function metadataRoutes(ids: { min: number; max: number }, fileCount: number): Record<MetadataCall, string> {
  const lastPage = Math.max(1, Math.ceil(fileCount / 100))
  return {
    detail: `/files/${Math.floor((ids.min + ids.max) / 2)}`,
    list: '/files?limit=100',
    stats: '/stats',
    deepList: `/files?limit=100&page=${lastPage}`,
    // The deepest page a before_id walk reaches: the 100 oldest files.
    beforeIdList: `/files?limit=100&before_id=${ids.min + 101}`,
  }
}

/** GET /files's sorts and search (issue 37): seeded names are seeded-<i, 7 digits>.bin, so the middle one's digits match one file. */
function findRoutes(fileCount: number): Record<FindCall, string> {
  const lastPage = Math.max(1, Math.ceil(fileCount / 100))
  return {
    sortedList: '/files?limit=100&sort=filename&order=asc',
    sortedLastPage: `/files?limit=100&sort=size&order=asc&page=${lastPage}`,
    search: `/files?limit=100&q=${String(Math.floor(fileCount / 2)).padStart(7, '0')}`,
  }
}

/**
 * A fresh server answers its first thousands of requests several times slower, until V8 has
 * optimized the hot code; whichever call ran first would pay for it. So every call runs a while first.
 */
async function warmUp(server: RunningServer, account: Account, ids: { min: number; max: number }, fileCount: number): Promise<void> {
  log('load: warming the server up')
  for (const route of [...Object.values(metadataRoutes(ids, fileCount)), ...Object.values(findRoutes(fileCount))]) {
    await autocannon(`${server.url}/api/v1${route}`, plan.serverWarmupSeconds, account)
  }
}

/** Each call of `calls` under load in turn, on the account of `fileCount` files. */
async function measureCalls<Call extends string>(
  server: RunningServer,
  account: Account,
  routes: Record<Call, string>,
  calls: readonly Call[],
  fileCount: number,
): Promise<Record<Call, MeasuredLoad>> {
  const results = {} as Record<Call, MeasuredLoad>
  for (const call of calls) {
    log(`load: ${routes[call]} (${fileCount.toLocaleString('en-US')} files)`)
    results[call] = await load(server, `${server.url}/api/v1${routes[call]}`, account)
  }
  return results
}

const measureMetadata = (server: RunningServer, account: Account, ids: { min: number; max: number }, fileCount: number) =>
  measureCalls(server, account, metadataRoutes(ids, fileCount), METADATA_CALLS, fileCount)

const measureFind = (server: RunningServer, account: Account, fileCount: number) =>
  measureCalls(server, account, findRoutes(fileCount), FIND_CALLS, fileCount)

/** The calls the metadata peer answers (bench/metadata-peer.ts), by their routes. */
const PEER_CALLS = ['detail', 'stats'] as const

/**
 * Fileshare against the Express 5 + better-sqlite3 peer on the same calls, database and account:
 * the peer's answers are first checked to be Fileshare's JSON; then, per call, the peer runs twice
 * between Fileshare's run of the metadata table (`first`) and one more (turns F, P, P, F).
 */
async function measurePeer(
  server: RunningServer,
  peer: RunningServer,
  account: Account,
  routes: Record<MetadataCall, string>,
  first: Record<MetadataCall, MeasuredLoad>,
): Promise<PeerComparison> {
  for (const call of PEER_CALLS) {
    const [ours, theirs] = await Promise.all(
      [server, peer].map(async (target) => {
        const response = await fetch(`${target.url}/api/v1${routes[call]}`, { headers: { authorization: `Bearer ${account.key}` } })
        return (await response.json()) as unknown
      }),
    )
    if (!isDeepStrictEqual(ours, theirs)) {
      throw new Error(`the metadata peer's ${routes[call]} differs from Fileshare's: ${JSON.stringify(theirs)} vs ${JSON.stringify(ours)}`)
    }
  }
  log('load: warming the metadata peer up')
  for (const call of PEER_CALLS) await autocannon(`${peer.url}/api/v1${routes[call]}`, plan.serverWarmupSeconds, account)
  const comparison = {} as PeerComparison
  for (const call of PEER_CALLS) {
    log(`load: ${routes[call]}, the peer twice, Fileshare once more`)
    const peerRuns = [await load(peer, `${peer.url}/api/v1${routes[call]}`, account)]
    peerRuns.push(await load(peer, `${peer.url}/api/v1${routes[call]}`, account))
    const again = await load(server, `${server.url}/api/v1${routes[call]}`, account)
    comparison[call] = { fileshare: [first[call], again], peer: peerRuns }
  }
  return comparison
}

/**
 * The cost of the Prometheus listener: GET /files/:id on two fresh server processes of the same
 * build and data folder, without and with FILESHARE_METRICS_ADDR, taking turns (plan.metricsTurns).
 * Skips itself, saying why, when the build does not read the variable or nothing answers there.
 */
async function measureMetricsCost(
  dataDir: string,
  logDir: string,
  account: Account,
  fileId: number,
  started: (server: RunningServer) => void,
): Promise<MetricsCost> {
  const serverJs = startScriptArgs().find((arg) => arg.endsWith('server.js'))!
  const configJs = path.join(path.dirname(serverJs), 'config.js')
  const source = await fs.readFile(configJs, 'utf8').catch(() => '')
  if (!source.includes('FILESHARE_METRICS_ADDR')) {
    const shown = configJs.startsWith(ROOT) ? path.relative(ROOT, configJs) : configJs
    return {
      skipped:
        `the server under test does not read \`FILESHARE_METRICS_ADDR\` yet (\`${shown}\`, built from ` +
        '`src/config.ts`, does not mention it), so "on" would measure the same server as "off". The case runs once it does.',
    }
  }
  const address = `127.0.0.1:${await freePort()}`
  log(`metrics: two servers, FILESHARE_METRICS_ADDR unset and ${address}`)
  const off = await startFileshareWith(dataDir, path.join(logDir, 'server-metrics-off.log'), {})
  started(off)
  const on = await startFileshareWith(dataDir, path.join(logDir, 'server-metrics-on.log'), { FILESHARE_METRICS_ADDR: address })
  started(on)
  const scrape = async () => {
    try {
      const response = await fetch(`http://${address}/metrics`)
      return response.ok ? await response.text() : `HTTP ${response.status}`
    } catch (error) {
      return `no answer (${(error as Error).message})`
    }
  }
  const probe = await scrape()
  if (!/^# (HELP|TYPE) /m.test(probe)) {
    return {
      skipped: `\`FILESHARE_METRICS_ADDR=${address}\` was set, but GET http://${address}/metrics gave ${probe.slice(0, 80)}, not Prometheus text.`,
    }
  }
  const route = `/api/v1/files/${fileId}`
  for (const server of [off, on]) await autocannon(`${server.url}${route}`, plan.serverWarmupSeconds, account)
  const runs = { off: [] as MeasuredLoad[], on: [] as MeasuredLoad[] }
  for (const side of plan.metricsTurns) {
    log(`metrics: GET /files/:id, metrics ${side}`)
    runs[side].push(await load(side === 'off' ? off : on, `${(side === 'off' ? off : on).url}${route}`, account))
  }
  const scrapeBytes = Buffer.byteLength(await scrape())
  return { address, ...runs, scrapeBytes }
}

async function main(): Promise<void> {
  const startedAt = new Date()
  const loadAverageAtStart = os.loadavg()
  const loadSamples: number[] = []
  const loadSampler = setInterval(() => loadSamples.push(os.loadavg()[0]!), 10_000)
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'fileshare-bench-'))
  const dataDir = path.join(root, 'data')
  const bareDir = path.join(root, 'bare')
  const peerDir = path.join(root, 'peer')
  await fs.mkdir(bareDir, { recursive: true })
  await fs.mkdir(peerDir, { recursive: true })
  /** Every process started, stopped at the end (or on Ctrl-C) if not before. */
  const servers: Array<{ stop(): Promise<unknown> }> = []
  const stopAll = async () => {
    for (const server of servers.splice(0)) await server.stop()
  }
  process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)))
  log(`temp folder ${root}${plan.quick ? ' (BENCH_QUICK=1)' : ''}`)
  try {
    const serverCommand = ['node', ...serverArgs()].join(' ').replace(ROOT, '')
    const results: BenchResults = { plan, startedAt, finishedAt: startedAt, loadAverageAtStart, serverCommand, seedSeconds: 0 }
    if (embeddedSections) {
      const port = await freePort()
      const env = fileshareEnv(dataDir, port)
      await migrate(env)
      const io = await createAccount(env, 'transfers@bench.test')
      const small = await createAccount(env, 'small@bench.test')
      const large = await createAccount(env, 'large@bench.test')
      const sqlitePath = path.join(dataDir, 'fileshare.sqlite')

      let seedSeconds = 0
      if (sections.has('load')) {
        log(`seeding ${plan.smallAccountFiles} and ${plan.largeAccountFiles.toLocaleString('en-US')} file rows`)
        const seedStart = performance.now()
        await seedFiles(sqlitePath, small.id, plan.smallAccountFiles)
        await seedFiles(sqlitePath, large.id, plan.largeAccountFiles)
        seedSeconds = (performance.now() - seedStart) / 1000
      } else if (sections.has('metrics')) {
        log(`seeding ${plan.smallAccountFiles} file rows`)
        await seedFiles(sqlitePath, small.id, plan.smallAccountFiles)
      }

      const server = await startFileshare(dataDir, port, path.join(root, 'server.log'))
      servers.push(server)
      // The bare route answers exactly what the service answers for the small account's middle file.
      const smallIds = sections.has('load') || sections.has('metrics') ? await fileIdRange(sqlitePath, small.id) : { min: 1, max: 1 }
      const smallMiddle = Math.floor((smallIds.min + smallIds.max) / 2)
      const detailJson = sections.has('load') ? JSON.stringify(await api(server, small, 'GET', `/files/${smallMiddle}`)) : '{}'
      const bare = await startBaseline(bareDir, detailJson, path.join(root, 'baseline.log'))
      servers.push(bare)
      log(`server pid ${server.pid} at ${server.url}; baseline pid ${bare.pid} at ${bare.url}`)
      results.seedSeconds = seedSeconds
      if (sections.has('transfer')) {
        const peer = await startPeer(peerDir, path.join(root, 'peer.log'))
        servers.push(peer)
        const sink = await startSink(path.join(root, 'sink.log'))
        servers.push(sink)
        log(`peer (Express + Multer) pid ${peer.pid} at ${peer.url}; sink pid ${sink.pid} at ${sink.url}`)
        results.transfer = await measureTransfers(
          { service: server, bare, peer, sink },
          {
            plan,
            root,
            dataDir,
            dirs: { bare: bareDir, peer: peerDir },
            key: io.key,
            log,
            started: (other) => servers.push(other),
          },
        )
        await peer.stop()
        await sink.stop()
        servers.splice(servers.indexOf(peer), 1)
        servers.splice(servers.indexOf(sink), 1)
      }
      if (sections.has('rss')) {
        results.rss = { asStarted: await measurePeakRss(server, io) }
        results.archive = await measureArchive(plan, {
          server,
          key: io.key,
          upload: async (bytes, count) => (await serviceUpload(server, io, bytes, count)).files,
          deleteFiles: (ids) => deleteFiles(server, io, ids),
          log,
        })
      }
      if (sections.has('resumable')) results.resumable = await measureResumable(server, bare, io, bareDir)
      if (sections.has('load')) {
        log('load: bare JSON route')
        const bareLoad = await load(bare, `${bare.url}/json`)
        const largeIds = await fileIdRange(sqlitePath, large.id)
        await warmUp(server, small, smallIds, plan.smallAccountFiles)
        const { limits } = (await api(server, small, 'GET', '/stats')) as { limits: unknown }
        const metadataPeer = await startMetadataPeer(
          { database: sqlitePath, linkBaseUrl: fileshareEnv(dataDir, port).FILESHARE_PUBLIC_URL!, planLimits: limits },
          path.join(root, 'metadata-peer.log'),
        )
        servers.push(metadataPeer)
        log(`metadata peer (Express + better-sqlite3) pid ${metadataPeer.pid} at ${metadataPeer.url}`)
        const smallRuns = await measureMetadata(server, small, smallIds, plan.smallAccountFiles)
        const peer = await measurePeer(server, metadataPeer, small, metadataRoutes(smallIds, plan.smallAccountFiles), smallRuns)
        await metadataPeer.stop()
        servers.splice(servers.indexOf(metadataPeer), 1)
        results.load = {
          bare: bareLoad,
          small: smallRuns,
          peer,
          large: await measureMetadata(server, large, largeIds, plan.largeAccountFiles),
          find: {
            small: await measureFind(server, small, plan.smallAccountFiles),
            large: await measureFind(server, large, plan.largeAccountFiles),
          },
        }
      }
      await stopAll()
      if (sections.has('metrics')) {
        results.metrics = await measureMetricsCost(dataDir, root, small, smallMiddle, (started) => servers.push(started))
        await stopAll()
        if ('skipped' in results.metrics) log(`metrics: skipped: ${results.metrics.skipped}`)
      }
      // V8 sizes its young generation (up to 2 x 16 MiB) by heuristics; the peaks above depend on it.
      // The same uploads once more on a server whose young generation is capped show by how much.
      if (sections.has('rss') && !startScriptArgs().some((arg) => arg.startsWith('--max-semi-space-size'))) {
        const tunedPort = await freePort()
        const tuned = await startFileshare(dataDir, tunedPort, path.join(root, 'server-tuned.log'), TUNED_NODE_FLAGS)
        servers.push(tuned)
        log(`again with ${TUNED_NODE_FLAGS.join(' ')} (server pid ${tuned.pid})`)
        results.rss!.tuned = { flags: TUNED_NODE_FLAGS.join(' '), ...(await measurePeakRss(tuned, io)) }
        await stopAll()
      }
    }
    if (sections.has('scan')) {
      results.scan = await measureScan(plan, root, log, (started) => servers.push(started))
      await stopAll()
    }
    results.finishedAt = new Date()
    results.loadAverageAtEnd = os.loadavg()
    results.loadSamples = loadSamples
    clearInterval(loadSampler)

    console.log(`\n${renderTables(results)}`)
    // A complete run is the default one (with or without the opt-in scan section).
    const complete = SECTIONS.every((section) => sections.has(section))
    const benchmarksDoc = path.join(ROOT, 'docs', 'benchmarks.md')
    const charts = chartDir(complete && !plan.quick)
    const chartLinks = writeBenchCharts(results, charts)
    if (chartLinks.length > 0) log(`wrote ${chartLinks.length} charts into ${charts}`)
    if (complete && !plan.quick) {
      writeBenchmarksDoc(benchmarksDoc, results, charts === DOCS_CHART_DIR ? chartLinks : [])
      log('wrote docs/benchmarks.md')
    } else if (sections.size === 1 && results.resumable && !plan.quick) {
      writeBenchmarksSection(benchmarksDoc, resumableSection(results, { standalone: true }))
      log('wrote the resumable-upload section of docs/benchmarks.md')
    } else if (sections.size === 1 && results.metrics && !plan.quick) {
      writeBenchmarksSection(benchmarksDoc, metricsSection(results, { standalone: true }), { before: ['### Charts', SOAK_HEADING] })
      log('wrote the metrics-cost section of docs/benchmarks.md')
    } else if (sections.size === 1 && results.scan && !plan.quick) {
      writeBenchmarksSection(benchmarksDoc, scanSection(results, { standalone: true }), { before: ['### Charts', SOAK_HEADING] })
      log('wrote the virus-scanning section of docs/benchmarks.md')
    } else {
      log('a partial or quick run: docs/benchmarks.md left as it was')
    }
  } finally {
    clearInterval(loadSampler)
    await stopAll()
    if (process.env.BENCH_KEEP_DATA === '1') log(`kept ${root}`)
    else await fs.rm(root, { recursive: true, force: true })
  }
}

await main()

/**
 * The pictures of a bench run and of a soak run, from their figures (bench/svg-chart.ts draws them,
 * bench/svg-check.ts checks them). The bench writes them into docs/bench/ with docs/benchmarks.md
 * (a full run), or elsewhere for a quick or partial run: see chartDir.
 */
import os from 'node:os'
import path from 'node:path'
import { ROOT } from '../test/helpers/server-process.js'
import { formatBytes, MiB } from './bench-plan.js'
import { median, METADATA_CALLS, type BenchResults, type ChartLink, type MeasuredLoad, type MetadataCall } from './report.js'
import type { TransferRuns } from './transfer-results.js'
import { barChart, COLORS, lineChart, type BarGroup, type BarSeries } from './svg-chart.js'
import { writeSvg } from './svg-check.js'

/** Where docs/benchmarks.md's charts live. */
export const DOCS_CHART_DIR = path.join(ROOT, 'docs', 'bench')

/**
 * docs/bench/ when the run writes the docs; otherwise BENCH_CHART_DIR, or a folder in the temp
 * directory, so that a quick run does not replace the published pictures with its rough figures.
 */
export function chartDir(writesDocs: boolean): string {
  if (process.env.BENCH_CHART_DIR) return path.resolve(process.env.BENCH_CHART_DIR)
  return writesDocs ? DOCS_CHART_DIR : path.join(os.tmpdir(), 'fileshare-bench-charts')
}

const SERIES: Record<string, BarSeries> = {
  fileshare: { key: 'fileshare', label: 'Fileshare', color: COLORS.blue },
  bare: { key: 'bare', label: 'Bare Node.js (baseline)', color: COLORS.grey },
  bareFsync: { key: 'bareFsync', label: 'Bare Node.js + fsync', color: COLORS.darkGrey },
  peer: { key: 'peer', label: 'Express 5 + Multer 2 / res.download (peer)', color: COLORS.orange },
  nginx: { key: 'nginx', label: 'nginx, sendfile on (download ceiling)', color: COLORS.green },
  ceiling: { key: 'ceiling', label: "curl against the sink (the client's own ceiling)", color: COLORS.purple },
  metadataPeer: { key: 'metadataPeer', label: 'Express 5 + better-sqlite3 (peer)', color: COLORS.orange },
}

const CALL_NAMES: Record<MetadataCall, string> = {
  detail: 'GET /files/:id',
  list: 'GET /files?limit=100',
  stats: 'GET /stats',
  deepList: 'GET /files?limit=100, last page',
  beforeIdList: 'GET /files?limit=100, last before_id page',
}

function transferCharts(results: BenchResults, dir: string): ChartLink[] {
  const { transfer } = results
  if (!transfer) return []
  const bestMs = (runs: TransferRuns) => median(runs.best.map((run) => run.ms))
  const bestCpu = (runs: TransferRuns) => median(runs.best.map((run) => run.cpuSeconds))
  const series = [SERIES.fileshare!, SERIES.nginx!, SERIES.bareFsync!, SERIES.bare!, SERIES.peer!, SERIES.ceiling!]
  const throughputGroups: BarGroup[] = []
  const cpuGroups: BarGroup[] = []
  for (const size of transfer.sizes) {
    const name = formatBytes(size.bytes)
    const throughput = (runs: TransferRuns) => size.bytes / MiB / (bestMs(runs) / 1000)
    const perGiB = (runs: TransferRuns) => bestCpu(runs) / (size.bytes / (1024 * MiB))
    const { upload, download, ceilings } = size
    throughputGroups.push(
      {
        label: `Upload ${name} (multipart; the bare pipe takes the raw body)`,
        bars: [
          { series: 'fileshare', value: throughput(upload.service) },
          { series: 'bareFsync', value: throughput(upload.bareFsync) },
          { series: 'bare', value: throughput(upload.bare) },
          { series: 'peer', value: throughput(upload.peer) },
          { series: 'ceiling', value: throughput(ceilings.curlMultipart) },
        ],
      },
      {
        label: `Download ${name} (from the page cache)`,
        bars: [
          { series: 'fileshare', value: throughput(download.service) },
          { series: 'nginx', value: throughput(download.nginx) },
          { series: 'bare', value: throughput(download.bare) },
          { series: 'peer', value: throughput(download.peer) },
          { series: 'ceiling', value: throughput(ceilings.curlDownload) },
        ],
      },
    )
    cpuGroups.push(
      {
        label: `Upload ${name}`,
        bars: [
          { series: 'fileshare', value: perGiB(upload.service) },
          { series: 'bareFsync', value: perGiB(upload.bareFsync) },
          { series: 'bare', value: perGiB(upload.bare) },
          { series: 'peer', value: perGiB(upload.peer) },
        ],
      },
      {
        label: `Download ${name}`,
        bars: [
          { series: 'fileshare', value: perGiB(download.service) },
          { series: 'nginx', value: perGiB(download.nginx) },
          { series: 'bare', value: perGiB(download.bare) },
          { series: 'peer', value: perGiB(download.peer) },
        ],
      },
    )
  }
  const runs = `curl as the client; median over ${transfer.rounds} round${transfer.rounds === 1 ? '' : 's'} of the best of ${transfer.tries}`
  writeSvg(
    path.join(dir, 'transfer-throughput.svg'),
    barChart({
      title: 'Transfer throughput',
      subtitle: `Client-side time, ${runs}; longer is better`,
      unit: 'MiB/s',
      series,
      groups: throughputGroups,
    }),
  )
  writeSvg(
    path.join(dir, 'transfer-cpu.svg'),
    barChart({
      title: 'Server CPU per GiB transferred',
      subtitle: `User + system time of the receiving or sending process (nginx: its worker), ${runs}; shorter is better`,
      unit: 's/GiB',
      series: series.filter((one) => one.key !== 'ceiling'),
      groups: cpuGroups,
    }),
  )
  return [
    {
      file: 'bench/transfer-throughput.svg',
      alt: "Transfer throughput with curl: Fileshare, nginx, bare Node.js, Express, and curl's own ceiling",
    },
    { file: 'bench/transfer-cpu.svg', alt: 'Server CPU seconds per GiB transferred: Fileshare, nginx, bare Node.js and Express' },
  ]
}

/** The metrics runs folded into one figure per side: mean requests/s and latencies. */
function foldRuns(runs: MeasuredLoad[]): Pick<MeasuredLoad, 'requestsPerSecond' | 'p50Ms' | 'p99Ms'> {
  const mean = (pick: (run: MeasuredLoad) => number) => runs.reduce((sum, run) => sum + pick(run), 0) / runs.length
  return { requestsPerSecond: mean((run) => run.requestsPerSecond), p50Ms: mean((run) => run.p50Ms), p99Ms: mean((run) => run.p99Ms) }
}

function loadCharts(results: BenchResults, dir: string): ChartLink[] {
  const { load, plan, metrics } = results
  if (!load) return []
  const smallCount = plan.smallAccountFiles.toLocaleString('en-US')
  const largeCount = plan.largeAccountFiles.toLocaleString('en-US')
  const measuredMetrics = metrics && !('skipped' in metrics) ? { off: foldRuns(metrics.off), on: foldRuns(metrics.on) } : undefined
  const series: BarSeries[] = [
    SERIES.bare!,
    SERIES.metadataPeer!,
    { key: 'small', label: `Fileshare, ${smallCount} files`, color: COLORS.blue },
    { key: 'large', label: `Fileshare, ${largeCount} files`, color: COLORS.sky },
    { key: 'metricsOn', label: 'Fileshare, metrics on', color: COLORS.green },
  ]
  const groups: BarGroup[] = METADATA_CALLS.map((call) => ({
    label: CALL_NAMES[call] + (call === 'detail' ? ' (bare: the same JSON)' : ''),
    bars: [
      ...(call === 'detail' ? [{ series: 'bare', value: load.bare.requestsPerSecond }] : []),
      ...(call === 'detail' || call === 'stats'
        ? [{ series: 'metadataPeer', value: foldRuns(load.peer[call].peer).requestsPerSecond }]
        : []),
      { series: 'small', value: load.small[call].requestsPerSecond },
      { series: 'large', value: load.large[call].requestsPerSecond },
    ],
  }))
  if (measuredMetrics) {
    groups.push({
      label: `GET /files/:id, metrics off vs on (${smallCount} files)`,
      bars: [
        { series: 'small', value: measuredMetrics.off.requestsPerSecond },
        { series: 'metricsOn', value: measuredMetrics.on.requestsPerSecond },
      ],
    })
  }
  const conditions = `${plan.connections} connections, ${plan.loadSeconds} s per call, autocannon`
  writeSvg(
    path.join(dir, 'load-throughput.svg'),
    barChart({ title: 'Metadata calls: throughput', subtitle: `${conditions}; longer is better`, unit: 'req/s', series, groups }),
  )

  const latencySeries: BarSeries[] = [
    { key: 'p50', label: 'p50 latency', color: COLORS.sky },
    { key: 'p99', label: 'p99 latency', color: COLORS.blue },
  ]
  const latencyGroup = (label: string, run: Pick<MeasuredLoad, 'p50Ms' | 'p99Ms'>): BarGroup => ({
    label,
    bars: [
      { series: 'p50', value: run.p50Ms },
      { series: 'p99', value: run.p99Ms },
    ],
  })
  const latencyGroups = [
    latencyGroup('Bare Node.js route (same JSON as GET /files/:id)', load.bare),
    latencyGroup('Express + better-sqlite3 peer, GET /files/:id', foldRuns(load.peer.detail.peer)),
    latencyGroup('Express + better-sqlite3 peer, GET /stats', foldRuns(load.peer.stats.peer)),
    ...METADATA_CALLS.map((call) => latencyGroup(`Fileshare ${CALL_NAMES[call]} (${smallCount} files)`, load.small[call])),
    ...(measuredMetrics
      ? [
          latencyGroup('Fileshare GET /files/:id, metrics off', measuredMetrics.off),
          latencyGroup('Fileshare GET /files/:id, metrics on', measuredMetrics.on),
        ]
      : []),
  ]
  writeSvg(
    path.join(dir, 'load-latency.svg'),
    barChart({
      title: 'Metadata calls: latency under load',
      subtitle: `${conditions}; shorter is better`,
      unit: 'ms',
      series: latencySeries,
      groups: latencyGroups,
    }),
  )
  return [
    {
      file: 'bench/load-throughput.svg',
      alt: 'Requests per second of the metadata calls against the bare Node.js route and the Express peer',
    },
    { file: 'bench/load-latency.svg', alt: 'p50 and p99 latency of the metadata calls against the bare Node.js route' },
  ]
}

/**
 * Writes the charts of a bench run into `dir`; returns the links docs/benchmarks.md shows (valid
 * when `dir` is docs/bench/).
 */
export function writeBenchCharts(results: BenchResults, dir: string): ChartLink[] {
  return [...transferCharts(results, dir), ...loadCharts(results, dir)]
}

export interface SoakTimeline {
  /** Samples of the server process, `at` in ms since the epoch. */
  samples: Array<{ at: number; rssBytes: number; fds: number }>
  loadStarted: number
  loadEnded: number
  settleStarted: number
  clients: number
}

/** The soak's RSS and open file descriptors over time, as two line charts in `dir`. */
export function writeSoakCharts(timeline: SoakTimeline, dir: string): ChartLink[] {
  const { samples, loadStarted } = timeline
  const seconds = (at: number) => Math.max(0, (at - loadStarted) / 1000)
  const markers = [
    { x: 0, label: 'load starts' },
    { x: seconds(timeline.loadEnded), label: 'load ends; verifying' },
    { x: seconds(timeline.settleStarted), label: 'settling' },
  ]
  const subtitle = `${timeline.clients} clients of mixed uploads, downloads, lists and deletes; sampled every second from /proc`
  writeSvg(
    path.join(dir, 'soak-rss.svg'),
    lineChart({
      title: 'Soak: server resident memory (RSS)',
      subtitle,
      xLabel: 'seconds since the load started',
      yLabel: 'RSS (MiB)',
      series: [{ label: 'VmRSS of the server process', color: COLORS.blue, points: samples.map((s) => [seconds(s.at), s.rssBytes / MiB]) }],
      markers,
    }),
  )
  writeSvg(
    path.join(dir, 'soak-fds.svg'),
    lineChart({
      title: 'Soak: open file descriptors of the server',
      subtitle,
      xLabel: 'seconds since the load started',
      yLabel: 'open file descriptors',
      series: [{ label: 'entries of /proc/PID/fd', color: COLORS.vermilion, points: samples.map((s) => [seconds(s.at), s.fds]) }],
      markers,
    }),
  )
  return [
    { file: 'bench/soak-rss.svg', alt: "The server's resident memory during the soak" },
    { file: 'bench/soak-fds.svg', alt: "The server's open file descriptors during the soak" },
  ]
}

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
}

const CALL_NAMES: Record<MetadataCall, string> = {
  detail: 'GET /files/:id',
  list: 'GET /files?limit=100',
  stats: 'GET /stats',
  deepList: 'GET /files?limit=100, last page',
  beforeIdList: 'GET /files?limit=100, last before_id page',
}

function transferCharts(results: BenchResults, dir: string): ChartLink[] {
  const { transfer, plan } = results
  if (!transfer) return []
  const size = formatBytes(plan.transferBytes)
  const throughput = (values: number[]) => plan.transferBytes / MiB / (median(values) / 1000)
  const perGiB = (values: number[]) => median(values) / (plan.transferBytes / (1024 * MiB))
  const { uploadMs, downloadMs, uploadCpuSeconds, downloadCpuSeconds } = transfer
  const series = [SERIES.fileshare!, SERIES.bare!, SERIES.bareFsync!, SERIES.peer!]
  const groups = (pick: (values: number[]) => number): BarGroup[] => [
    {
      label: `Upload ${size} (multipart; the bare pipe takes the raw body)`,
      bars: [
        { series: 'fileshare', value: pick(uploadMs.service) },
        { series: 'bare', value: pick(uploadMs.bare) },
        { series: 'bareFsync', value: pick(uploadMs.bareFsync) },
        { series: 'peer', value: pick(uploadMs.peer) },
      ],
    },
    {
      label: `Download ${size} (from the page cache)`,
      bars: [
        { series: 'fileshare', value: pick(downloadMs.service) },
        { series: 'bare', value: pick(downloadMs.bare) },
        { series: 'peer', value: pick(downloadMs.peer) },
      ],
    },
  ]
  const runs = `median of ${plan.transferRepeats} run${plan.transferRepeats === 1 ? '' : 's'}`
  writeSvg(
    path.join(dir, 'transfer-throughput.svg'),
    barChart({
      title: `Transfer throughput, one ${size} file`,
      subtitle: `Client-side time, ${runs}; longer is better`,
      unit: 'MiB/s',
      series,
      groups: groups(throughput),
    }),
  )
  const cpuGroups: BarGroup[] = [
    {
      label: `Upload ${size}`,
      bars: [
        { series: 'fileshare', value: perGiB(uploadCpuSeconds.service) },
        { series: 'bare', value: perGiB(uploadCpuSeconds.bare) },
        { series: 'bareFsync', value: perGiB(uploadCpuSeconds.bareFsync) },
        { series: 'peer', value: perGiB(uploadCpuSeconds.peer) },
      ],
    },
    {
      label: `Download ${size}`,
      bars: [
        { series: 'fileshare', value: perGiB(downloadCpuSeconds.service) },
        { series: 'bare', value: perGiB(downloadCpuSeconds.bare) },
        { series: 'peer', value: perGiB(downloadCpuSeconds.peer) },
      ],
    },
  ]
  writeSvg(
    path.join(dir, 'transfer-cpu.svg'),
    barChart({
      title: 'Server CPU per GiB transferred',
      subtitle: `User + system time of the receiving or sending process, ${runs}; shorter is better`,
      unit: 's/GiB',
      series,
      groups: cpuGroups,
    }),
  )
  return [
    { file: 'bench/transfer-throughput.svg', alt: `Transfer throughput of one ${size} file: Fileshare, bare Node.js and Express peers` },
    { file: 'bench/transfer-cpu.svg', alt: 'Server CPU seconds per GiB transferred: Fileshare, bare Node.js and Express peers' },
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
    { key: 'small', label: `Fileshare, ${smallCount} files`, color: COLORS.blue },
    { key: 'large', label: `Fileshare, ${largeCount} files`, color: COLORS.sky },
    { key: 'metricsOn', label: 'Fileshare, metrics on', color: COLORS.green },
  ]
  const groups: BarGroup[] = METADATA_CALLS.map((call) => ({
    label: CALL_NAMES[call] + (call === 'detail' ? ' (bare: the same JSON)' : ''),
    bars: [
      ...(call === 'detail' ? [{ series: 'bare', value: load.bare.requestsPerSecond }] : []),
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
    { file: 'bench/load-throughput.svg', alt: 'Requests per second of the metadata calls against the bare Node.js route' },
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

import fs from 'node:fs'
import os from 'node:os'
import { formatBytes, mib, type BenchPlan } from './bench-plan.js'
import type { LoadResult } from './load-client.js'
import type { RssPeak } from './measure-rss.js'

export const METADATA_CALLS = ['detail', 'list', 'stats', 'deepList'] as const
export type MetadataCall = (typeof METADATA_CALLS)[number]

export interface UploadPeaks {
  large: RssPeak & { ms: number }
  concurrent: RssPeak & { ms: number }
}

/** One upload's memory peak, with the client's time and the receiving process's CPU time. */
export type MeasuredUpload = RssPeak & { ms: number; cpuSeconds: number }

/** A load run plus the server's CPU time per request during it. */
export type MeasuredLoad = LoadResult & { cpuMicrosPerRequest: number }

export interface BenchResults {
  plan: BenchPlan
  startedAt: Date
  finishedAt: Date
  loadAverageAtStart: number[]
  /** How the server was started, e.g. `node dist/server.js`. */
  serverCommand: string
  seedSeconds: number
  transfer?: {
    uploadMs: { service: number[]; bare: number[]; bareFsync: number[] }
    uploadCpuSeconds: { service: number[]; bare: number[]; bareFsync: number[] }
    downloadMs: { service: number[]; bare: number[] }
    downloadCpuSeconds: { service: number[]; bare: number[] }
    serviceUploadRss: RssPeak
    bareUploadRss: RssPeak
  }
  rss?: {
    /** The server as `npm start` runs it. */
    asStarted: UploadPeaks
    /** The same uploads on a server started with extra node flags (for comparison). */
    tuned?: UploadPeaks & { flags: string }
  }
  /** One resumable (tus) upload against the bare pipe and a multipart upload of the same size. */
  resumable?: {
    bytes: number
    chunkBytes: number
    patches: number
    slowestPatchMs: number
    resumable: MeasuredUpload
    multipart: MeasuredUpload
    bare: MeasuredUpload
  }
  load?: {
    bare: MeasuredLoad
    small: Record<MetadataCall, MeasuredLoad>
    large: Record<MetadataCall, MeasuredLoad>
  }
}

const TARGETS = {
  uploadRatio: 1.25,
  downloadRatio: 1.15,
  peakRssBytes: 150 * 1024 * 1024,
  detailShareOfBare: 0.4,
  growthRatio: 2,
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const rps = (value: number) => Math.round(value).toLocaleString('en-US')
const ms = (value: number) => `${value.toFixed(1)} ms`
const ratio = (value: number) => `${value.toFixed(2)}x`
const percent = (value: number) => `${Math.round(value * 100)}%`

/** "met", or "missed by N%" relative to the target (with a decimal when N is small). */
function verdict(met: boolean, missBy: number): string {
  return met ? 'met' : `**missed** by ${missBy < 0.1 ? `${(missBy * 100).toFixed(1)}%` : percent(missBy)}`
}

function atMost(value: number, limit: number): string {
  return verdict(value <= limit, value / limit - 1)
}

function atLeast(value: number, floor: number): string {
  return verdict(value >= floor, 1 - value / floor)
}

const CALL_LABELS: Record<MetadataCall, string> = {
  detail: 'GET /files/:id (a file in the middle)',
  list: 'GET /files?limit=100 (page 1)',
  stats: 'GET /stats',
  deepList: 'GET /files?limit=100&page=<last> (extra)',
}

function transferSection(results: BenchResults): string[] {
  const { transfer, rss, plan } = results
  const lines: string[] = []
  if (transfer) {
    const size = formatBytes(plan.transferBytes)
    const upload = median(transfer.uploadMs.service) / median(transfer.uploadMs.bare)
    const uploadFsync = median(transfer.uploadMs.service) / median(transfer.uploadMs.bareFsync)
    const download = median(transfer.downloadMs.service) / median(transfer.downloadMs.bare)
    const cpu = (values: number[]) => `${median(values).toFixed(2)} s`
    const { uploadMs, uploadCpuSeconds: uploadCpu, downloadMs, downloadCpuSeconds: downloadCpu } = transfer
    lines.push(
      `### Transfers (one ${size} file, median of ${plan.transferRepeats})`,
      '',
      "Time is the client's, from the first byte sent to the end of the response. Server CPU is the user + system time of " +
        'the server process (Fileshare or the baseline) during the transfer.',
      '',
      '| Measure | Fileshare | Bare Node.js | Ratio | Target | Result | Server CPU, Fileshare / bare |',
      '|---|---|---|---|---|---|---|',
      `| Upload ${size}: multipart through the API vs the bare pipe | ${seconds(median(uploadMs.service))} | ${seconds(median(uploadMs.bare))} | ${ratio(upload)} | ≤ ${ratio(TARGETS.uploadRatio)} | ${atMost(upload, TARGETS.uploadRatio)} | ${cpu(uploadCpu.service)} / ${cpu(uploadCpu.bare)} |`,
      `| Upload ${size} vs the bare pipe with fsync (extra) | ${seconds(median(uploadMs.service))} | ${seconds(median(uploadMs.bareFsync))} | ${ratio(uploadFsync)} | | | ${cpu(uploadCpu.service)} / ${cpu(uploadCpu.bareFsync)} |`,
      `| Download ${size}: public link vs the bare read stream | ${seconds(median(downloadMs.service))} | ${seconds(median(downloadMs.bare))} | ${ratio(download)} | ≤ ${ratio(TARGETS.downloadRatio)} | ${atMost(download, TARGETS.downloadRatio)} | ${cpu(downloadCpu.service)} / ${cpu(downloadCpu.bare)} |`,
      '',
      `Every run (ms): upload ${uploadMs.service.map(Math.round).join(', ')} vs bare ${uploadMs.bare.map(Math.round).join(', ')} ` +
        `(bare with fsync ${uploadMs.bareFsync.map(Math.round).join(', ')}); download ${downloadMs.service.map(Math.round).join(', ')} ` +
        `vs bare ${downloadMs.bare.map(Math.round).join(', ')}.`,
      '',
    )
  }
  if (rss || transfer) {
    lines.push(
      '### Peak server memory (RSS, VmHWM of the server process)',
      '',
      '| Case | Peak RSS | RSS before | Time | Target | Result |',
      '|---|---|---|---|---|---|',
    )
    if (transfer) {
      const { serviceUploadRss: peak, bareUploadRss: bare } = transfer
      lines.push(
        `| One ${formatBytes(plan.transferBytes)} upload (for comparison) | ${mib(peak.peakBytes)} | ${mib(peak.startBytes)} | | | |`,
      )
      lines.push(
        `| Bare pipe, one ${formatBytes(plan.transferBytes)} upload (for comparison) | ${mib(bare.peakBytes)} | ${mib(bare.startBytes)} | | | |`,
      )
    }
    if (rss) {
      const { large, concurrent } = rss.asStarted
      lines.push(
        `| One ${formatBytes(plan.largeUploadBytes)} upload | ${mib(large.peakBytes)} | ${mib(large.startBytes)} | ${seconds(large.ms)} | < 150 MiB | ${atMost(large.peakBytes, TARGETS.peakRssBytes)} |`,
        `| ${plan.concurrentUploads} concurrent ${formatBytes(plan.concurrentUploadBytes)} uploads | ${mib(concurrent.peakBytes)} | ${mib(concurrent.startBytes)} | ${seconds(concurrent.ms)} | < 150 MiB | ${atMost(concurrent.peakBytes, TARGETS.peakRssBytes)} |`,
      )
      if (rss.tuned) {
        const { flags, large: tunedLarge, concurrent: tunedConcurrent } = rss.tuned
        lines.push(
          `| One ${formatBytes(plan.largeUploadBytes)} upload, server started with \`${flags}\` (extra) | ${mib(tunedLarge.peakBytes)} | ${mib(tunedLarge.startBytes)} | ${seconds(tunedLarge.ms)} | < 150 MiB | ${atMost(tunedLarge.peakBytes, TARGETS.peakRssBytes)} |`,
          `| ${plan.concurrentUploads} concurrent ${formatBytes(plan.concurrentUploadBytes)} uploads, \`${flags}\` (extra) | ${mib(tunedConcurrent.peakBytes)} | ${mib(tunedConcurrent.startBytes)} | ${seconds(tunedConcurrent.ms)} | < 150 MiB | ${atMost(tunedConcurrent.peakBytes, TARGETS.peakRssBytes)} |`,
        )
      }
      if (transfer) {
        const growth = large.peakBytes - transfer.serviceUploadRss.peakBytes
        lines.push(
          '',
          `Growth with file size: the ${formatBytes(plan.largeUploadBytes)} upload peaked ${mib(Math.abs(growth))} ${growth >= 0 ? 'above' : 'below'} ` +
            `the ${formatBytes(plan.transferBytes)} upload.`,
        )
      }
    }
    lines.push('')
  }
  return lines
}

export const RESUMABLE_HEADING = '### Resumable upload (tus): peak server memory'

/**
 * The resumable upload against the bare pipe. `standalone`: measured in a run of this section alone
 * (BENCH_ONLY=resumable), so the section says which run it comes from.
 */
export function resumableSection(results: BenchResults, { standalone = false } = {}): string[] {
  const { resumable: run } = results
  if (!run) return []
  const size = formatBytes(run.bytes)
  const growth = (peak: RssPeak) => mib(peak.peakBytes - peak.startBytes)
  const row = (label: string, peak: MeasuredUpload, target: string, result: string) =>
    `| ${label} | ${mib(peak.peakBytes)} | ${mib(peak.startBytes)} | ${growth(peak)} | ${seconds(peak.ms)} | ${peak.cpuSeconds.toFixed(2)} s | ` +
    `${ratio(peak.peakBytes / run.bare.peakBytes)} | ${target} | ${result} |`
  const lines = [RESUMABLE_HEADING, '']
  if (standalone) {
    lines.push(
      `Measured in a run of this section alone (\`BENCH_ONLY=resumable npm run bench\`), started ${results.startedAt.toISOString()}, ` +
        `took ${Math.round((results.finishedAt.getTime() - results.startedAt.getTime()) / 1000)} s; load average at start ` +
        `${results.loadAverageAtStart.map((value) => value.toFixed(2)).join(' ')}; same machine and server command as above.`,
      '',
    )
  }
  lines.push(
    `One ${size} file sent as a tus client sends it: \`POST /api/v1/uploads\`, then ${run.patches} PATCHes of ${formatBytes(run.chunkBytes)} ` +
      'in order, each body produced as it is sent (`bench/resumable-client.ts`). The same bytes go once to the bare pipe (the baseline, ' +
      'in its own process) and once as a multipart upload to the same server. Peak RSS is the VmHWM of the receiving process, reset ' +
      "before each case; the ratio is each peak over the bare pipe's peak.",
    '',
    '| Case | Peak RSS | RSS before | Growth | Time | CPU of the receiving process | Peak ÷ bare pipe peak | Target | Result |',
    '|---|---|---|---|---|---|---|---|---|',
    row(
      `Resumable upload, ${size} in ${formatBytes(run.chunkBytes)} PATCHes`,
      run.resumable,
      '< 150 MiB',
      atMost(run.resumable.peakBytes, TARGETS.peakRssBytes),
    ),
    row(`Multipart upload, ${size} (for comparison)`, run.multipart, '', ''),
    row(`Bare pipe, ${size} (baseline)`, run.bare, '', ''),
    '',
    `Resumable peak ÷ multipart peak on the same server: ${ratio(run.resumable.peakBytes / run.multipart.peakBytes)}. ` +
      `Slowest PATCH: ${seconds(run.slowestPatchMs)}.`,
    '',
  )
  return lines
}

function loadSection(results: BenchResults): string[] {
  const { load, plan } = results
  if (!load) return []
  const { bare, small, large } = load
  const cpu = (run: MeasuredLoad) => `${Math.round(run.cpuMicrosPerRequest)} µs`
  const smallCount = plan.smallAccountFiles.toLocaleString('en-US')
  const largeCount = plan.largeAccountFiles.toLocaleString('en-US')
  const lines = [
    `### Metadata calls (${plan.connections} connections, ${plan.loadSeconds} s each after ${plan.warmupSeconds} s of warm-up, autocannon)`,
    '',
    "Server CPU per request is the server process's CPU time during the run divided by the requests served: unlike " +
      'requests per second, it hardly changes with whatever else the machine is running.',
    '',
    `Against the bare JSON route, for the account holding ${smallCount} files:`,
    '',
    '| Call | Requests/s | p50 | p99 | Server CPU per request | Share of bare route req/s (by CPU) | Target | Result |',
    '|---|---|---|---|---|---|---|---|',
    `| Bare route (same JSON as GET /files/:id) | ${rps(bare.requestsPerSecond)} | ${ms(bare.p50Ms)} | ${ms(bare.p99Ms)} | ${cpu(bare)} | 100% | | |`,
  ]
  for (const call of METADATA_CALLS) {
    const run = small[call]
    const share = run.requestsPerSecond / bare.requestsPerSecond
    const shareByCpu = bare.cpuMicrosPerRequest / run.cpuMicrosPerRequest
    const targeted = call === 'detail'
    lines.push(
      `| ${CALL_LABELS[call]} | ${rps(run.requestsPerSecond)} | ${ms(run.p50Ms)} | ${ms(run.p99Ms)} | ${cpu(run)} | ${percent(share)} (${percent(shareByCpu)}) | ` +
        `${targeted ? `≥ ${percent(TARGETS.detailShareOfBare)}` : ''} | ${targeted ? atLeast(share, TARGETS.detailShareOfBare) : ''} |`,
    )
  }
  lines.push(
    '',
    `How cost grows: the same calls for an account holding ${smallCount} and one holding ${largeCount} files. ` +
      `Cost ratio = server CPU per request at ${largeCount} files ÷ at ${smallCount} (in brackets: requests/s at ${smallCount} ÷ at ${largeCount}).`,
    '',
    `| Call | Req/s, p99, CPU/req (${smallCount}) | Req/s, p99, CPU/req (${largeCount}) | Cost ratio | Target | Result |`,
    '|---|---|---|---|---|---|',
  )
  for (const call of METADATA_CALLS) {
    const growth = large[call].cpuMicrosPerRequest / small[call].cpuMicrosPerRequest
    const rpsGrowth = small[call].requestsPerSecond / large[call].requestsPerSecond
    const figures = (run: MeasuredLoad) => `${rps(run.requestsPerSecond)}, ${ms(run.p99Ms)}, ${cpu(run)}`
    const targeted = call !== 'deepList'
    lines.push(
      `| ${CALL_LABELS[call]} | ${figures(small[call])} | ${figures(large[call])} | ${ratio(growth)} (${ratio(rpsGrowth)}) | ` +
        `${targeted ? `≤ ${ratio(TARGETS.growthRatio)}` : ''} | ${targeted ? atMost(growth, TARGETS.growthRatio) : ''} |`,
    )
  }
  lines.push('')
  return lines
}

export function machineLines(results: BenchResults): string[] {
  const cpus = os.cpus()
  return [
    `- Machine: ${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB memory, ` +
      `Linux ${os.release()}; Node.js ${process.version}.`,
    `- Command: \`npm run bench\`${results.plan.quick ? ' with BENCH_QUICK=1' : ''}; started ${results.startedAt.toISOString()}, ` +
      `took ${Math.round((results.finishedAt.getTime() - results.startedAt.getTime()) / 1000)} s ` +
      `(seeding the ${results.plan.largeAccountFiles.toLocaleString('en-US')} file rows: ${results.seedSeconds.toFixed(0)} s); ` +
      `load average at start ${results.loadAverageAtStart.map((value) => value.toFixed(2)).join(' ')}.`,
    `- Server: \`${results.serverCommand}\` (as \`npm start\` runs it), embedded default (SQLite + blob folder), log level ` +
      `\`${process.env.BENCH_LOG_LEVEL ?? 'info'}\` to a file; every client and the baseline run in processes of their own.`,
  ]
}

/** The tables of one run, in Markdown (printed to the terminal as well as written to the docs). */
export function renderTables(results: BenchResults): string {
  return [...transferSection(results), ...resumableSection(results), ...loadSection(results)].join('\n')
}

const NOTES_MARKER = '<!-- Everything below this line is written by hand; bench/run.ts keeps it. -->'

/**
 * Writes docs/benchmarks.md: the figures of this run above the marker line, and whatever notes
 * were written by hand below it, unchanged.
 */
export function writeBenchmarksDoc(file: string, results: BenchResults): void {
  let notes = `${NOTES_MARKER}\n\n## Notes\n\n(none yet)\n`
  if (fs.existsSync(file)) {
    const current = fs.readFileSync(file, 'utf8')
    const at = current.indexOf(NOTES_MARKER)
    if (at >= 0) notes = current.slice(at)
  }
  const generated = [
    '# Benchmarks',
    '',
    '`npm run bench` (not part of `npm test`) measures the real server (`node dist/server.js`, embedded default) side by ' +
      'side with a bare Node.js baseline on the same machine in the same run (`bench/baseline-server.ts`: an `http` server ' +
      'that pipes a request body straight to a file, serves a file with `fs.createReadStream`, and answers the same JSON ' +
      'as `GET /files/:id`). The part above the notes is written by the script; rerun it to refresh.',
    '',
    ...machineLines(results),
    '',
    renderTables(results),
  ].join('\n')
  fs.writeFileSync(file, `${generated}\n${notes}`)
}

/**
 * Puts one section (its first line is its `### ` heading) into the generated part of
 * docs/benchmarks.md, in place of the section of the same heading, or else before the metadata
 * section (or the notes): for a run of that section alone. Everything else stays as it was.
 */
export function writeBenchmarksSection(file: string, section: string[]): void {
  const current = fs.readFileSync(file, 'utf8')
  const heading = section[0]!
  const notesAt = current.indexOf(NOTES_MARKER)
  const generatedEnd = notesAt >= 0 ? notesAt : current.length
  const text = `${section.join('\n').trimEnd()}\n\n`
  let start = current.indexOf(`${heading}\n`)
  let end: number
  if (start >= 0 && start < generatedEnd) {
    const next = current.indexOf('\n### ', start + heading.length)
    end = next >= 0 && next < generatedEnd ? next + 1 : generatedEnd
  } else {
    const metadata = current.indexOf('\n### Metadata calls')
    start = metadata >= 0 && metadata < generatedEnd ? metadata + 1 : generatedEnd
    end = start
  }
  fs.writeFileSync(file, current.slice(0, start) + text + current.slice(end))
}

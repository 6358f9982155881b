import fs from 'node:fs'
import os from 'node:os'
import { formatBytes, MiB, mib, type BenchPlan } from './bench-plan.js'
import type { LoadResult } from './load-client.js'
import type { RssPeak } from './measure-rss.js'
import { FLAT_ARCHIVE_SLACK_BYTES, type ArchiveBench } from './archive-bench.js'
import { CEILINGS, type Ceiling, type SizeTransfers, type TransferResults, type TransferRuns } from './transfer-results.js'
import type { LatencyStats, ScanBench } from './scan-bench.js'

export const METADATA_CALLS = ['detail', 'list', 'stats', 'deepList', 'beforeIdList'] as const
export type MetadataCall = (typeof METADATA_CALLS)[number]
/**
 * GET /files's sorts and search (issue 37) at both account sizes: page 1 of a sort other than the
 * upload date, the last page of another (read from its index's other end), and a search matching
 * one file (which reads every file of the account: no target, its cost is the figure).
 */
export const FIND_CALLS = ['sortedList', 'sortedLastPage', 'search'] as const
export type FindCall = (typeof FIND_CALLS)[number]

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
  /** Load average (1, 5, 15 min) at the end, and the 1-minute one sampled every 10 s during the run. */
  loadAverageAtEnd?: number[]
  loadSamples?: number[]
  /** Uploads and downloads with curl, and the clients' ceilings (bench/transfer-bench.ts). */
  transfer?: TransferResults
  rss?: {
    /** The server as `npm start` runs it. */
    asStarted: UploadPeaks
    /** The same uploads on a server started with extra node flags (for comparison). */
    tuned?: UploadPeaks & { flags: string }
  }
  /** The ZIP download (POST /files/archive) of one stored file and of several, with the server's peak RSS. */
  archive?: ArchiveBench
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
    /** GET /files/:id and GET /stats against the Express 5 + better-sqlite3 peer (bench/metadata-peer.ts). */
    peer: PeerComparison
    large: Record<MetadataCall, MeasuredLoad>
    /** GET /files?sort=&order=&q= (absent in results from before issue 37). */
    find?: { small: Record<FindCall, MeasuredLoad>; large: Record<FindCall, MeasuredLoad> }
  }
  /** GET /files/:id on two servers of the same build, FILESHARE_METRICS_ADDR unset and set. */
  metrics?: MetricsCost
  /** Virus scanning of one large file on the S3 store through clamd (BENCH_ONLY=scan, opt-in). */
  scan?: ScanBench
}

/** Per call, Fileshare's runs and the metadata peer's, taking turns (F, P, P, F). */
export type PeerComparison = Record<'detail' | 'stats', { fileshare: MeasuredLoad[]; peer: MeasuredLoad[] }>

export type MetricsCost =
  | { skipped: string }
  | {
      /** The address the "on" server's /metrics listener was given. */
      address: string
      /** The measured runs, in the order they ran (off, on, on, off, ...). */
      off: MeasuredLoad[]
      on: MeasuredLoad[]
      /** Size in bytes of one scrape of /metrics after the runs. */
      scrapeBytes: number
    }

/** The targets of issue 36 (performance round 3), and the older ones (issues 17, 35) that still stand. */
export const TARGETS = {
  /** Multipart upload time ÷ the bare pipe with fsync's, and ÷ Express 5 + Multer 2's (curl as the client, each size). */
  uploadFsyncRatio: 1.25,
  uploadPeerRatio: 1.1,
  /** Download time through a public link ÷ nginx's (sendfile), each size. */
  downloadNginxRatio: 1.3,
  /** Download time ÷ the bare read stream's, and ÷ Express's res.download (issue 17). */
  downloadRatio: 1.0,
  downloadPeerRatio: 1.0,
  /** A client measures a server only if its ceiling (against the sink) is at least this many times the server's throughput. */
  clientMargin: 2,
  /** A resumable upload's throughput ÷ a multipart upload's, same server and run, at least. */
  resumableThroughputRatio: 0.8,
  /** Peak RSS of every upload case. */
  peakRssBytes: 150 * MiB,
  /** GET /files/:id and GET /stats: requests/s ÷ the Express 5 + better-sqlite3 peer's, at least. */
  detailVsPeer: 2,
  statsVsPeer: 2,
  /** GET /files?limit=100: server CPU per request, at most. */
  listCpuMicros: 450,
  /** CPU per request at the large account ÷ at the small one, at most. */
  growthRatio: 2,
  /** FILESHARE_METRICS_ADDR: requests/s lost and CPU per request added on GET /files/:id, below. */
  metricsCost: 0.05,
  /** Issue 35: scanning a 1 GiB file keeps the server's memory flat: its RSS grows by less than this during the scan. */
  scanRssGrowthBytes: 64 * MiB,
  /**
   * Issue 35: the scan does not block other requests: no probed call waits this long during the scan (its max),
   * and none fails. An event loop held by the scan would hold them for seconds; the p50 and p99 against idle
   * show the cost of sharing the cores with clamd and s3rver.
   */
  scanProbeMaxMs: 500,
}

export const median = (values: number[]) => {
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
export function verdict(met: boolean, missBy: number): string {
  return met ? 'met' : `**missed** by ${missBy < 0.1 ? `${(missBy * 100).toFixed(1)}%` : percent(missBy)}`
}

/** A ceiling: met when `value` <= `limit`; else missed by how far it is above, relative to the limit. */
export function atMost(value: number, limit: number): string {
  return verdict(value <= limit, value / limit - 1)
}

/** A floor: met when `value` >= `floor`; else missed by how far it is below, relative to the floor. */
export function atLeast(value: number, floor: number): string {
  return verdict(value >= floor, 1 - value / floor)
}

/** A cost given as a fraction (0.031 = 3.1%), which must stay strictly below `limit`; a miss is in percentage points. */
export function costBelow(cost: number, limit: number): string {
  return cost < limit ? 'met' : `**missed** by ${((cost - limit) * 100).toFixed(1)} percentage points`
}

const CALL_LABELS: Record<MetadataCall, string> = {
  detail: 'GET /files/:id (a file in the middle)',
  list: 'GET /files?limit=100 (page 1)',
  stats: 'GET /stats',
  deepList: 'GET /files?limit=100&page=<last> (extra)',
  beforeIdList: 'GET /files?limit=100&before_id=<oldest + 101> (extra)',
}

const FIND_LABELS: Record<FindCall, string> = {
  sortedList: 'GET /files?limit=100&sort=filename&order=asc (page 1)',
  sortedLastPage: 'GET /files?limit=100&sort=size&order=asc&page=<last>',
  search: 'GET /files?limit=100&q=<one name> (a search)',
}

/** The sorts are read along indexes, so their cost must stay flat; a search reads the account's files. */
const findTargeted = (call: FindCall) => call !== 'search'

function findSection(results: BenchResults): string[] {
  const find = results.load?.find
  if (!find) return []
  const smallCount = results.plan.smallAccountFiles.toLocaleString('en-US')
  const largeCount = results.plan.largeAccountFiles.toLocaleString('en-US')
  const figures = (run: MeasuredLoad) => `${rps(run.requestsPerSecond)}, ${ms(run.p99Ms)}, ${Math.round(run.cpuMicrosPerRequest)} µs`
  return [
    `Sorting and searching (\`sort\`, \`order\`, \`q\`): the same accounts. Each sort has an index per account; a ` +
      'search matches a substring, which no index serves: it reads every file of the account (docs/api.md, `GET /files`).',
    '',
    `| Call | Req/s, p99, CPU/req (${smallCount}) | Req/s, p99, CPU/req (${largeCount}) | Cost ratio | Target | Result |`,
    '|---|---|---|---|---|---|',
    ...FIND_CALLS.map((call) => {
      const growth = find.large[call].cpuMicrosPerRequest / find.small[call].cpuMicrosPerRequest
      const rpsGrowth = find.small[call].requestsPerSecond / find.large[call].requestsPerSecond
      const targeted = findTargeted(call)
      return (
        `| ${FIND_LABELS[call]} | ${figures(find.small[call])} | ${figures(find.large[call])} | ${ratio(growth)} (${ratio(rpsGrowth)}) | ` +
        `${targeted ? `≤ ${ratio(TARGETS.growthRatio)}` : 'none (a scan)'} | ${targeted ? atMost(growth, TARGETS.growthRatio) : ''} |`
      )
    }),
    '',
  ]
}

/** Time ÷ time of one side against another, per round (same round, adjacent turns), and their median. */
export function roundRatios(ours: TransferRuns, theirs: TransferRuns): { median: number; each: number[] } {
  const each = ours.best.map((run, round) => run.ms / theirs.best[round]!.ms)
  return { median: median(each), each }
}

const bestMs = (runs: TransferRuns) => median(runs.best.map((run) => run.ms))
const bestCpu = (runs: TransferRuns) => median(runs.best.map((run) => run.cpuSeconds))
const mibPerSecondOf = (bytes: number, runs: TransferRuns) => bytes / MiB / (bestMs(runs) / 1000)

/** The compared transfers of one size: what each is measured against, and its target (if any). */
function transferComparisons(size: SizeTransfers) {
  const { upload, download } = size
  const name = formatBytes(size.bytes)
  return [
    {
      label: `Upload ${name}: multipart vs the bare pipe with fsync`,
      short: `Upload ${name} ÷ the bare pipe with fsync`,
      ours: upload.service,
      theirs: upload.bareFsync,
      limit: TARGETS.uploadFsyncRatio as number | undefined,
    },
    {
      label: `Upload ${name} vs Express 5 + Multer 2 (no hash, no fsync)`,
      short: `Upload ${name} ÷ Express 5 + Multer 2`,
      ours: upload.service,
      theirs: upload.peer,
      limit: TARGETS.uploadPeerRatio as number | undefined,
    },
    {
      label: `Upload ${name} vs the bare pipe, no fsync (for reference)`,
      short: '',
      ours: upload.service,
      theirs: upload.bare,
      limit: undefined,
    },
    {
      label: `Download ${name}: public link vs nginx (\`sendfile on\`)`,
      short: `Download ${name} ÷ nginx (sendfile)`,
      ours: download.service,
      theirs: download.nginx,
      limit: TARGETS.downloadNginxRatio as number | undefined,
    },
    {
      label: `Download ${name} vs the bare read stream`,
      short: `Download ${name} ÷ the bare read stream`,
      ours: download.service,
      theirs: download.bare,
      limit: TARGETS.downloadRatio as number | undefined,
    },
    {
      label: `Download ${name} vs Express 5 \`res.download\``,
      short: `Download ${name} ÷ Express's res.download`,
      ours: download.service,
      theirs: download.peer,
      limit: TARGETS.downloadPeerRatio as number | undefined,
    },
  ]
}

/** A client's ceiling against what it measured: the fastest server it drove, and whether it is at least 2x that. */
export interface CeilingCheck {
  ceiling: Ceiling
  label: string
  /** Throughput against the sink (MiB/s) and the fastest server's with this client, at each size. */
  perSize: { bytes: number; ceilingMiBs: number; fastestMiBs: number; fastest: string }[]
  /** The least ceiling ÷ fastest server over the sizes. */
  margin: number
}

const CEILING_LABELS: Record<Ceiling, string> = {
  curlMultipart: 'curl, multipart upload (`-F file=@…`)',
  curlRaw: 'curl, raw upload (`-T file`, streamed)',
  nodeMultipart: 'Node upload client (`bench/upload-client.ts`, multipart, body generated as sent)',
  curlDownload: 'curl, download into /dev/null (the faster of the sink, from memory, and nginx)',
}

/** Which servers each client drove in this run (the Node client drives the RSS and resumable uploads to Fileshare). */
const CEILING_SIDES: Record<Ceiling, { direction: 'upload' | 'download'; sides: string[] }> = {
  curlMultipart: { direction: 'upload', sides: ['service', 'peer'] },
  curlRaw: { direction: 'upload', sides: ['bare', 'bareFsync'] },
  nodeMultipart: { direction: 'upload', sides: ['service'] },
  // nginx is a ceiling of its own here (the faster of it and the sink counts), not a server measured.
  curlDownload: { direction: 'download', sides: ['service', 'bare', 'peer'] },
}

const SIDE_LABELS: Record<string, string> = {
  service: 'Fileshare',
  bare: 'the bare pipe',
  bareFsync: 'the bare pipe with fsync',
  peer: 'Express',
  nginx: 'nginx',
}

export function ceilingChecks(transfer: TransferResults): CeilingCheck[] {
  return CEILINGS.map((ceiling) => {
    const { direction, sides } = CEILING_SIDES[ceiling]
    const perSize = transfer.sizes.map((size) => {
      const runs = size[direction] as Record<string, TransferRuns>
      const fastest = sides.reduce((best, side) => (bestMs(runs[side]!) < bestMs(runs[best]!) ? side : best))
      const sink = mibPerSecondOf(size.bytes, size.ceilings[ceiling])
      return {
        bytes: size.bytes,
        ceilingMiBs: ceiling === 'curlDownload' ? Math.max(sink, mibPerSecondOf(size.bytes, size.download.nginx)) : sink,
        fastestMiBs: mibPerSecondOf(size.bytes, runs[fastest]!),
        fastest: SIDE_LABELS[fastest]!,
      }
    })
    const margin = Math.min(...perSize.map((one) => one.ceilingMiBs / one.fastestMiBs))
    return { ceiling, label: CEILING_LABELS[ceiling], perSize, margin }
  })
}

export const CEILINGS_HEADING = '#### Client ceilings'

/** What each client does against the sink (a server that only counts bytes), and whether it is 2x what it measured. */
function ceilingSection(transfer: TransferResults): string[] {
  const checks = ceilingChecks(transfer)
  const cells = (check: CeilingCheck) =>
    check.perSize.map((one) => `${one.ceilingMiBs.toFixed(0)} MiB/s (${one.fastest}: ${one.fastestMiBs.toFixed(0)} MiB/s)`).join(' | ')
  return [
    CEILINGS_HEADING,
    '',
    'Each client against `bench/sink-server.ts`, a Node.js server that reads a request body and drops it, counting the bytes, ' +
      'or answers a download from one reused 1 MiB buffer: what the client can do when the server costs almost nothing (for ' +
      "curl's downloads, the faster of the sink and nginx), " +
      `measured once in each round (median over the rounds). In brackets: the fastest server this ` +
      'client drove in this run. A client at less than 2x the fastest server it drove is **client-bound** there: that ' +
      "server's figure is partly the client's.",
    '',
    `| Client | ${transfer.sizes.map((size) => `${formatBytes(size.bytes)} (fastest server)`).join(' | ')} | Ceiling ÷ fastest | Verdict |`,
    `|---|${transfer.sizes.map(() => '---|').join('')}---|---|`,
    ...checks.map(
      (check) =>
        `| ${check.label} | ${cells(check)} | ${ratio(check.margin)} | ${check.margin >= TARGETS.clientMargin ? 'not client-bound (≥ 2x)' : '**client-bound** (< 2x)'} |`,
    ),
    '',
  ]
}

function transferSection(results: BenchResults): string[] {
  const { transfer, rss, archive, plan } = results
  const lines: string[] = []
  if (transfer) {
    const sizes = transfer.sizes.map((size) => formatBytes(size.bytes)).join(' and ')
    const rounds = `${transfer.rounds} round${transfer.rounds === 1 ? '' : 's'}`
    const cpu = (runs: TransferRuns) => `${bestCpu(runs).toFixed(2)} s`
    lines.push(
      `### Transfers with curl (${sizes}; ${rounds}, best of ${transfer.tries} turns each)`,
      '',
      `The client is curl (${transfer.curlVersion.split(' (')[0]}): \`curl -F file=@<file>\` for a multipart upload, ` +
        '`curl -T <file>` (streamed, POST) for the bare pipe, `curl -o /dev/null` for a download; the file is read once ' +
        'before the run, so it comes from the page cache. In every round each side takes ' +
        `${transfer.tries} turns in order (Fileshare, the bare pipe with fsync, the bare pipe, Express; then the downloads: ` +
        'Fileshare, nginx, the bare read stream, Express), with `sync` before each upload; its best turn is its figure for the ' +
        "round. Time is curl's `time_total`. The ratio is Fileshare ÷ the other in the same round; the verdict takes the median " +
        'over the rounds (each round in brackets). Server CPU is the user + system time of the receiving or sending process ' +
        "(nginx: its one worker) during Fileshare's and the other's best turns, median over the rounds.",
      '',
      '| Transfer | Fileshare | Other | Ratio, median (each round) | Target | Result | Server CPU, Fileshare / other |',
      '|---|---|---|---|---|---|---|',
    )
    for (const size of transfer.sizes) {
      for (const compared of transferComparisons(size)) {
        const { median: value, each } = roundRatios(compared.ours, compared.theirs)
        const target = compared.limit === undefined ? '' : `≤ ${ratio(compared.limit)}`
        const result = compared.limit === undefined ? '' : atMost(value, compared.limit)
        lines.push(
          `| ${compared.label} | ${seconds(bestMs(compared.ours))} | ${seconds(bestMs(compared.theirs))} | ` +
            `${ratio(value)} (${each.map(ratio).join(', ')}) | ${target} | ${result} | ${cpu(compared.ours)} / ${cpu(compared.theirs)} |`,
        )
      }
    }
    const throughputRow = (label: string, pick: (size: SizeTransfers) => TransferRuns) =>
      `| ${label} | ${transfer.sizes.map((size) => `${mibPerSecondOf(size.bytes, pick(size)).toFixed(0)} MiB/s`).join(' | ')} |`
    const runs = (values: number[]) => values.map(Math.round).join(', ')
    lines.push(
      '',
      'Throughput (size ÷ median best time):',
      '',
      `| Side | ${transfer.sizes.map((size) => formatBytes(size.bytes)).join(' | ')} |`,
      `|---|${transfer.sizes.map(() => '---|').join('')}`,
      throughputRow('Upload: Fileshare, multipart (SHA-256, fsync, SQLite)', (size) => size.upload.service),
      throughputRow('Upload: the bare pipe with fsync', (size) => size.upload.bareFsync),
      throughputRow('Upload: the bare pipe', (size) => size.upload.bare),
      throughputRow('Upload: Express 5 + Multer 2', (size) => size.upload.peer),
      throughputRow('Download: Fileshare, public link', (size) => size.download.service),
      throughputRow('Download: nginx, `sendfile on`', (size) => size.download.nginx),
      throughputRow('Download: the bare read stream', (size) => size.download.bare),
      throughputRow('Download: Express `res.download`', (size) => size.download.peer),
      '',
      'Every turn (ms), in order: ' +
        transfer.sizes
          .map(
            (size) =>
              `${formatBytes(size.bytes)}: upload Fileshare ${runs(size.upload.service.tries)}, bare with fsync ${runs(size.upload.bareFsync.tries)}, ` +
              `bare ${runs(size.upload.bare.tries)}, Express ${runs(size.upload.peer.tries)}; download Fileshare ${runs(size.download.service.tries)}, ` +
              `nginx ${runs(size.download.nginx.tries)}, bare ${runs(size.download.bare.tries)}, Express ${runs(size.download.peer.tries)}`,
          )
          .join('. ') +
        '.',
      '',
      "What each side does. Fileshare (upload): authenticates the key, checks the plan's limits, parses the multipart body " +
        '(@fastify/multipart, busboy), computes the SHA-256 of the content, writes the blob, fsyncs it before it records the ' +
        'file in SQLite and answers 201. Fileshare (download): looks the public link up, counts the download, and streams the ' +
        'blob with an ETag (the SHA-256), Range and conditional GET support. The bare baseline (`bench/baseline-server.ts`) ' +
        'pipes the raw request body (no multipart framing) to a file, with or without fsync, and serves a file with ' +
        '`fs.createReadStream`: no headers beyond the length, no Range. Express 5 (`bench/peer-server.ts`, one process, ' +
        "`NODE_ENV=production`) with Multer 2's disk storage parses the same multipart body with busboy and pipes the file part " +
        'to a file, but neither fsyncs nor hashes, and has no accounts, limits or database; its `res.download` serves the ' +
        'stored file through `send` (`fs.createReadStream`, Content-Disposition, ETag, Range, conditional GET). nginx ' +
        `(${transfer.nginxVersion.replace(/^nginx version: /, '')}, Debian's, \`bench/nginx-file-server.ts\`: one worker, \`sendfile on\`, ` +
        "`tcp_nopush on`, no access log) serves Fileshare's own blob file of the round: the kernel copies it from the page " +
        'cache to the socket, which no Node.js server can do.',
      '',
      ...ceilingSection(transfer),
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
        `| One ${formatBytes(Math.max(...plan.transferSizes))} upload, curl (for comparison) | ${mib(peak.peakBytes)} | ${mib(peak.startBytes)} | | | |`,
      )
      lines.push(
        `| Bare pipe, one ${formatBytes(Math.max(...plan.transferSizes))} upload (for comparison) | ${mib(bare.peakBytes)} | ${mib(bare.startBytes)} | | | |`,
        `| Express + Multer, one ${formatBytes(Math.max(...plan.transferSizes))} upload (peer, for comparison) | ${mib(transfer.peerUploadRss.peakBytes)} | ${mib(transfer.peerUploadRss.startBytes)} | | | |`,
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
      if (archive) lines.push(...archiveRows(archive))
      if (transfer) {
        const growth = large.peakBytes - transfer.serviceUploadRss.peakBytes
        lines.push(
          '',
          `Growth with file size: the ${formatBytes(plan.largeUploadBytes)} upload peaked ${mib(Math.abs(growth))} ${growth >= 0 ? 'above' : 'below'} ` +
            `the ${formatBytes(Math.max(...plan.transferSizes))} upload.`,
        )
      }
    }
    lines.push('')
  }
  return lines
}

/** The ZIP download's rows of the peak-memory table: the archive of one file, of all, and a plain download for reference. */
function archiveRows(archive: ArchiveBench): string[] {
  const total = formatBytes(archive.fileBytes * archive.files)
  const rate = (run: { bytes: number; ms: number }) => `${(run.bytes / 1024 / 1024 / (run.ms / 1000)).toFixed(0)} MiB/s`
  const flatLimit = archive.one.peakBytes + FLAT_ARCHIVE_SLACK_BYTES
  return [
    `| ZIP download of one ${formatBytes(archive.fileBytes)} file (POST /files/archive; ${rate(archive.one)}) | ${mib(archive.one.peakBytes)} | ${mib(archive.one.startBytes)} | ${seconds(archive.one.ms)} | | |`,
    `| ZIP download of ${archive.files} files, ${total} (${rate(archive.all)}; length = Content-Length) | ${mib(archive.all.peakBytes)} | ${mib(archive.all.startBytes)} | ${seconds(archive.all.ms)} | ≤ one file's + ${mib(FLAT_ARCHIVE_SLACK_BYTES)} (flat) | ${atMost(archive.all.peakBytes, flatLimit)} |`,
    `| Plain download of one ${formatBytes(archive.fileBytes)} file (its public link, for comparison; ${rate(archive.plainDownload)}) | ${mib(archive.plainDownload.peakBytes)} | ${mib(archive.plainDownload.startBytes)} | ${seconds(archive.plainDownload.ms)} | | |`,
  ]
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
  const rate = (upload: MeasuredUpload) => run.bytes / MiB / (upload.ms / 1000)
  const throughput = rate(run.resumable) / rate(run.multipart)
  const node = results.transfer ? ceilingChecks(results.transfer).find((check) => check.ceiling === 'nodeMultipart') : undefined
  const nodeCeiling = node ? Math.min(...node.perSize.map((one) => one.ceilingMiBs)) : undefined
  lines.push(
    '| Throughput, same server and run | Resumable (tus) | Multipart | Resumable ÷ multipart | Target | Result |',
    '|---|---|---|---|---|---|',
    `| ${size}, client's time | ${rate(run.resumable).toFixed(0)} MiB/s | ${rate(run.multipart).toFixed(0)} MiB/s | ${ratio(throughput)} | ` +
      `≥ ${ratio(TARGETS.resumableThroughputRatio)} | ${atLeast(throughput, TARGETS.resumableThroughputRatio)} |`,
    '',
    'Both bodies come from Node.js clients (`bench/resumable-client.ts`, `bench/upload-client.ts`), generated as they are sent' +
      (nodeCeiling === undefined
        ? '.'
        : `; the Node upload client's ceiling against the sink was ${nodeCeiling.toFixed(0)} MiB/s in this run ` +
          `(${ratio(nodeCeiling / Math.max(rate(run.resumable), rate(run.multipart)))} the faster of the two here: ` +
          `${nodeCeiling >= TARGETS.clientMargin * Math.max(rate(run.resumable), rate(run.multipart)) ? 'not client-bound' : '**client-bound**'}).`),
    '',
  )
  return lines
}

/** Mean requests/s of Fileshare's runs ÷ the peer's on one call, and the same by server CPU per request. */
export function peerRatio(runs: { fileshare: MeasuredLoad[]; peer: MeasuredLoad[] }): { rate: number; cpu: number } {
  return {
    rate: requestRate(runs.fileshare) / requestRate(runs.peer),
    cpu: cpuPerRequest(runs.peer) / cpuPerRequest(runs.fileshare),
  }
}

/**
 * The target of one metadata call, as [target, result] cells: GET /files/:id and GET /stats by their
 * requests/s against the Express 5 + better-sqlite3 peer's (same work, same run), page 1 of the
 * listing by its server CPU per request (its cost per row); none for the other pages.
 */
export function metadataTarget(call: MetadataCall, run: MeasuredLoad, peer: PeerComparison): [string, string] {
  switch (call) {
    case 'detail':
      return [`≥ ${ratio(TARGETS.detailVsPeer)} the peer's req/s`, atLeast(peerRatio(peer.detail).rate, TARGETS.detailVsPeer)]
    case 'stats':
      return [`≥ ${ratio(TARGETS.statsVsPeer)} the peer's req/s`, atLeast(peerRatio(peer.stats).rate, TARGETS.statsVsPeer)]
    case 'list':
      return [`≤ ${TARGETS.listCpuMicros} µs CPU per request`, atMost(run.cpuMicrosPerRequest, TARGETS.listCpuMicros)]
    case 'deepList':
    case 'beforeIdList':
      return ['', '']
  }
}

function loadSection(results: BenchResults): string[] {
  const { load, plan } = results
  if (!load) return []
  const { bare, small, large, peer } = load
  const cpu = (run: MeasuredLoad) => `${Math.round(run.cpuMicrosPerRequest)} µs`
  const smallCount = plan.smallAccountFiles.toLocaleString('en-US')
  const largeCount = plan.largeAccountFiles.toLocaleString('en-US')
  const lines = [
    `### Metadata calls (${plan.connections} connections, ${plan.loadSeconds} s each after ${plan.warmupSeconds} s of warm-up, autocannon)`,
    '',
    "Server CPU per request is the server process's CPU time during the run divided by the requests served: unlike " +
      'requests per second, it hardly changes with whatever else the machine is running.',
    '',
    `The account holding ${smallCount} files, next to the bare JSON route (no target: Fastify alone is about 80% of it):`,
    '',
    '| Call | Requests/s | p50 | p99 | Server CPU per request | Share of bare route req/s (by CPU) | Target | Result |',
    '|---|---|---|---|---|---|---|---|',
    `| Bare route (same JSON as GET /files/:id) | ${rps(bare.requestsPerSecond)} | ${ms(bare.p50Ms)} | ${ms(bare.p99Ms)} | ${cpu(bare)} | 100% | | |`,
  ]
  for (const call of METADATA_CALLS) {
    const run = small[call]
    const share = run.requestsPerSecond / bare.requestsPerSecond
    const shareByCpu = bare.cpuMicrosPerRequest / run.cpuMicrosPerRequest
    const [target, result] = metadataTarget(call, run, peer)
    lines.push(
      `| ${CALL_LABELS[call]} | ${rps(run.requestsPerSecond)} | ${ms(run.p50Ms)} | ${ms(run.p99Ms)} | ${cpu(run)} | ${percent(share)} (${percent(shareByCpu)}) | ` +
        `${target} | ${result} |`,
    )
  }
  const eachRun = (runs: MeasuredLoad[]) => runs.map((run) => rps(run.requestsPerSecond)).join(', ')
  lines.push(
    '',
    `Against the peer a user would write: an Express 5 + better-sqlite3 app (\`bench/metadata-peer.ts\`, \`NODE_ENV=production\`) ` +
      `doing the same work on the same database file and account: the Bearer key looked up by its SHA-256 with its account, ` +
      'a per-account request counter in memory (a window per minute, RateLimit-* headers), the row read by id and account ' +
      "(or the account's counters less its expired files), and the same JSON (checked equal to Fileshare's before the runs). " +
      `They take turns: Fileshare's run of the table above, the peer twice, Fileshare again; the ratio is the mean requests/s ` +
      "of Fileshare's runs ÷ the peer's (by server CPU per request in brackets).",
    '',
    '| Call | Fileshare req/s (each run) | Peer req/s (each run) | p99, Fileshare / peer | Server CPU per request, Fileshare / peer | Fileshare ÷ peer (by CPU) | Target | Result |',
    '|---|---|---|---|---|---|---|---|',
    ...(['detail', 'stats'] as const).map((call) => {
      const runs = peer[call]
      const { rate, cpu: byCpu } = peerRatio(runs)
      const meanP99 = (list: MeasuredLoad[]) => list.reduce((total, run) => total + run.p99Ms, 0) / list.length
      const [target, result] = metadataTarget(call, small[call], peer)
      return (
        `| ${CALL_LABELS[call].replace(/ \(.*\)$/, '')} | ${rps(requestRate(runs.fileshare))} (${eachRun(runs.fileshare)}) | ` +
        `${rps(requestRate(runs.peer))} (${eachRun(runs.peer)}) | ${ms(meanP99(runs.fileshare))} / ${ms(meanP99(runs.peer))} | ` +
        `${Math.round(cpuPerRequest(runs.fileshare))} µs / ${Math.round(cpuPerRequest(runs.peer))} µs | ${ratio(rate)} (${ratio(byCpu)}) | ${target} | ${result} |`
      )
    }),
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

/** A fraction as a percentage with one decimal, and a real minus sign when negative. */
const signedPercent = (value: number) => `${value < 0 ? '−' : ''}${(Math.abs(value) * 100).toFixed(1)}%`

/** Requests/s over the runs of one side (their mean). */
function requestRate(runs: MeasuredLoad[]): number {
  return runs.reduce((total, run) => total + run.requestsPerSecond, 0) / runs.length
}

/** Server CPU per request over the runs of one side, weighted by their requests. */
function cpuPerRequest(runs: MeasuredLoad[]): number {
  const requests = runs.reduce((total, run) => total + run.requests, 0)
  return runs.reduce((total, run) => total + run.cpuMicrosPerRequest * run.requests, 0) / requests
}

/** What FILESHARE_METRICS_ADDR costs, as fractions: requests/s lost and CPU per request added. */
export function metricsCostOf(metrics: { off: MeasuredLoad[]; on: MeasuredLoad[] }): { rateCost: number; cpuCost: number } {
  return {
    rateCost: 1 - requestRate(metrics.on) / requestRate(metrics.off),
    cpuCost: cpuPerRequest(metrics.on) / cpuPerRequest(metrics.off) - 1,
  }
}

export const METRICS_HEADING = '### Metrics cost: GET /files/:id with the Prometheus listener off and on'

/**
 * GET /files/:id on two server processes of the same build, one without and one with
 * FILESHARE_METRICS_ADDR; or why the case was skipped. `standalone`: from a run of this section alone.
 */
export function metricsSection(results: BenchResults, { standalone = false } = {}): string[] {
  const { metrics, plan } = results
  if (!metrics) return []
  const lines = [METRICS_HEADING, '']
  if (standalone) {
    lines.push(
      `Measured in a run of this section alone (\`BENCH_ONLY=metrics npm run bench\`), started ${results.startedAt.toISOString()}; ` +
        `load average at start ${results.loadAverageAtStart.map((value) => value.toFixed(2)).join(' ')}.`,
      '',
    )
  }
  if ('skipped' in metrics) {
    lines.push(`Skipped: ${metrics.skipped}`, '')
    return lines
  }
  const mean = (runs: MeasuredLoad[], pick: (run: MeasuredLoad) => number) =>
    runs.reduce((total, run) => total + pick(run), 0) / runs.length
  const row = (label: string, runs: MeasuredLoad[]) =>
    `| ${label} | ${rps(requestRate(runs))} | ${ms(mean(runs, (run) => run.p50Ms))} | ${ms(mean(runs, (run) => run.p99Ms))} | ` +
    `${Math.round(cpuPerRequest(runs))} µs | ${runs.map((run) => rps(run.requestsPerSecond)).join(', ')} |`
  const cost = metricsCostOf(metrics)
  lines.push(
    `The same call as in the metadata table (the small account's middle file, ${plan.connections} connections, ` +
      `${plan.loadSeconds} s per run after warm-up) on two server processes of the same build and data folder, started the ` +
      `same way except that the second has \`FILESHARE_METRICS_ADDR=${metrics.address}\`. They take turns (${plan.metricsTurns.join(', ')}), ` +
      `so that a change in the machine's load hits both sides alike. One scrape of /metrics after the runs: ${metrics.scrapeBytes} bytes.`,
    '',
    '| Server | Requests/s (mean) | p50 | p99 | Server CPU per request | Each run, req/s |',
    '|---|---|---|---|---|---|',
    row('Metrics off (`FILESHARE_METRICS_ADDR` unset)', metrics.off),
    row(`Metrics on (\`FILESHARE_METRICS_ADDR=${metrics.address}\`)`, metrics.on),
    '',
    `On ÷ off: requests/s ${ratio(requestRate(metrics.on) / requestRate(metrics.off))}, server CPU per request ` +
      `${ratio(cpuPerRequest(metrics.on) / cpuPerRequest(metrics.off))}.`,
    '',
    'The cost of the listener, both ways: the requests per second it loses and the server CPU per request it adds ' +
      '(a negative cost means the "on" side came out ahead: the noise of the machine, not a gain).',
    '',
    '| Cost of metrics on | Measured | Target | Result |',
    '|---|---|---|---|',
    `| Requests/s lost (1 − on ÷ off) | ${signedPercent(cost.rateCost)} | < ${percent(TARGETS.metricsCost)} | ${costBelow(cost.rateCost, TARGETS.metricsCost)} |`,
    `| Server CPU per request added (on ÷ off − 1) | ${signedPercent(cost.cpuCost)} | < ${percent(TARGETS.metricsCost)} | ${costBelow(cost.cpuCost, TARGETS.metricsCost)} |`,
    '',
  )
  return lines
}

export const SCAN_HEADING = '### Virus scanning: one large file on S3 through clamd'

const mibPerSecond = (bytes: number, milliseconds: number) => bytes / MiB / (milliseconds / 1000)

/**
 * The scan section (bench/scan-bench.ts): throughput of the server's scan against clamd alone, the
 * server's memory during the scan, and the latency of other requests meanwhile. `standalone`: from a
 * run of this section alone (BENCH_ONLY=scan), so it says which run and machine it comes from.
 */
export function scanSection(results: BenchResults, { standalone = false } = {}): string[] {
  const { scan } = results
  if (!scan) return []
  const size = formatBytes(scan.bytes)
  const lines = [SCAN_HEADING, '']
  if (standalone) {
    const cpus = os.cpus()
    lines.push(
      `Measured in a run of this section alone (\`BENCH_ONLY=scan npm run bench\`${results.plan.quick ? ' with BENCH_QUICK=1' : ''}), ` +
        `started ${results.startedAt.toISOString()}, took ${Math.round((results.finishedAt.getTime() - results.startedAt.getTime()) / 1000)} s; ` +
        `load average at start ${results.loadAverageAtStart.map((value) => value.toFixed(2)).join(' ')}; ` +
        `${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, Linux ${os.release()}, Node.js ${process.version}; ` +
        `server \`${results.serverCommand}\`; ${scan.clamdVersion.split('/')[0]}. The section is opt-in: it needs clamd ` +
        '(`/usr/sbin/clamd`, Debian package clamav-daemon, or `FILESHARE_TEST_CLAMD`) and adds a few minutes, so the default ' +
        '`npm run bench` leaves it out (and keeps this section as it is).',
      '',
    )
  }
  const warmMs = scan.clamd.warm.reduce((total, run) => total + run.ms, 0) / scan.clamd.warm.length
  const serverRate = mibPerSecond(scan.bytes, scan.server.ms)
  const warmRate = mibPerSecond(scan.bytes, warmMs)
  lines.push(
    `Method. clamd runs with a one-signature test database (\`test/helpers/clamd.ts\`; StreamMaxLength, MaxFileSize and ` +
      `MaxScanSize 2000M), s3rver in a process of its own, and the server as \`npm start\` runs it on the S3 store (SQLite ` +
      "for the database) with `FILESHARE_SCAN=required`, `FILESHARE_SCAN_MAX_BYTES=2097152000` (2000 MiB, clamd's StreamMaxLength) " +
      `and \`FILESHARE_SCAN_TIMEOUT_MS=600000\`. One ${size} file of pseudo-random bytes (one 1 MiB random block repeated, as ` +
      'every upload of the bench) goes up as one multipart upload; the server stores it in s3rver and answers 201 with ' +
      "`scan.status: pending`, then streams the object from s3rver to clamd with INSTREAM. The scan's time runs from the " +
      `upload's answer until \`GET /files/{id}\` (asked every 50 ms) first says \`clean\`. clamd alone is the same number of ` +
      'bytes sent straight to clamd with INSTREAM in 64 KiB chunks by a client process (`bench/instream-client.ts`), no ' +
      "server: the ceiling. clamd's first large scan after its start can be much slower, so it is reported apart (cold), and the " +
      "server's scan comes after one warm-up scan; clamd alone runs warm once before and once after it. Memory: the server's " +
      'VmRSS sampled every 20 ms and its VmHWM (reset when the upload answered). Latency: a client process asks ' +
      '`GET /healthz` and `GET /api/v1/files?limit=1` every 50 ms each, on a keep-alive connection of its own, while the ' +
      'server is idle (before the upload), during the upload, and during the scan.',
    '',
    '| Case | Time | Throughput | ÷ clamd alone, warm |',
    '|---|---|---|---|',
    `| clamd alone, first scan after its start (cold) | ${seconds(scan.clamd.cold.ms)} | ${mibPerSecond(scan.bytes, scan.clamd.cold.ms).toFixed(0)} MiB/s | |`,
    `| clamd alone, warm (before and after the server's scan: ${scan.clamd.warm.map((run) => seconds(run.ms)).join(', ')}) | ` +
      `${seconds(warmMs)} | ${warmRate.toFixed(0)} MiB/s | 1.00x |`,
    `| **Fileshare: ${size} on S3 → server → clamd** (upload answered → \`scan.status: clean\`) | ${seconds(scan.server.ms)} | ` +
      `**${serverRate.toFixed(0)} MiB/s** | ${ratio(serverRate / warmRate)} |`,
  )
  if (scan.server.metricMs !== undefined) {
    const rate = mibPerSecond(scan.bytes, scan.server.metricMs)
    lines.push(
      `| Fileshare, the server's own scan time (\`fileshare_scan_duration_seconds_sum{result="clean"}\`) | ` +
        `${seconds(scan.server.metricMs)} | ${rate.toFixed(0)} MiB/s | ${ratio(rate / warmRate)} |`,
    )
  }
  if (scan.reads.s3Ms !== undefined) {
    lines.push(
      `| Reading the object from s3rver alone (no server, no clamd), for reference | ${seconds(scan.reads.s3Ms)} | ` +
        `${mibPerSecond(scan.bytes, scan.reads.s3Ms).toFixed(0)} MiB/s | |`,
    )
  }
  lines.push(
    `| Downloading it through the public link (S3 → server → client, no clamd), for reference | ${seconds(scan.reads.serverDownloadMs)} | ` +
      `${mibPerSecond(scan.bytes, scan.reads.serverDownloadMs).toFixed(0)} MiB/s | |`,
    `| The upload itself (multipart, into s3rver), for reference | ${seconds(scan.upload.ms)} | ${mibPerSecond(scan.bytes, scan.upload.ms).toFixed(0)} MiB/s | |`,
    '',
    `clamd alone took the ${size} stream in ${scan.clamd.warm.map((run) => seconds(run.sentMs)).join(' and ')} (warm) and ` +
      `answered ${scan.clamd.warm.map((run) => seconds(run.ms - run.sentMs)).join(' and ')} after the last byte: it spools the ` +
      'stream to a temporary file and scans it once it has all of it. ' +
      (scan.server.streamedMs === undefined
        ? ''
        : `Through the server, clamd's spool file had every byte ${seconds(scan.server.streamedMs)} after the upload's answer ` +
          `(${mibPerSecond(scan.bytes, scan.server.streamedMs).toFixed(0)} MiB/s from s3rver through the server to clamd; seen by ` +
          `polling clamd's TemporaryDirectory every 20 ms), and clamd answered ${seconds(scan.server.ms - scan.server.streamedMs)} ` +
          'later. ') +
      `The server used ${scan.server.cpuSeconds.toFixed(2)} s of CPU during its scan.`,
    '',
  )
  const growth = scan.server.rssPeakBytes - scan.server.rssStartBytes
  lines.push(
    '| Memory | RSS idle, before the upload | RSS when the upload answered (scan starts) | Peak during the scan | Growth during the scan | Target | Result |',
    '|---|---|---|---|---|---|---|',
    `| Fileshare server | ${mib(scan.server.rssIdleBytes)} | ${mib(scan.server.rssStartBytes)} | ${mib(scan.server.rssPeakBytes)} | ` +
      `${growth >= 0 ? '+' : '−'}${mib(Math.abs(growth))} | < +${mib(TARGETS.scanRssGrowthBytes)} | ${atMost(growth, TARGETS.scanRssGrowthBytes)} |`,
    `| clamd (for reference) | | | ${mib(scan.server.clamdPeakBytes)} | | | |`,
    '',
  )
  const figures = (stats: LatencyStats) =>
    `${ms(stats.p50Ms)} / ${ms(stats.p99Ms)} / ${ms(stats.maxMs)}${stats.failures > 0 ? ` (${stats.failures} failed)` : ''}`
  const latencyRow = (label: string, pick: (phase: ScanBench['latency']['idle']) => LatencyStats) => {
    const during = pick(scan.latency.scan)
    const result =
      during.failures > 0
        ? `**missed**: ${during.failures} failed`
        : during.maxMs < TARGETS.scanProbeMaxMs
          ? 'met'
          : atMost(during.maxMs, TARGETS.scanProbeMaxMs)
    return (
      `| ${label} | ${figures(pick(scan.latency.idle))} | ${figures(pick(scan.latency.upload))} | ${figures(during)} | ` +
      `max < ${ms(TARGETS.scanProbeMaxMs)}, none failed | ${result} |`
    )
  }
  lines.push(
    '| Latency, p50 / p99 / max | Idle | During the upload | During the scan | Target (during the scan) | Result |',
    '|---|---|---|---|---|---|',
    latencyRow('`GET /healthz`', (phase) => phase.healthz),
    latencyRow('`GET /api/v1/files?limit=1` (authenticated, database)', (phase) => phase.api),
    '',
    `Samples: ${scan.latency.idle.healthz.count + scan.latency.idle.api.count} idle, ${scan.latency.upload.healthz.count + scan.latency.upload.api.count} ` +
      `during the upload, ${scan.latency.scan.healthz.count + scan.latency.scan.api.count} during the scan (both calls together). ` +
      `${scan.server.rssSamples} RSS samples during the scan. Not blocked means no call waits anywhere near the scan's ` +
      `length: the target is that none waits ${ms(TARGETS.scanProbeMaxMs)} or more. What p50 and p99 gain over idle is the ` +
      'price of sharing the cores with clamd and s3rver, which the load average above adds to.',
    '',
  )
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
      `load average at start ${results.loadAverageAtStart.map((value) => value.toFixed(2)).join(' ')}` +
      (results.loadAverageAtEnd ? `, at the end ${results.loadAverageAtEnd.map((value) => value.toFixed(2)).join(' ')}` : '') +
      '.',
    ...loadLines(results),
    `- Server: \`${results.serverCommand}\` (as \`npm start\` runs it), embedded default (SQLite + blob folder), log level ` +
      `\`${process.env.BENCH_LOG_LEVEL ?? 'info'}\` to a file; every client and the baseline run in processes of their own.`,
  ]
}

/** The machine's load during the run, from the 1-minute load average sampled every 10 s, and the clients' ceilings. */
function loadLines(results: BenchResults): string[] {
  const lines: string[] = []
  const samples = results.loadSamples ?? []
  if (samples.length > 0) {
    lines.push(
      `- Load during the run (1-minute load average every 10 s, ${samples.length} samples, on ${os.cpus().length} cores): ` +
        `median ${median(samples).toFixed(2)}, max ${Math.max(...samples).toFixed(2)}. Other work shares the machine; ` +
        'every comparison is between figures of this run, taken in turns.',
    )
  }
  if (results.transfer) {
    const checks = ceilingChecks(results.transfer)
    lines.push(
      '- Client ceilings (against a sink that only counts bytes; see "Client ceilings" below): ' +
        checks
          .map((check) => `${check.label.split(' (')[0]} ${Math.min(...check.perSize.map((one) => one.ceilingMiBs)).toFixed(0)} MiB/s`)
          .join('; ') +
        '.',
    )
  }
  return lines
}

/** One target of the run: what it asks, what was measured, and the verdict ("met" or "**missed** by ..."). */
export interface TargetCheck {
  target: string
  measured: string
  result: string
}

/** Every target this run measured, in the order of the tables below (which show the same verdicts with their figures). */
export function targetChecks(results: BenchResults): TargetCheck[] {
  const { transfer, rss, archive, resumable, load, metrics } = results
  const checks: TargetCheck[] = []
  if (transfer) {
    for (const size of transfer.sizes) {
      for (const compared of transferComparisons(size)) {
        if (compared.limit === undefined) continue
        const value = roundRatios(compared.ours, compared.theirs).median
        checks.push({
          target: `${compared.short} ≤ ${ratio(compared.limit)}`,
          measured: ratio(value),
          result: atMost(value, compared.limit),
        })
      }
    }
    const node = ceilingChecks(transfer).find((check) => check.ceiling === 'nodeMultipart')!
    checks.push({
      target: `Node upload client's ceiling ÷ Fileshare's multipart upload throughput ≥ ${ratio(TARGETS.clientMargin)} (else its figures are marked client-bound)`,
      measured: ratio(node.margin),
      result: atLeast(node.margin, TARGETS.clientMargin),
    })
  }
  const peak = (label: string, bytes: number) =>
    checks.push({
      target: `Peak RSS, ${label} < ${mib(TARGETS.peakRssBytes)}`,
      measured: mib(bytes),
      result: atMost(bytes, TARGETS.peakRssBytes),
    })
  if (rss) {
    peak(`one ${formatBytes(results.plan.largeUploadBytes)} upload`, rss.asStarted.large.peakBytes)
    peak(
      `${results.plan.concurrentUploads} concurrent ${formatBytes(results.plan.concurrentUploadBytes)} uploads`,
      rss.asStarted.concurrent.peakBytes,
    )
  }
  if (archive) {
    checks.push({
      target: `ZIP of ${archive.files} × ${formatBytes(archive.fileBytes)}: peak RSS ≤ the one-file ZIP's + ${mib(FLAT_ARCHIVE_SLACK_BYTES)} (flat)`,
      measured: `${mib(archive.all.peakBytes)} vs ${mib(archive.one.peakBytes)}`,
      result: atMost(archive.all.peakBytes, archive.one.peakBytes + FLAT_ARCHIVE_SLACK_BYTES),
    })
  }
  if (resumable) {
    peak(`resumable upload of ${formatBytes(resumable.bytes)}`, resumable.resumable.peakBytes)
    const value = resumable.multipart.ms / resumable.resumable.ms
    checks.push({
      target: `Resumable upload throughput ÷ multipart upload throughput (${formatBytes(resumable.bytes)}, Node clients) ≥ ${ratio(TARGETS.resumableThroughputRatio)}`,
      measured: ratio(value),
      result: atLeast(value, TARGETS.resumableThroughputRatio),
    })
  }
  if (load) {
    for (const call of ['detail', 'stats', 'list'] as const) {
      const run = load.small[call]
      const [target, result] = metadataTarget(call, run, load.peer)
      const measured = call === 'list' ? `${Math.round(run.cpuMicrosPerRequest)} µs` : ratio(peerRatio(load.peer[call]).rate)
      checks.push({ target: `${CALL_LABELS[call].replace(/ \(.*\)$/, '')}: ${target}`, measured, result })
    }
    const growthCheck = (label: string, small: MeasuredLoad, large: MeasuredLoad): TargetCheck => {
      const growth = large.cpuMicrosPerRequest / small.cpuMicrosPerRequest
      return {
        target: `${label.replace(/ \(.*\)$/, '')}: CPU per request at ${results.plan.largeAccountFiles.toLocaleString('en-US')} files ÷ at ${results.plan.smallAccountFiles.toLocaleString('en-US')} ≤ ${ratio(TARGETS.growthRatio)}`,
        measured: ratio(growth),
        result: atMost(growth, TARGETS.growthRatio),
      }
    }
    for (const call of ['detail', 'list', 'stats'] as const) checks.push(growthCheck(CALL_LABELS[call], load.small[call], load.large[call]))
    const { find } = load
    if (find) {
      for (const call of FIND_CALLS.filter(findTargeted)) checks.push(growthCheck(FIND_LABELS[call], find.small[call], find.large[call]))
    }
  }
  if (metrics && !('skipped' in metrics)) {
    const { rateCost, cpuCost } = metricsCostOf(metrics)
    const limit = percent(TARGETS.metricsCost)
    checks.push(
      {
        target: `Metrics on: GET /files/:id requests/s lost < ${limit}`,
        measured: signedPercent(rateCost),
        result: costBelow(rateCost, TARGETS.metricsCost),
      },
      {
        target: `Metrics on: GET /files/:id CPU per request added < ${limit}`,
        measured: signedPercent(cpuCost),
        result: costBelow(cpuCost, TARGETS.metricsCost),
      },
    )
  }
  return checks
}

/** The verdicts of this run at a glance, before the tables. */
export function targetsSection(results: BenchResults): string[] {
  const checks = targetChecks(results)
  if (checks.length === 0) return []
  const missed = checks.filter((check) => check.result !== 'met').length
  return [
    '### Targets',
    '',
    `${checks.length - missed} of ${checks.length} targets measured in this run met. The tables below show each with its figures. ` +
      'The targets are those of issue 36 (curl as the transfer client; downloads against nginx; metadata against an Express 5 + ' +
      'better-sqlite3 peer), with the older ones that still stand. ' +
      `The soak's targets (peak RSS < 160 MiB through a 10-minute mixed soak, no upward trend in its second half) are in ` +
      'the soak section, from `npm run soak`, a run of its own. A section rerun alone (`BENCH_ONLY=resumable` or `metrics`) ' +
      'updates its own table, not this summary.',
    '',
    '| Target | Measured | Result |',
    '|---|---|---|',
    ...checks.map((check) => `| ${check.target} | ${check.measured} | ${check.result} |`),
    '',
  ]
}

/** The tables of one run, in Markdown (printed to the terminal as well as written to the docs). */
export function renderTables(results: BenchResults): string {
  return [
    ...targetsSection(results),
    ...transferSection(results),
    ...resumableSection(results),
    ...loadSection(results),
    ...findSection(results),
    ...metricsSection(results),
    ...scanSection(results),
  ].join('\n')
}

const NOTES_MARKER = '<!-- Everything below this line is written by hand; bench/run.ts keeps it. -->'

/** The section `npm run soak` writes into docs/benchmarks.md (bench/soak/report.ts); the bench keeps it. */
export const SOAK_HEADING = '### Soak: server memory and open files over time'

/** A chart written next to the doc: its path relative to docs/ and its alternative text. */
export interface ChartLink {
  file: string
  alt: string
}

/** The "Charts" section: the pictures of this run's figures, as relative image links. */
export function chartsSection(charts: ChartLink[]): string[] {
  if (charts.length === 0) return []
  return [
    '### Charts',
    '',
    'Drawn from the figures above by `bench/charts.ts` (plain SVG, no chart library), in the same run. Longer bars are ' +
      'better for throughput, shorter ones for latency and CPU.',
    '',
    ...charts.flatMap((chart) => [`![${chart.alt}](${chart.file})`, '']),
  ]
}

/** The text of the section under `heading` in the generated part of `current`, if it has one. */
function generatedSection(current: string, heading: string): string | undefined {
  const notesAt = current.indexOf(NOTES_MARKER)
  const generatedEnd = notesAt >= 0 ? notesAt : current.length
  const start = current.indexOf(`${heading}\n`)
  if (start < 0 || start >= generatedEnd) return undefined
  const next = current.indexOf('\n### ', start + heading.length)
  return current.slice(start, next >= 0 && next < generatedEnd ? next + 1 : generatedEnd).trimEnd()
}

/**
 * Writes docs/benchmarks.md: the figures of this run (and `charts`) above the marker line, the
 * soak's section as the last `npm run soak` wrote it, and whatever notes were written by hand
 * below the marker, unchanged.
 */
export function writeBenchmarksDoc(file: string, results: BenchResults, charts: ChartLink[] = []): void {
  let notes = `${NOTES_MARKER}\n\n## Notes\n\n(none yet)\n`
  let soak: string | undefined
  // The scan section is opt-in (BENCH_ONLY=scan): a run without it keeps the one the last scan run wrote.
  let scan: string | undefined
  if (fs.existsSync(file)) {
    const current = fs.readFileSync(file, 'utf8')
    const at = current.indexOf(NOTES_MARKER)
    if (at >= 0) notes = current.slice(at)
    soak = generatedSection(current, SOAK_HEADING)
    if (!results.scan) scan = generatedSection(current, SCAN_HEADING)
  }
  const generated = [
    '# Benchmarks',
    '',
    '`npm run bench` (not part of `npm test`) measures the real server (`node dist/server.js`, embedded default) side by ' +
      'side with a bare Node.js baseline, with the peers a user would pick instead, and with nginx, on the same machine in ' +
      'the same run. The baseline (`bench/baseline-server.ts`) is an `http` server that pipes a request body straight to a ' +
      'file, serves a file with `fs.createReadStream`, and answers the same JSON as `GET /files/:id`. The peers are an ' +
      'Express 5 app with Multer 2 (upload) and `res.download` (download) (`bench/peer-server.ts`), and an Express 5 + ' +
      'better-sqlite3 app for `GET /files/:id` and `GET /stats` (`bench/metadata-peer.ts`). nginx with `sendfile on` ' +
      "(`bench/nginx-file-server.ts`) is the downloads' ceiling. Transfers use curl as the client; each client's own " +
      'ceiling is measured against a sink that only counts bytes (`bench/sink-server.ts`). The part above the notes is ' +
      'written by the script; rerun it to refresh.',
    '',
    ...machineLines(results),
    '',
    renderTables(results),
    ...(scan ? [scan, ''] : []),
    ...chartsSection(charts),
    ...(soak ? [soak, ''] : []),
  ].join('\n')
  fs.writeFileSync(file, `${generated}\n${notes}`)
}

/**
 * Puts one section (its first line is its `### ` heading) into the generated part of
 * docs/benchmarks.md, in place of the section of the same heading, or else before the first of the
 * `before` headings found there (by default the metadata section), or else at the end of the
 * generated part (before the notes): for a run of that section alone. Everything else stays as it was.
 */
export function writeBenchmarksSection(file: string, section: string[], { before = ['### Metadata calls'] } = {}): void {
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
    const anchors = before.map((anchor) => current.indexOf(`\n${anchor}`)).filter((at) => at >= 0 && at < generatedEnd)
    start = anchors.length > 0 ? anchors[0]! + 1 : generatedEnd
    end = start
  }
  fs.writeFileSync(file, current.slice(0, start) + text + current.slice(end))
}

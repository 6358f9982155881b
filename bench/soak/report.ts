import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { ROOT } from '../../test/helpers/server-process.js'
import type { Account } from './accounts.js'
import type { Verdict } from './checks.js'
import { mib } from '../bench-plan.js'
import { SOAK_HEADING, writeBenchmarksSection, type ChartLink } from '../report.js'
import type { Sample } from './resources.js'
import { SETTINGS, soakCommand } from './settings.js'
import { SOAK_TARGETS, type SoakTargetCheck } from './targets.js'
import { OPERATIONS, type Tally } from './tally.js'

/* The report: the "Soak test" section of docs/reliability.md, printed and written there. */

export const REPORT_FILE = path.join(ROOT, 'docs', 'reliability.md')

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

function operationTable(tally: Tally, elapsedSeconds: number): string[] {
  const rows = ['| Operation | Count | Per second | p50 ms | p99 ms |', '|---|---:|---:|---:|---:|']
  let total = 0
  for (const operation of OPERATIONS) {
    const counted = tally.operations.get(operation)
    if (!counted) continue
    total += counted.count
    const sorted = [...counted.latenciesMs].sort((a, b) => a - b)
    rows.push(
      `| ${operation} | ${counted.count} | ${(counted.count / elapsedSeconds).toFixed(1)} | ${percentile(sorted, 50).toFixed(1)} | ${percentile(sorted, 99).toFixed(1)} |`,
    )
  }
  rows.push(`| all | ${total} | ${(total / elapsedSeconds).toFixed(1)} | | |`)
  return rows
}

/**
 * The memory targets of issue 17 with their verdicts. They are not part of the pass rule (which is
 * about correctness and leaks of descriptors and buffers): a soak that misses them still passes.
 */
function targetTable(targets: SoakTargetCheck[]): string[] {
  return [
    `Targets (issue 17; the trend is the least-squares slope of the 1-second RSS samples over the second half of the load, ` +
      `and "no upward trend" is at most ${SOAK_TARGETS.slopeMiBPerMinute} MiB/min: see bench/soak/targets.ts). They are stated ` +
      `for ${SOAK_TARGETS.loadSeconds / 60} minutes of load (\`SOAK_SECONDS=${SOAK_TARGETS.loadSeconds}\`) and are not part of the pass rule:`,
    '',
    '| Target | Measured | Result |',
    '|---|---|---|',
    ...targets.map((check) => `| ${check.target} | ${check.measured} | ${check.result} |`),
  ]
}

export function renderSection(run: {
  passed: boolean
  elapsedSeconds: number
  tally: Tally
  accounts: Account[]
  startSample: Sample
  peak: Sample
  endSample: Sample
  verdicts: Verdict[]
  targets: SoakTargetCheck[]
}): string {
  const { passed, elapsedSeconds, tally, accounts, startSample, peak, endSample, verdicts, targets } = run
  const statusLine = [...tally.statusCounts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ')
  const remaining = accounts.reduce((sum, account) => sum + account.files.size, 0)
  const uploaded = accounts.reduce((sum, account) => sum + account.uploads, 0)
  return [
    '## Soak test',
    '',
    '`bench/soak/run.ts` starts the real server as `npm start` runs it (`node [flags] dist/server.js`, SQLite and a blob folder in a',
    'temporary data folder, loopback only), creates accounts with the CLI, lifts the request rate limits',
    'through `FILESHARE_PLANS`, and runs many concurrent clients against it for a fixed time. Each client',
    'repeatedly picks an account and does one of: upload (random size, mostly small, some up to the',
    'maximum; random Unicode names), ranged download (random `a-b`, `a-` or suffix range; the bytes are',
    'compared with the known content), full download (checksum), list (random page and limit), details,',
    'delete (then the link must answer 404) or stats. Afterwards it checks that no response was a 5xx,',
    "that every remaining file downloads in full with its SHA-256, that each file's `download_count`",
    'equals the downloads the clients made from byte 0, that `GET /stats` equals a recount from the',
    "listing, and that the server's RSS (`VmRSS` in `/proc/PID/status`) and open file descriptors",
    '(`/proc/PID/fd`) come back near their starting level after a quiet period. It is not part of',
    '`npm test`: it takes minutes.',
    '',
    '```sh',
    'npm run soak                       # 3 minutes of load',
    'SOAK_SECONDS=600 SOAK_CLIENTS=64 npm run soak',
    '```',
    '',
    'Settings: `SOAK_SECONDS` (180), `SOAK_CLIENTS` (32), `SOAK_ACCOUNTS` (4), `SOAK_SETTLE_SECONDS` (30),',
    '`SOAK_MAX_FILE_BYTES` (4194304), `SOAK_MAX_FILES_PER_ACCOUNT` (150; above it an account only',
    'shrinks, so the disk use stays bounded). The script rewrites this section with its latest result',
    '(`SOAK_WRITE_REPORT=0` leaves it alone) and exits 1 if a check fails.',
    '',
    `### Last run: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${passed ? 'passed' : '**FAILED**'}`,
    '',
    `Command: \`${soakCommand()}\`` + ` on ${os.cpus().length} CPU cores, Node.js ${process.version}, embedded stack (SQLite + folder).`,
    `${SETTINGS.clients} clients, ${SETTINGS.accounts} accounts, ${elapsedSeconds.toFixed(0)} s of load, ${SETTINGS.settleSeconds} s settle.`,
    `${uploaded} files uploaded, ${remaining} left at the end. Statuses: ${statusLine}` +
      ` (a 404 is fine only for a file another client was deleting at that moment; any other is a problem above).`,
    '',
    ...operationTable(tally, elapsedSeconds),
    '',
    '| Server | Start | Peak | After settling |',
    '|---|---:|---:|---:|',
    `| RSS (peak: VmHWM) | ${mib(startSample.rssBytes)} | ${mib(peak.rssBytes)} | ${mib(endSample.rssBytes)} |`,
    `| Open file descriptors | ${startSample.fds} | ${peak.fds} | ${endSample.fds} |`,
    '',
    ...targetTable(targets),
    '',
    'Checks:',
    '',
    ...verdicts.map(([text, ok]) => `- ${ok ? 'pass' : '**FAIL**'}: ${text}`),
    ...(tally.problems.length > 0 ? ['', 'Problems:', '', ...tally.problems.map((text) => `- ${text}`)] : []),
    '',
  ].join('\n')
}

/** Replaces the "Soak test" section of REPORT_FILE (up to the next `## ` heading), or appends it. */
export async function writeReportSection(section: string) {
  let existing = ''
  try {
    existing = await fs.readFile(REPORT_FILE, 'utf8')
  } catch {
    existing = '# Reliability\n'
  }
  const start = existing.search(/^## Soak test[ \t]*$/m)
  if (start === -1) {
    await fs.writeFile(REPORT_FILE, `${existing.trimEnd()}\n\n${section}`)
    return
  }
  const rest = existing.slice(start + 1)
  const next = rest.search(/^## /m)
  const after = next === -1 ? '' : `\n${rest.slice(next)}`
  await fs.writeFile(REPORT_FILE, `${existing.slice(0, start)}${section}${after}`)
}

export interface BenchmarksSoakRun {
  passed: boolean
  startedAt: Date
  loadAverageAtStart: number[]
  /** How the server was started, e.g. `node --max-semi-space-size=8 dist/server.js`. */
  serverCommand: string
  elapsedSeconds: number
  requests: number
  startSample: Sample
  peak: Sample
  endSample: Sample
  targets: SoakTargetCheck[]
  charts: ChartLink[]
}

/** The soak's section of docs/benchmarks.md: command, machine and load, the memory targets' verdicts, and the charts. */
export function renderBenchmarksSoakSection(run: BenchmarksSoakRun): string[] {
  const { passed, startedAt, loadAverageAtStart, serverCommand, elapsedSeconds, requests, startSample, peak, endSample, targets, charts } =
    run
  const cpus = os.cpus()
  return [
    SOAK_HEADING,
    '',
    `From the last \`npm run soak\` that wrote the docs (${passed ? 'passed' : '**failed**'}). The server's VmRSS ` +
      '(`/proc/PID/status`) and open file descriptors (`/proc/PID/fd`), sampled every second, the peak from VmHWM; the whole ' +
      'report, with the operations and the checks, is the "Soak test" section of [reliability.md](reliability.md#soak-test).',
    '',
    `- Command: \`${soakCommand()}\`; started ${startedAt.toISOString()}; load average at start ` +
      `${loadAverageAtStart.map((value) => value.toFixed(2)).join(' ')}.`,
    `- Machine: ${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB memory, ` +
      `Linux ${os.release()}; Node.js ${process.version}.`,
    `- Server: \`${serverCommand}\` (as \`npm start\` runs it${process.env.BENCH_SERVER_NODE_FLAGS?.trim() ? ', plus BENCH_SERVER_NODE_FLAGS' : ''}), embedded stack (SQLite + folder), log level \`warn\`.`,
    `- Load: ${SETTINGS.clients} clients on ${SETTINGS.accounts} accounts, mixed uploads (up to ${mib(SETTINGS.maxFileBytes)}), ` +
      `ranged and full downloads, lists, details, deletes and stats; ${requests.toLocaleString('en-US')} requests in ` +
      `${elapsedSeconds.toFixed(0)} s (${(requests / elapsedSeconds).toFixed(0)}/s), then the final checks and ${SETTINGS.settleSeconds} s of quiet.`,
    '',
    `RSS: ${mib(startSample.rssBytes)} at the start, ${mib(peak.rssBytes)} at the peak, ${mib(endSample.rssBytes)} after settling. ` +
      `Open file descriptors: ${startSample.fds}, ${peak.fds}, ${endSample.fds}.`,
    '',
    ...targetTable(targets),
    '',
    ...charts.flatMap((chart) => [`![${chart.alt}](${chart.file})`, '']),
  ]
}

/**
 * Writes the soak's section of docs/benchmarks.md, in place of the last one (or at the end of the
 * generated part). `npm run bench` keeps it when it rewrites that file.
 */
export function writeBenchmarksSoakSection(run: BenchmarksSoakRun): void {
  writeBenchmarksSection(path.join(ROOT, 'docs', 'benchmarks.md'), renderBenchmarksSoakSection(run), { before: [] })
}

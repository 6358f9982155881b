import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { ROOT } from '../../test/helpers/server-process.js'
import type { Account } from './accounts.js'
import type { Verdict } from './checks.js'
import { mib } from '../bench-plan.js'
import { SOAK_HEADING, writeBenchmarksSection, type ChartLink } from '../report.js'
import type { Sample } from './resources.js'
import { SETTINGS } from './settings.js'
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

export function renderSection(run: {
  passed: boolean
  elapsedSeconds: number
  tally: Tally
  accounts: Account[]
  startSample: Sample
  peak: Sample
  endSample: Sample
  verdicts: Verdict[]
}): string {
  const { passed, elapsedSeconds, tally, accounts, startSample, peak, endSample, verdicts } = run
  const statusLine = [...tally.statusCounts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ')
  const remaining = accounts.reduce((sum, account) => sum + account.files.size, 0)
  const uploaded = accounts.reduce((sum, account) => sum + account.uploads, 0)
  return [
    '## Soak test',
    '',
    '`bench/soak/run.ts` starts the real server (`node dist/server.js`, SQLite and a blob folder in a',
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
    `Command: \`${SETTINGS.seconds === 180 && SETTINGS.clients === 32 ? 'npm run soak' : `SOAK_SECONDS=${SETTINGS.seconds} SOAK_CLIENTS=${SETTINGS.clients} npm run soak`}\`` +
      ` on ${os.cpus().length} CPU cores, Node.js ${process.version}, embedded stack (SQLite + folder).`,
    `${SETTINGS.clients} clients, ${SETTINGS.accounts} accounts, ${elapsedSeconds.toFixed(0)} s of load, ${SETTINGS.settleSeconds} s settle.`,
    `${uploaded} files uploaded, ${remaining} left at the end. Statuses: ${statusLine}` +
      ` (a 404 is fine only for a file another client was deleting at that moment; any other is a problem above).`,
    '',
    ...operationTable(tally, elapsedSeconds),
    '',
    '| Server | Start | Peak | After settling |',
    '|---|---:|---:|---:|',
    `| RSS | ${mib(startSample.rssBytes)} | ${mib(peak.rssBytes)} | ${mib(endSample.rssBytes)} |`,
    `| Open file descriptors | ${startSample.fds} | ${peak.fds} | ${endSample.fds} |`,
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

/**
 * The soak's section of docs/benchmarks.md: the RSS and fd charts of this run with its figures.
 * `npm run bench` keeps it when it rewrites that file.
 */
export function writeBenchmarksSoakSection(run: {
  passed: boolean
  elapsedSeconds: number
  startSample: Sample
  peak: Sample
  endSample: Sample
  charts: ChartLink[]
}): void {
  const { passed, elapsedSeconds, startSample, peak, endSample, charts } = run
  writeBenchmarksSection(
    path.join(ROOT, 'docs', 'benchmarks.md'),
    [
      SOAK_HEADING,
      '',
      `From the last \`npm run soak\` (${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${passed ? 'passed' : '**failed**'}; ` +
        `${SETTINGS.clients} clients, ${SETTINGS.accounts} accounts, ${elapsedSeconds.toFixed(0)} s of load, then the final checks and ` +
        `${SETTINGS.settleSeconds} s of quiet; ${os.cpus().length} cores, Node.js ${process.version}). The server's VmRSS ` +
        '(`/proc/PID/status`) and open file descriptors (`/proc/PID/fd`), sampled every second; the whole report, with the ' +
        'operations and the checks, is the "Soak test" section of [reliability.md](reliability.md#soak-test).',
      '',
      `RSS: ${mib(startSample.rssBytes)} at the start, ${mib(peak.rssBytes)} at the peak, ${mib(endSample.rssBytes)} after settling. ` +
        `Open file descriptors: ${startSample.fds}, ${peak.fds}, ${endSample.fds}.`,
      '',
      ...charts.flatMap((chart) => [`![${chart.alt}](${chart.file})`, '']),
    ],
    { before: [] },
  )
}

import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { MiB, mib } from '../bench-plan.js'
import { COLORS, lineChart, type LineSeries } from '../svg-chart.js'
import { writeSvg } from '../svg-check.js'
import type { Account } from './accounts.js'
import { RECOVERY_LIMIT_MS, type Fault } from './chaos.js'
import { timeSeries, type PhaseReport } from './chaos-checks.js'
import type { FinalChecks } from './checks.js'
import type { Exchange } from './exchanges.js'
import { REPORT_FILE } from './report.js'
import { CHAOS_SETTINGS, chaosCommand, SETTINGS } from './settings.js'
import type { RssTrend } from './targets.js'
import { OPERATIONS, type Tally } from './tally.js'

/* The chaos soak's report: a section of docs/reliability.md, and one chart of three panels. */

export const CHAOS_HEADING = '## Chaos soak on the scale-out stack'
export const CHAOS_CHART = 'soak-chaos.svg'

export interface ChaosRun {
  chaos: boolean
  startedAt: Date
  loadAverageAtStart: number[]
  serverCommand: string
  elapsedSeconds: number
  loadStarted: number
  loadEnded: number
  settleStarted: number
  tally: Tally
  exchanges: Exchange[]
  accounts: Account[]
  probe: Account
  faults: Fault[]
  phases: PhaseReport[]
  checks: FinalChecks
  verify: { ok: boolean; filesChecked: number; missing: number; damaged: number; orphans: number }
  connectionsAtStart: { postgres: number; redis: number }
  connectionsAtEnd: { postgres: number; redis: number }
  samples: Array<{ at: number; instance: string; pid: number; rssBytes: number }>
  trends: Array<{ instance: string; trend: RssTrend | undefined }>
  errorLines: number
  errorKinds: Array<{ kind: string; count: number }>
  exitCodes: Array<number | null>
  backendTimeoutMs: number
  hangLimitMs: number
  /** The 99th percentile of the exchanges outside the faults, part of the hang limit. */
  steadyP99Ms: number
  slopeLimit: number
}

const seconds = (run: ChaosRun, at: number) => ((at - run.loadStarted) / 1000).toFixed(0)
const statusList = (statuses: Map<string, number>) =>
  [...statuses.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ')
const signedSlope = (slope: number) => `${slope >= 0 ? '+' : '−'}${Math.abs(slope).toFixed(2)} MiB/min`

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

/** The hang check is for the cuts (a backend that does not answer); the kill's phase only reports its longest exchange. */
const cutOnly = (fault: Fault, check: [string, boolean]): Array<[string, boolean]> => (fault.kind === 'kill -9' ? [] : [check])

/** The checks of the pass rule, each with its figures. */
function verdicts(run: ChaosRun): Array<[string, boolean]> {
  const { phases, checks, verify, connectionsAtStart: start, connectionsAtEnd: end } = run
  const all500 = run.exchanges.filter((exchange) => exchange.status === 500).length
  const results: Array<[string, boolean]> = [[`no 500 answer anywhere (saw ${all500})`, all500 === 0]]
  for (const phase of phases) {
    if (!phase.fault) continue
    const fault = phase.fault
    results.push(
      [
        `${fault.kind}: only 503 with Retry-After or documented refusals during the fault and the ${RECOVERY_LIMIT_MS / 1000} s after it ` +
          `(${phase.exchanges} exchanges: ${statusList(phase.statuses)}; ${phase.violations.length} not allowed)`,
        phase.violations.filter((violation) => !violation.startsWith('longer than')).length === 0,
      ],
      ...cutOnly(fault, [
        `${fault.kind}: no exchange longer than FILESHARE_BACKEND_TIMEOUT_MS + max(5 s, p99 outside the faults ${run.steadyP99Ms} ms) = ${run.hangLimitMs} ms ` +
          `(longest ${phase.longestMs} ms; ${phase.hangs} longer)`,
        phase.hangs === 0,
      ]),
      [
        `${fault.kind}: both instances whole again (ready, a keyed request, an upload and its download on each) within ${RECOVERY_LIMIT_MS / 1000} s of the restore, without a restart ` +
          `(${fault.recoveryMs === undefined ? 'never' : `${(fault.recoveryMs / 1000).toFixed(1)} s`})`,
        fault.recoveryMs !== undefined && fault.recoveryMs <= RECOVERY_LIMIT_MS,
      ],
    )
  }
  const steady = phases.find((phase) => !phase.fault)!
  const steadyErrors = [...steady.statuses.entries()]
    .filter(([status]) => status !== 'none' && Number(status) >= 500)
    .reduce((sum, [, n]) => sum + n, 0)
  results.push(
    [
      `outside the faults: no 5xx and no failed exchange (${steady.exchanges} exchanges; ${steadyErrors} 5xx, ${steady.noAnswer} without an answer, ${steady.cutBodies} bodies cut off)`,
      steady.violations.length === 0,
    ],
    [`no other problem (wrong bytes, status, field, count; saw ${run.tally.problems.length})`, run.tally.problems.length === 0],
    [
      `every acknowledged upload is listed and downloads in full with its SHA-256 at the end (${checks.filesVerified} files, ${mib(checks.bytesVerified)}; ` +
        `${checks.unacknowledged} of them from uploads whose answer was lost)`,
      checks.fileFailures === 0,
    ],
    ['stats (total_files, total_size, total_downloads, uploads_today) equal a recount from the listing', checks.statsMatch],
    [
      `no row without its bytes: \`fileshare verify\` re-hashed ${verify.filesChecked} files: ${verify.missing} missing, ${verify.damaged} damaged (${verify.orphans} orphan blobs, left for gc)`,
      verify.missing === 0 && verify.damaged === 0,
    ],
    [
      `PostgreSQL connections back to the start level after the load (start ${start.postgres}, end ${end.postgres}; pg_stat_activity)`,
      end.postgres <= start.postgres,
    ],
    [
      `Redis connections back to the start level after the load (start ${start.redis}, end ${end.redis}; CLIENT LIST)`,
      end.redis <= start.redis,
    ],
  )
  for (const { instance, trend } of run.trends) {
    const slope = trend?.slopeMiBPerMinute
    results.push([
      `instance ${instance}: no upward RSS trend in the second half of the load (least-squares slope ${slope === undefined ? 'not measured' : signedSlope(slope)} ≤ ${signedSlope(run.slopeLimit)}` +
        `${trend ? `, ${trend.samples} samples` : ''})`,
      slope !== undefined && slope <= run.slopeLimit,
    ])
  }
  results.push([
    `SIGTERM stops both instances with exit code 0 (got ${run.exitCodes.join(', ')})`,
    run.exitCodes.every((code) => code === 0),
  ])
  return results
}

function operationTable(tally: Tally, elapsedSeconds: number): string[] {
  const rows = ['| Operation | Count | Per second | p50 ms | p99 ms |', '|---|---:|---:|---:|---:|']
  for (const operation of OPERATIONS) {
    const counted = tally.operations.get(operation)
    if (!counted) continue
    const sorted = [...counted.latenciesMs].sort((a, b) => a - b)
    rows.push(
      `| ${operation} | ${counted.count} | ${(counted.count / elapsedSeconds).toFixed(1)} | ${percentile(sorted, 50).toFixed(1)} | ${percentile(sorted, 99).toFixed(1)} |`,
    )
  }
  return rows
}

function phaseTable(run: ChaosRun): string[] {
  const rows = [
    '| Phase | From–to (s of load) | Exchanges | Statuses | 503 (without Retry-After) | No answer / body cut | Longest | Whole again after |',
    '|---|---|---:|---|---:|---:|---:|---:|',
  ]
  for (const phase of run.phases) {
    const fault = phase.fault
    rows.push(
      `| ${fault ? `${fault.kind}: ${fault.target}` : 'outside the faults'} | ${fault ? `${seconds(run, fault.startedAt)}–${seconds(run, fault.endedAt)}` : ''} | ` +
        `${phase.exchanges} | ${statusList(phase.statuses)} | ${phase.unavailable} (${phase.unavailableWithoutRetryAfter}) | ${phase.noAnswer} / ${phase.cutBodies} | ` +
        `${phase.longestMs} ms | ${fault ? (fault.recoveryMs === undefined ? 'never' : `${(fault.recoveryMs / 1000).toFixed(1)} s`) : ''} |`,
    )
  }
  return rows
}

export function renderChaosSection(run: ChaosRun): { text: string; passed: boolean } {
  const results = verdicts(run)
  const passed = results.every(([, ok]) => ok)
  const uploaded = [...run.accounts, run.probe].reduce((sum, account) => sum + account.uploads, 0)
  const remaining = [...run.accounts, run.probe].reduce((sum, account) => sum + account.files.size, 0)
  const cpus = os.cpus()
  const rssOf = (instance: string) => run.samples.filter((sample) => sample.instance === instance).map((sample) => sample.rssBytes)
  const instances = [...new Set(run.samples.map((sample) => sample.instance))]
  const violations = run.phases.flatMap((phase) => phase.violations.map((violation) => `${phase.phase}: ${violation}`))
  const text = [
    CHAOS_HEADING,
    '',
    '`npm run soak -- --stack scale-out --chaos` (`bench/soak/scale-out-run.ts`; not part of `npm test` or CI) runs the scale-out',
    'stack of [scale-out.md](scale-out.md) on one machine: PostgreSQL, Redis and s3rver of its own (a throw-away cluster from',
    '`initdb`, `redis-server` and s3rver each on a free port, so that freezing them touches no shared service), two instances',
    "started as `npm start` starts them, and Debian's nginx in front with the sample configuration the deployment ships",
    "(`test/helpers/nginx.ts`). The load is the embedded soak's (uploads, ranged and full downloads with their bytes checked,",
    'lists, details, deletes, stats) plus tus resumable uploads of 1 to 16 MiB in several PATCHes, a quarter of the chunks cut off',
    'by the client part-way and resumed from `HEAD`. During the first half of the load, one after another, instance A is killed',
    'with `kill -9` and started again 5 s later, then PostgreSQL, Redis and S3 are each frozen for `SOAK_CUT_SECONDS` (SIGSTOP',
    'of the process group: connections hang instead of being refused). After each restore a probe asks both instances directly',
    '(`/readyz`, `GET /stats` with a key, an upload and its download) until both are whole.',
    '',
    "Every HTTP exchange is recorded and judged by the phase it falls in (`bench/soak/chaos-checks.ts`): a fault's phase runs from",
    `the cut to ${RECOVERY_LIMIT_MS / 1000} s after the restore. There, only 503 with \`Retry-After\` or documented refusals (409 and 423 of a`,
    "resumed tus upload), a body cut off after its status only when S3 went away under a download, and, for the kill, nginx's 502",
    `and resets for the requests the dead instance held; nothing longer than \`FILESHARE_BACKEND_TIMEOUT_MS\` (${run.backendTimeoutMs} ms) plus`,
    'a margin: 5 s, or the 99th percentile of the exchanges outside the faults if that is longer (the same request takes that',
    'long anyway on a loaded machine).',
    'Outside the faults: no 5xx and no failed exchange. At the end every file the clients know (and any of an upload whose answer',
    'was lost) downloads through nginx with its SHA-256, stats equal a recount, `fileshare verify` finds no row without its bytes,',
    'the connections to PostgreSQL (`pg_stat_activity`) and Redis (`CLIENT LIST`) are back at their start level after a quiet',
    "period, and no instance's RSS trends upward over the second half of the load (the faults all fall in the first half).",
    '',
    '```sh',
    'npm run soak -- --stack scale-out --chaos                       # 30 minutes, 60 s cuts',
    'SOAK_SECONDS=300 SOAK_CUT_SECONDS=15 npm run soak -- --stack scale-out --chaos',
    '```',
    '',
    `### Last run: ${run.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${passed ? 'passed' : '**FAILED**'}`,
    '',
    `- Command: \`${chaosCommand()}\`; load average at start ${run.loadAverageAtStart.map((value) => value.toFixed(2)).join(' ')}.`,
    `- Machine: ${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB; Linux ${os.release()}; Node.js ${process.version}.`,
    `- Servers: \`${run.serverCommand}\` twice, \`FILESHARE_BACKEND_TIMEOUT_MS=${run.backendTimeoutMs}\`, log level \`warn\`.`,
    `- Load: ${CHAOS_SETTINGS.clients} clients on ${SETTINGS.accounts} accounts for ${run.elapsedSeconds.toFixed(0)} s, files up to ${mib(SETTINGS.maxFileBytes)} ` +
      `(resumable ones up to 16 MiB); ${run.exchanges.length.toLocaleString('en-US')} HTTP exchanges; ${uploaded} uploads took a daily slot, ${remaining} files were left at the end.`,
    '',
    ...operationTable(run.tally, run.elapsedSeconds),
    '',
    ...phaseTable(run),
    '',
    `RSS of the instances (start, peak, end): ${instances
      .map((instance) => {
        const values = rssOf(instance)
        return `${instance} ${mib(values[0] ?? 0)}, ${mib(values.reduce((peak, value) => Math.max(peak, value), 0))}, ${mib(values.at(-1) ?? 0)}`
      })
      .join('; ')} (instance A was the one killed: its values span both of its processes).`,
    '',
    `Error lines in the instances' logs (level error or fatal): ${run.errorLines}` +
      (run.errorKinds.length > 0 ? `, by kind: ${run.errorKinds.map(({ kind, count }) => `${count} × \`${kind}\``).join('; ')}.` : '.'),
    '',
    `![Requests, errors by status and RSS over the chaos soak, the faults marked](bench/${CHAOS_CHART})`,
    '',
    'Checks:',
    '',
    ...results.map(([text, ok]) => `- ${ok ? 'pass' : '**FAIL**'}: ${text}`),
    ...(violations.length > 0 ? ['', 'Exchanges not allowed:', '', ...violations.slice(0, 40).map((text) => `- ${text}`)] : []),
    ...(run.tally.problems.length > 0 ? ['', 'Problems:', '', ...run.tally.problems.map((text) => `- ${text}`)] : []),
    '',
  ].join('\n')
  return { text, passed }
}

/** Replaces the chaos section of docs/reliability.md (up to the next `## ` heading), or appends it. */
export async function writeChaosSection(section: string): Promise<void> {
  const existing = await fs.readFile(REPORT_FILE, 'utf8')
  const start = existing.indexOf(`${CHAOS_HEADING}\n`)
  if (start === -1) {
    await fs.writeFile(REPORT_FILE, `${existing.trimEnd()}\n\n${section}`)
    return
  }
  const rest = existing.slice(start + CHAOS_HEADING.length)
  const next = rest.search(/^## /m)
  const after = next === -1 ? '' : `\n${rest.slice(next)}`
  await fs.writeFile(REPORT_FILE, `${existing.slice(0, start)}${section}${after}`)
}

const ERROR_COLORS: Record<string, string> = {
  '503': COLORS.orange,
  '502': COLORS.purple,
  '500': COLORS.vermilion,
  'no answer': COLORS.darkGrey,
  'body cut off': COLORS.grey,
  '409': COLORS.sky,
  '423': COLORS.green,
}

/** One SVG of three panels over the same time axis: requests per second, errors by status per second, RSS of each instance. */
export function writeChaosChart(run: ChaosRun, dir: string): string {
  const binSeconds = 5
  const series = timeSeries(run.exchanges, run.loadStarted, binSeconds)
  const markers = run.faults.flatMap((fault) => [
    {
      x: (fault.startedAt - run.loadStarted) / 1000,
      label: fault.kind === 'kill -9' ? 'kill -9 A' : `${fault.kind === 'PostgreSQL' ? 'PG' : fault.kind} off`,
    },
    { x: (fault.endedAt - run.loadStarted) / 1000, label: fault.kind === 'kill -9' ? 'A back' : 'on' },
  ])
  const x = (index: number) => series.seconds[index]!
  const subtitle = `${CHAOS_SETTINGS.clients} clients through nginx to two instances; ${binSeconds}-second bins`
  const panels = [
    lineChart({
      title: 'Chaos soak: requests completed per second',
      subtitle,
      xLabel: 'seconds since the load started',
      yLabel: 'requests/s',
      series: [{ label: 'all HTTP exchanges', color: COLORS.blue, points: series.requests.map((value, index) => [x(index), value]) }],
      markers,
    }),
    lineChart({
      title: 'Errors and refusals per second, by status',
      subtitle: '503: a dependency away (with Retry-After); 502: nginx, for requests the killed instance held; 409/423: tus resumes',
      xLabel: 'seconds since the load started',
      yLabel: 'answers/s',
      series: [...series.errors.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([kind, values]): LineSeries => ({
          label: kind,
          color: ERROR_COLORS[kind] ?? COLORS.vermilion,
          points: values.map((value, index) => [x(index), value]),
        })),
      markers,
    }),
    lineChart({
      title: 'Resident memory of the instances (VmRSS)',
      subtitle: 'sampled every second from /proc; instance A is killed and started again',
      xLabel: 'seconds since the load started',
      yLabel: 'RSS (MiB)',
      series: [...new Set(run.samples.map((sample) => sample.instance))].map((instance, index) => ({
        label: `instance ${instance}`,
        color: index === 0 ? COLORS.blue : COLORS.orange,
        points: run.samples
          .filter((sample) => sample.instance === instance && sample.at >= run.loadStarted)
          .map((sample): [number, number] => [(sample.at - run.loadStarted) / 1000, sample.rssBytes / MiB]),
      })),
      markers,
    }),
  ]
  // Three charts stacked in one document: each keeps its own coordinates inside a nested <svg>.
  let top = 0
  const nested: string[] = []
  let width = 0
  panels.forEach((panel, index) => {
    const height = Number(/height="([0-9.]+)"/.exec(panel)![1])
    width = Math.max(width, Number(/width="([0-9.]+)"/.exec(panel)![1]))
    nested.push(
      panel
        .trim()
        .replace('<svg xmlns="http://www.w3.org/2000/svg"', `<svg y="${top}"`)
        .replace(/ aria-labelledby="chart-title"/, '')
        .replace('<title id="chart-title">', `<title id="chart-title-${index + 1}">`),
    )
    top += height
  })
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${top}" viewBox="0 0 ${width} ${top}" role="img" aria-labelledby="chart-title">`,
    '<title id="chart-title">Chaos soak on the scale-out stack: requests, errors by status and RSS over time, the faults marked</title>',
    ...nested,
    '</svg>',
    '',
  ].join('\n')
  writeSvg(path.join(dir, CHAOS_CHART), svg)
  return CHAOS_CHART
}

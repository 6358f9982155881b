/**
 * Soak test: the real server (`node dist/server.js`) under a steady mixed load for minutes, on
 * loopback. Not part of `npm test`. Run it with `npm run soak` (SOAK_SECONDS=180 by default).
 *
 * Many clients upload, download (random ranges, bytes checked), list, read, delete and read stats
 * across several accounts (load.ts). Afterwards: no 5xx, every remaining file downloads with its
 * checksum, stats equal a recount from the listing, and the server's RSS and open file descriptors
 * come back near their starting level after a quiet period (checks.ts). The summary is printed and
 * written to the "Soak test" section of docs/reliability.md (report.ts). The RSS and fd samples (one a
 * second) are drawn as line charts (bench/charts.ts): into docs/bench/, with a section of
 * docs/benchmarks.md that shows them, when the report is written; else into BENCH_CHART_DIR, or
 * $TMPDIR/fileshare-bench-charts.
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { freePort, ROOT, runCli, startServerProcess, stopServerProcess, type ServerProcess } from '../../test/helpers/server-process.js'
import { mib } from '../bench-plan.js'
import { chartDir, DOCS_CHART_DIR, writeSoakCharts } from '../charts.js'
import { serverArgs } from '../spawn-server.js'
import type { Account } from './accounts.js'
import { countErrorLines, verdicts, verifyAccounts } from './checks.js'
import { makeClient } from './load.js'
import { runScaleOutChaos } from './scale-out-run.js'
import { REPORT_FILE, renderSection, writeBenchmarksSoakSection, writeReportSection } from './report.js'
import { ResourceWatch } from './resources.js'
import { SETTINGS, WRITE_REPORT } from './settings.js'
import { secondHalfTrend, soakTargetChecks } from './targets.js'
import { Tally } from './tally.js'

/** Creates the accounts with the `fileshare` CLI, as an operator would. */
async function createAccounts(env: Record<string, string>): Promise<Account[]> {
  const accounts: Account[] = []
  // `migrate` creates the database; the other commands refuse a missing one.
  const migrated = await runCli(['migrate'], env)
  if (migrated.code !== 0) throw new Error(`fileshare migrate exited with code ${migrated.code}: ${migrated.stderr}`)
  for (let i = 1; i <= SETTINGS.accounts; i++) {
    const email = `soak${i}@example.test`
    const result = await runCli(['account', 'create', '--email', email, '--plan', 'pro', '--json'], env)
    if (result.code !== 0) throw new Error(`fileshare account create exited with code ${result.code}: ${result.stderr}`)
    const created = JSON.parse(result.stdout) as { api_key: string }
    accounts.push({ email, apiKey: created.api_key, files: new Map(), uploads: 0, uncertainUploads: 0 })
  }
  return accounts
}

async function main() {
  const tally = new Tally()
  const startedAt = new Date()
  const loadAverageAtStart = os.loadavg()
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fileshare-soak-'))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const unlimited = { requests_per_minute: 10_000_000, requests_per_day: 1_000_000_000, daily_uploads: 10_000_000 }
  // Over a clean environment (no FILESHARE_* of the calling shell): the embedded stack, SQLite + folder.
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    FILESHARE_DATA_DIR: dataDir,
    FILESHARE_PUBLIC_URL: base,
    FILESHARE_LOG_LEVEL: 'warn',
    // Rate limits are tested elsewhere; here they would only throttle the load.
    FILESHARE_PLANS: JSON.stringify({ pro: unlimited }),
    FILESHARE_DOWNLOADS_PER_MINUTE: '1000000000',
  }

  console.log(
    `soak: ${SETTINGS.clients} clients, ${SETTINGS.accounts} accounts, ${SETTINGS.seconds} s of load, ` +
      `${SETTINGS.settleSeconds} s settle, files up to ${mib(SETTINGS.maxFileBytes)}; data in ${dataDir}`,
  )
  const accounts = await createAccounts(env)

  const logPath = path.join(dataDir, 'server.log')
  let server: ServerProcess | undefined
  let keepData = false
  try {
    // As `npm start` runs it (its node flags included), plus BENCH_SERVER_NODE_FLAGS after those
    // flags, so that an experiment can override one (e.g. BENCH_SERVER_NODE_FLAGS=--max-semi-space-size=16).
    const command = serverArgs()
    console.log(`soak: server command: node ${command.join(' ').replace(ROOT, '')}`)
    server = await startServerProcess({ dataDir, port, env, command, logFile: logPath, readyTimeoutMs: 20_000 })
    const pid = server.child.pid!
    const watch = new ResourceWatch(pid)
    const startSample = await watch.take()
    console.log(`soak: server pid ${pid} ready: RSS ${mib(startSample.rssBytes)}, ${startSample.fds} open fds`)

    const day = new Date().toISOString().slice(0, 10)
    const loadStarted = Date.now()
    const deadline = loadStarted + SETTINGS.seconds * 1000
    watch.start(1000)
    const progress = setInterval(() => {
      const last = watch.samples.at(-1)
      console.log(
        `soak: ${Math.round((Date.now() - loadStarted) / 1000)} s, ${tally.requests()} requests, ${tally.serverErrors} 5xx, ` +
          `${tally.problems.length} problems, RSS ${last ? mib(last.rssBytes) : '?'}, fds ${last?.fds ?? '?'}`,
      )
    }, 15_000)
    const client = makeClient(base, accounts, deadline, tally)
    await Promise.all(Array.from({ length: SETTINGS.clients }, () => client()))
    clearInterval(progress)
    const loadEnded = Date.now()
    const elapsedSeconds = (loadEnded - loadStarted) / 1000
    console.log(`soak: load done after ${elapsedSeconds.toFixed(0)} s; verifying every remaining file`)

    const checks = await verifyAccounts(base, accounts, new Date().toISOString().slice(0, 10) === day, tally)
    console.log(`soak: verified ${checks.filesVerified} files (${mib(checks.bytesVerified)}); settling for ${SETTINGS.settleSeconds} s`)
    const settleStarted = Date.now()
    await new Promise((resolve) => setTimeout(resolve, SETTINGS.settleSeconds * 1000))
    watch.stop()
    const endSample = await watch.take()
    const peak = watch.peak()

    server.child.kill('SIGTERM')
    const { code: exitCode } = await server.exited
    const errorLines = countErrorLines(await fs.readFile(logPath, 'utf8'))

    const results = verdicts({ tally, checks, startSample, endSample, errorLines, exitCode })
    const passed = results.every(([, ok]) => ok)
    keepData = !passed

    const trend = secondHalfTrend(watch.samples, loadStarted, loadEnded)
    const targets = soakTargetChecks({ peakRssBytes: peak.rssBytes, trend, loadSeconds: elapsedSeconds })
    const section = renderSection({ passed, elapsedSeconds, tally, accounts, startSample, peak, endSample, verdicts: results, targets })
    console.log(`\n${section}`)
    const charts = chartDir(WRITE_REPORT)
    const chartLinks = writeSoakCharts({ samples: watch.samples, loadStarted, loadEnded, settleStarted, clients: SETTINGS.clients }, charts)
    console.log(`soak: wrote the RSS and fd charts (${watch.samples.length} samples) into ${charts}`)
    if (WRITE_REPORT) {
      await writeReportSection(section)
      console.log(`soak: wrote the "Soak test" section of ${path.relative(ROOT, REPORT_FILE)}`)
      if (charts === DOCS_CHART_DIR) {
        writeBenchmarksSoakSection({
          passed,
          startedAt,
          loadAverageAtStart,
          serverCommand: `node ${command.join(' ').replace(ROOT, '')}`,
          elapsedSeconds,
          requests: tally.requests(),
          startSample,
          peak,
          endSample,
          targets,
          charts: chartLinks,
        })
        console.log('soak: wrote the soak section of docs/benchmarks.md')
      }
    }
    if (!passed) {
      console.error(`soak: FAILED; the data folder and server log stay in ${dataDir}`)
      process.exitCode = 1
    }
  } finally {
    if (server) await stopServerProcess(server)
    if (!keepData) await fs.rm(dataDir, { recursive: true, force: true })
  }
}

/**
 * `--stack scale-out` runs the soak on the scale-out stack instead (two instances behind nginx on
 * PostgreSQL, Redis and s3rver: scale-out-run.ts), `--chaos` with its faults.
 */
function parseArguments(args: string[]): { stack: 'embedded' | 'scale-out'; chaos: boolean } {
  let stack: 'embedded' | 'scale-out' = 'embedded'
  let chaos = false
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--chaos') chaos = true
    else if (arg === '--stack' || arg.startsWith('--stack=')) {
      const value = arg === '--stack' ? args[++i] : arg.slice('--stack='.length)
      if (value !== 'embedded' && value !== 'scale-out') throw new Error(`--stack is embedded or scale-out, got ${value}`)
      stack = value
    } else throw new Error(`unknown argument ${arg}; usage: npm run soak [-- --stack embedded|scale-out [--chaos]]`)
  }
  if (chaos && stack !== 'scale-out') throw new Error('--chaos needs --stack scale-out')
  return { stack, chaos }
}

const options = parseArguments(process.argv.slice(2))
if (options.stack === 'scale-out') await runScaleOutChaos({ chaos: options.chaos })
else await main()

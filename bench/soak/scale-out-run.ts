import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { ROOT, runCli } from '../../test/helpers/server-process.js'
import { mib } from '../bench-plan.js'
import { chartDir } from '../charts.js'
import { serverArgs } from '../spawn-server.js'
import type { Account } from './accounts.js'
import { chaosPlan, InstanceWatch, runChaos, waitForRecovery, type Fault } from './chaos.js'
import { hangLimitMs, judgeExchanges } from './chaos-checks.js'
import { renderChaosSection, writeChaosChart, writeChaosSection, type ChaosRun } from './chaos-report.js'
import { countErrorLines, errorLineKinds, verifyAccounts } from './checks.js'
import { ExchangeLog } from './exchanges.js'
import { makeClient } from './load.js'
import { BACKEND_TIMEOUT_MS, startScaleOutStack, type ScaleOutStack } from './scale-out-stack.js'
import { CHAOS_SETTINGS, SETTINGS, WRITE_REPORT } from './settings.js'
import { rssTrend, SOAK_TARGETS } from './targets.js'
import { Tally } from './tally.js'

/*
 * The chaos soak on the scale-out stack: `npm run soak -- --stack scale-out --chaos`. Two instances
 * behind nginx on PostgreSQL, Redis and s3rver of its own (scale-out-stack.ts), the embedded soak's
 * mixed load plus resumable uploads, and the faults of chaos.ts during it; then the checks of
 * chaos-checks.ts and checks.ts, the report in docs/reliability.md and its chart in docs/bench/.
 */

const PLANS = {
  pro: { requests_per_minute: 10_000_000, requests_per_day: 1_000_000_000, daily_uploads: 10_000_000 },
}

async function createAccount(stack: ScaleOutStack, email: string): Promise<Account> {
  const result = await runCli(['account', 'create', '--email', email, '--plan', 'pro', '--json'], {
    ...stack.env,
    FILESHARE_DATA_DIR: path.join(stack.workDir, 'cli'),
  })
  if (result.code !== 0) throw new Error(`fileshare account create exited with code ${result.code}: ${result.stderr}`)
  const created = JSON.parse(result.stdout) as { api_key: string }
  return { email, apiKey: created.api_key, files: new Map(), uploads: 0, uncertainUploads: 0 }
}

interface VerifyReport {
  ok: boolean
  files_checked: number
  bytes_checked: number
  damaged: unknown[]
  missing: unknown[]
  orphans: unknown[]
}

export async function runScaleOutChaos(options: { chaos: boolean }): Promise<void> {
  const log = (line: string) => console.log(`soak: ${line}`)
  const startedAt = new Date()
  const loadAverageAtStart = os.loadavg()
  const tally = new Tally(true)
  const exchanges = new ExchangeLog()
  log(
    `scale-out stack${options.chaos ? ' with chaos' : ''}: ${CHAOS_SETTINGS.clients} clients, ${SETTINGS.accounts} accounts, ` +
      `${CHAOS_SETTINGS.seconds} s of load, cuts of ${CHAOS_SETTINGS.cutSeconds} s, files up to ${mib(SETTINGS.maxFileBytes)}`,
  )
  const stack = await startScaleOutStack({ plans: PLANS, logLevel: 'warn' })
  let passed = false
  try {
    log(
      `PostgreSQL :${stack.postgres.port} (pgid ${stack.postgres.pgid}), Redis ${stack.redis.url} (pgid ${stack.redis.pgid}), ` +
        `s3rver ${stack.s3.endpoint} (pgid ${stack.s3.pgid}), nginx ${stack.nginx.url}, instances ` +
        stack.instances.map((instance) => `${instance.name} ${instance.url} (pid ${instance.pid})`).join(', '),
    )
    const accounts: Account[] = []
    for (let i = 1; i <= SETTINGS.accounts; i++) accounts.push(await createAccount(stack, `soak${i}@example.test`))
    const probe = await createAccount(stack, 'probe@example.test')
    const ready = await waitForRecovery(stack, probe, Date.now())
    if (ready.recoveryMs === undefined) throw new Error(`the stack does not serve the probe: ${ready.lastFailure}`)

    // The pools' idle connections close after 10 s: the start level is taken once they have.
    await sleep(15_000)
    const connectionsAtStart = { postgres: await stack.postgres.connections(), redis: await stack.redis.connections() }
    const watch = new InstanceWatch(() => stack.instances)
    watch.take()
    log(`connections at start: PostgreSQL ${connectionsAtStart.postgres}, Redis ${connectionsAtStart.redis}`)

    const day = new Date().toISOString().slice(0, 10)
    const loadStarted = Date.now()
    const deadline = loadStarted + CHAOS_SETTINGS.seconds * 1000
    watch.start(1000)
    const progress = setInterval(() => {
      const rss = stack.instances
        .map((instance) => {
          const last = watch.samples.findLast((sample) => sample.instance === instance.name)
          return `${instance.name} ${last ? mib(last.rssBytes) : '?'}`
        })
        .join(', ')
      log(
        `${Math.round((Date.now() - loadStarted) / 1000)} s, ${exchanges.exchanges.length} exchanges, ${tally.serverErrors} 5xx, ` +
          `${tally.failures} failed, ${tally.problems.length} problems, RSS ${rss}`,
      )
    }, 30_000)
    const client = makeClient(stack.nginx.url, accounts, deadline, tally, {
      fetch: exchanges.fetch,
      record: (exchange) => exchanges.record(exchange),
      resumable: {
        minBytes: 1024 * 1024,
        maxBytes: 16 * 1024 * 1024,
        cutShare: 0.25,
        giveUpAfterMs: Math.max(180_000, CHAOS_SETTINGS.cutSeconds * 3000),
      },
    })
    const plan = chaosPlan(CHAOS_SETTINGS.seconds, CHAOS_SETTINGS.cutSeconds)
    const [faults] = await Promise.all([
      options.chaos ? runChaos(stack, plan, loadStarted, probe, log) : Promise.resolve([] as Fault[]),
      Promise.all(Array.from({ length: CHAOS_SETTINGS.clients }, () => client())),
    ])
    clearInterval(progress)
    const loadEnded = Date.now()
    const elapsedSeconds = (loadEnded - loadStarted) / 1000
    log(`load done after ${elapsedSeconds.toFixed(0)} s; verifying every remaining file through nginx`)

    const checks = await verifyAccounts(stack.nginx.url, [...accounts, probe], new Date().toISOString().slice(0, 10) === day, tally)
    log(`verified ${checks.filesVerified} files (${mib(checks.bytesVerified)}); fileshare verify over the database and the bucket`)
    const verified = await runCli(['verify', '--json', '--grace-seconds', '0'], {
      ...stack.env,
      FILESHARE_DATA_DIR: path.join(stack.workDir, 'cli'),
    })
    const verify = JSON.parse(verified.stdout.trim().split('\n').at(-1) ?? '{}') as VerifyReport
    log(
      `verify: ${verify.files_checked} files, ${verify.missing?.length} missing, ${verify.damaged?.length} damaged, ${verify.orphans?.length} orphans`,
    )

    log(`settling for ${SETTINGS.settleSeconds} s`)
    const settleStarted = Date.now()
    await sleep(SETTINGS.settleSeconds * 1000)
    watch.stop()
    watch.take()
    const connectionsAtEnd = { postgres: await stack.postgres.connections(), redis: await stack.redis.connections() }
    log(`connections after settling: PostgreSQL ${connectionsAtEnd.postgres}, Redis ${connectionsAtEnd.redis}`)

    const exitCodes = await stack.stopInstances()
    let logText = ''
    for (const instance of stack.instances) logText += await fs.readFile(instance.logFile, 'utf8').catch(() => '')
    const errorLines = countErrorLines(logText)
    const errorKinds = errorLineKinds(logText)

    const hang = hangLimitMs(exchanges.exchanges, faults)
    const phases = judgeExchanges(exchanges.exchanges, faults, loadStarted, hang.limitMs)
    const secondHalf = { from: loadStarted + (loadEnded - loadStarted) / 2, to: loadEnded }
    const trends = stack.instances.map((instance) => ({
      instance: instance.name,
      trend: rssTrend(
        watch.samples.filter((sample) => sample.instance === instance.name && sample.pid === instance.pid),
        secondHalf.from,
        secondHalf.to,
      ),
    }))
    const run: ChaosRun = {
      chaos: options.chaos,
      startedAt,
      loadAverageAtStart,
      serverCommand: `node ${serverArgs().join(' ').replace(ROOT, '')}`,
      elapsedSeconds,
      loadStarted,
      loadEnded,
      settleStarted,
      tally,
      exchanges: exchanges.exchanges,
      accounts,
      probe,
      faults,
      phases,
      checks,
      verify: {
        ok: verified.code === 0 || (verify.missing?.length === 0 && verify.damaged?.length === 0),
        filesChecked: verify.files_checked,
        missing: verify.missing?.length ?? -1,
        damaged: verify.damaged?.length ?? -1,
        orphans: verify.orphans?.length ?? -1,
      },
      connectionsAtStart,
      connectionsAtEnd,
      samples: watch.samples,
      trends,
      errorLines,
      errorKinds,
      exitCodes,
      backendTimeoutMs: BACKEND_TIMEOUT_MS,
      hangLimitMs: hang.limitMs,
      steadyP99Ms: hang.steadyP99Ms,
      slopeLimit: SOAK_TARGETS.slopeMiBPerMinute,
    }
    const section = renderChaosSection(run)
    passed = section.passed
    console.log(`\n${section.text}`)
    if (WRITE_REPORT) {
      await writeChaosSection(section.text)
      log('wrote the "Chaos soak on the scale-out stack" section of docs/reliability.md')
    }
    const charts = chartDir(WRITE_REPORT)
    try {
      log(`wrote the chart into ${path.join(charts, writeChaosChart(run, charts))}`)
    } catch (error) {
      console.error(`soak: the chart could not be drawn: ${(error as Error).message}`)
      passed = false
    }
    if (!passed) {
      console.error(`soak: FAILED; the instances' logs stay in ${stack.workDir}`)
      process.exitCode = 1
    }
  } finally {
    const keep = !passed
    if (keep) {
      // Keep the logs: copy them out before the stack's folders go.
      const kept = await fs.mkdtemp(path.join(os.tmpdir(), 'fileshare-soak-logs-'))
      for (const instance of stack.instances)
        await fs.copyFile(instance.logFile, path.join(kept, path.basename(instance.logFile))).catch(() => {})
      await fs.writeFile(path.join(kept, 'nginx-error.log'), await stack.nginx.errorLog())
      console.error(`soak: the instances' and nginx's logs copied to ${kept}`)
    }
    await stack.close()
    await fs.rm(stack.workDir, { recursive: true, force: true })
  }
}

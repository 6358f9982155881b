import fs from 'node:fs'
import path from 'node:path'
import { freePort, ROOT, spawnServer, stopServerProcess, waitForHealth } from '../test/helpers/server-process.js'
import { tsScriptArgs } from './child-process.js'

export interface RunningServer {
  pid: number
  url: string
  /** SIGTERM, then waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>
}

/**
 * Starts a server process whose stdout and stderr go to `logFile`, as an operator's would go to a
 * log file (a pipe back to this process would cost the bench's own CPU), and waits until
 * `url + readyPath` answers.
 */
async function startBenchProcess(options: {
  args: string[]
  env: Record<string, string>
  url: string
  readyPath: string
  logFile: string
}): Promise<RunningServer> {
  const server = spawnServer(options.env, options.args, { logFile: options.logFile })
  await waitForHealth(server, options.url + options.readyPath, { timeoutMs: 30_000 })
  return {
    pid: server.child.pid!,
    url: options.url,
    async stop() {
      return (await stopServerProcess(server, { signal: 'SIGTERM', timeoutMs: 60_000 })).code
    },
  }
}

/**
 * The bench's accounts are on `enterprise`, raised so that no limit binds: the load runs make
 * hundreds of thousands of requests, far past the built-in 1000 per minute.
 */
export const BENCH_PLANS = {
  enterprise: {
    requests_per_minute: 1_000_000_000,
    requests_per_day: 1_000_000_000_000,
    daily_uploads: 1_000_000,
    max_file_size: 53687091200,
  },
}

/** Extra node flags for the server under test, e.g. BENCH_SERVER_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof". */
export function serverNodeFlags(): string[] {
  return (process.env.BENCH_SERVER_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean)
}

/** Settings shared by the server and the CLI calls that prepare its data. */
export function fileshareEnv(dataDir: string, port: number): Record<string, string> {
  return {
    PORT: String(port),
    HOST: '127.0.0.1',
    FILESHARE_DATA_DIR: dataDir,
    FILESHARE_PUBLIC_URL: `http://127.0.0.1:${port}`,
    FILESHARE_PLANS: JSON.stringify(BENCH_PLANS),
    // The level an operator runs with, unless the bench is told otherwise.
    FILESHARE_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  }
}

/**
 * The node arguments of package.json's `start` script (`node [flags] dist/server.js`), so that the
 * bench runs the server exactly as `npm start` does, flags included.
 */
export function startScriptArgs(): string[] {
  const packageJson = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
  const [command, ...args] = packageJson.scripts.start.trim().split(/\s+/)
  if (command !== 'node' || !args.includes('dist/server.js')) {
    throw new Error(`the bench expects a "start" script of the form "node [flags] dist/server.js", got "${packageJson.scripts.start}"`)
  }
  // BENCH_SERVER_JS points at another build's server.js, to compare two builds on one machine.
  return args.map((arg) => (arg === 'dist/server.js' ? (process.env.BENCH_SERVER_JS ?? path.join(ROOT, arg)) : arg))
}

/**
 * The node arguments of the server under test: the `start` script's, with BENCH_SERVER_NODE_FLAGS and
 * `extraFlags` after its flags (so that they override one of them, e.g. --max-semi-space-size=4) and
 * before the script.
 */
export function serverArgs(extraFlags: string[] = []): string[] {
  const args = startScriptArgs()
  return [...args.slice(0, -1), ...serverNodeFlags(), ...extraFlags, ...args.slice(-1)]
}

/** The real service, embedded default (SQLite + blob folder), started as `npm start` starts it (plus `extraFlags`). */
export async function startFileshare(dataDir: string, port: number, logFile: string, extraFlags: string[] = []): Promise<RunningServer> {
  return startBenchProcess({
    args: serverArgs(extraFlags),
    env: fileshareEnv(dataDir, port),
    url: `http://127.0.0.1:${port}`,
    readyPath: '/healthz',
    logFile,
  })
}

/** The bare Node.js baseline (bench/baseline-server.ts), answering `detailJson` on GET /json. */
export async function startBaseline(dir: string, detailJson: string, logFile: string): Promise<RunningServer> {
  const port = await freePort()
  return startBenchProcess({
    args: tsScriptArgs('baseline-server.ts'),
    env: { BASELINE_PORT: String(port), BASELINE_DIR: dir, BASELINE_JSON: detailJson },
    url: `http://127.0.0.1:${port}`,
    readyPath: '/json',
    logFile,
  })
}

/** The peers a user would pick instead (bench/peer-server.ts: Express 5 + Multer 2), storing into `dir`. */
export async function startPeer(dir: string, logFile: string): Promise<RunningServer> {
  const port = await freePort()
  return startBenchProcess({
    args: tsScriptArgs('peer-server.ts'),
    env: { PEER_PORT: String(port), PEER_DIR: dir, NODE_ENV: 'production' },
    url: `http://127.0.0.1:${port}`,
    readyPath: '/json',
    logFile,
  })
}

/**
 * A second Fileshare process on the same data folder and build, with extra environment (e.g.
 * FILESHARE_METRICS_ADDR): for A/B runs of one setting.
 */
export async function startFileshareWith(dataDir: string, logFile: string, extraEnv: Record<string, string>): Promise<RunningServer> {
  const port = await freePort()
  return startBenchProcess({
    args: serverArgs(),
    env: { ...fileshareEnv(dataDir, port), ...extraEnv },
    url: `http://127.0.0.1:${port}`,
    readyPath: '/healthz',
    logFile,
  })
}

/** The sink (bench/sink-server.ts): counts and drops what it is sent, to measure the clients alone. */
export async function startSink(logFile: string): Promise<RunningServer> {
  const port = await freePort()
  return startBenchProcess({
    args: tsScriptArgs('sink-server.ts'),
    env: { SINK_PORT: String(port) },
    url: `http://127.0.0.1:${port}`,
    readyPath: '/json',
    logFile,
  })
}

/**
 * The peer of the metadata calls (bench/metadata-peer.ts: Express 5 + better-sqlite3) on the
 * service's SQLite file, with the plan's limits as its configuration.
 */
export async function startMetadataPeer(
  options: { database: string; linkBaseUrl: string; planLimits: unknown },
  logFile: string,
): Promise<RunningServer> {
  const port = await freePort()
  return startBenchProcess({
    args: tsScriptArgs('metadata-peer.ts'),
    env: {
      PEER_PORT: String(port),
      PEER_DATABASE: options.database,
      PEER_LINK_BASE_URL: options.linkBaseUrl,
      PEER_PLAN_LIMITS: JSON.stringify(options.planLimits),
      NODE_ENV: 'production',
    },
    url: `http://127.0.0.1:${port}`,
    readyPath: '/json',
    logFile,
  })
}

import { execFile, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

/**
 * The one harness for real server processes, used by the tests, `npm run bench` and the soak test:
 * find a free port, spawn, wait until it answers, stop, and read a process's memory and descriptors.
 */

/** The checkout, where `bin/` and the compiled `dist/` live (tests of real processes need `npm run build`). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** The `fileshare` CLI. */
export const BIN = path.join(ROOT, 'bin/fileshare.js')
/** The compiled server entry point. */
export const SERVER = path.join(ROOT, 'dist/server.js')

/** An operator's environment without any fileshare, AWS or listen settings of the machine running the tests, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('FILESHARE_') && !name.startsWith('AWS_') && name !== 'PORT' && name !== 'HOST') env[name] = value
  }
  return { ...env, ...extra }
}

/** A port that was free a moment ago: the server must be given a real one so that its default public URL is right. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/**
 * Calls `probe` until it returns a value, for at most `timeoutMs`. Polls instead of sleeping,
 * so that a change is seen as soon as it lands and a missing one fails after the bound.
 */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() >= deadline) throw new Error(`${what}: not seen within ${timeoutMs} ms`)
    await sleep(intervalMs)
  }
}

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface SpawnedProcess {
  child: ChildProcess
  stdout(): string
  stderr(): string
  exited: Promise<Exit>
  /** Where its stdout and stderr go, when it was spawned with `logFile` (then `stdout()` and `stderr()` stay empty). */
  logFile?: string
}

/**
 * Spawns `node <command>` (the server unless told otherwise) in the checkout, capturing its output;
 * or, with `logFile`, appending it there as an operator's log would go (a pipe back to this process
 * would cost the measuring process CPU: the bench and the soak use that).
 */
export function spawnServer(env: Record<string, string>, command: string[] = [SERVER], options: { logFile?: string } = {}): SpawnedProcess {
  const log = options.logFile === undefined ? undefined : fs.openSync(options.logFile, 'a')
  const child = spawn(process.execPath, command, { cwd: ROOT, env: cleanEnv(env), stdio: ['ignore', log ?? 'pipe', log ?? 'pipe'] })
  if (log !== undefined) fs.closeSync(log)
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (text: string) => (stdout += text))
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text))
  // 'close', not 'exit': Node emits 'exit' as soon as it reaps the process, and the last of its
  // output may still be unread in the pipes then (seen on Node 24 under load: a server stopped by a
  // bad setting had printed its message, and stderr() was still empty at 'exit'). 'close' comes
  // once both pipes have ended, with the same code and signal; the server starts no processes that
  // could hold them open.
  const exited = new Promise<Exit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })))
  return { child, exited, stdout: () => stdout, stderr: () => stderr, logFile: options.logFile }
}

/** Everything the process has written so far: its captured stdout and stderr, or its log file. */
export function outputOf(server: SpawnedProcess): string {
  if (server.logFile === undefined) return server.stdout() + server.stderr()
  try {
    return fs.readFileSync(server.logFile, 'utf8')
  } catch {
    return ''
  }
}

/**
 * Waits until GET `url` answers as `ready` says (by default: a 2xx status), polling every
 * `intervalMs` for at most `timeoutMs`. If the process exits first or does not answer in time, it
 * is killed and the error carries its output.
 */
export async function waitForHealth(
  server: SpawnedProcess,
  url: string,
  {
    ready = (response) => response.ok,
    timeoutMs = 15_000,
    intervalMs = 100,
  }: { ready?: (response: Response) => boolean; timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  let exitedEarly = false
  void server.exited.then(() => (exitedEarly = true))
  try {
    await eventually(
      `GET ${url}`,
      async () => {
        if (exitedEarly) throw new Error(`server exited before serving:\n${outputOf(server)}`)
        const response = await fetch(url).catch(() => undefined)
        // Read to the end, so that no answer is left half-read; a reset meanwhile counts as none.
        const read = await response?.arrayBuffer().then(
          () => true,
          () => false,
        )
        return response && read && ready(response) ? true : undefined
      },
      timeoutMs,
      intervalMs,
    )
  } catch (error) {
    await stopServerProcess(server)
    throw error
  }
}

export interface ServerProcess extends SpawnedProcess {
  port: number
  /** http://127.0.0.1:<port> */
  url: string
  /** <url>/api/v1 */
  api: string
  dataDir: string
}

const QUIET_LEVELS = new Set(['warn', 'error', 'fatal', 'silent'])

/**
 * Starts a server on a free loopback port (or `port`) and `dataDir` (plus `env`), and waits until
 * /healthz answers. Its output is captured, or appended to `logFile`. If it does not come up, it is
 * killed and the error carries its output.
 */
export async function startServerProcess(options: {
  dataDir: string
  env?: Record<string, string>
  command?: string[]
  readyTimeoutMs?: number
  port?: number
  logFile?: string
}): Promise<ServerProcess> {
  const env = options.env ?? {}
  const port = options.port ?? (await freePort())
  const spawned = spawnServer({ PORT: String(port), HOST: '127.0.0.1', FILESHARE_DATA_DIR: options.dataDir, ...env }, options.command, {
    logFile: options.logFile,
  })
  const url = `http://127.0.0.1:${port}`
  const server: ServerProcess = { ...spawned, port, url, api: `${url}/api/v1`, dataDir: options.dataDir }
  // At level info the server logs its address: then our process must be the one answering, not
  // another that took the port meanwhile.
  const logsListening = !QUIET_LEVELS.has(env.FILESHARE_LOG_LEVEL ?? 'info')
  await waitForHealth(server, `${url}/healthz`, {
    ready: (response) => response.status === 200 && (!logsListening || outputOf(server).includes(`listening at ${url}`)),
    timeoutMs: options.readyTimeoutMs ?? 15_000,
    intervalMs: 50,
  })
  return server
}

/**
 * Stops the process: SIGKILL at once by default; with `signal: 'SIGTERM'` it gets `timeoutMs` to
 * exit on its own before it is killed. Resolves with how it exited.
 */
export async function stopServerProcess(
  server: SpawnedProcess,
  { signal = 'SIGKILL', timeoutMs = 10_000 }: { signal?: NodeJS.Signals; timeoutMs?: number } = {},
): Promise<Exit> {
  if (server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill(signal)
    if (signal !== 'SIGKILL') {
      // An unref'd timer: once the process has exited, the caller's own process need not wait it out.
      const exited = await Promise.race([server.exited, sleep(timeoutMs, undefined, { ref: false })])
      if (!exited) server.child.kill('SIGKILL')
    }
  }
  return server.exited
}

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs the real binary, `node bin/fileshare.js ...args`, with `env` over a clean environment. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: cleanEnv(env) }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
    })
  })
}

/** Runs the real binary with `stdin` piped in, as `echo "$PASSWORD" | fileshare account set-password ID` would. */
export function runCliWithInput(args: string[], env: Record<string, string>, stdin: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: cleanEnv(env) })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }))
    child.stdin.end(stdin)
  })
}

export interface ProcessStatus {
  /** Resident set size now (VmRSS). */
  rssBytes: number
  /** The kernel's high-water mark of the resident set (VmHWM). */
  hwmBytes: number
  /** Open file descriptors. */
  fds: number
}

/** Memory and open descriptors of another process, from /proc (Linux). */
export function readProcessStatus(pid: number): ProcessStatus {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rssBytes: kib('VmRSS') * 1024, hwmBytes: kib('VmHWM') * 1024, fds: fs.readdirSync(`/proc/${pid}/fd`).length }
}

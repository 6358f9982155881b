import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
/** Bench scripts are TypeScript: their child processes load tsx, as `npm run bench` does. */
const TSX = ['--import', 'tsx']

export interface RunningServer {
  pid: number
  url: string
  /** SIGTERM, then waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>
}

export async function freePort(): Promise<number> {
  const server = net.createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as net.AddressInfo
  server.close()
  await once(server, 'close')
  return port
}

async function waitUntilAnswering(url: string, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`${url} exited with code ${child.exitCode} before answering; see ${logFile}:\n${tail(logFile)}`)
    }
    try {
      const response = await fetch(url)
      await response.arrayBuffer()
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error(`${url} did not answer within 30 s; see ${logFile}`)
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-20).join('\n')
  } catch {
    return ''
  }
}

/**
 * Starts a server process whose stdout and stderr go to `logFile`, as an operator's would go to a
 * log file (a pipe back to this process would cost the bench's own CPU), and waits until `readyUrl`
 * answers.
 */
export async function startServerProcess(options: {
  args: string[]
  env: Record<string, string>
  url: string
  readyPath: string
  logFile: string
}): Promise<RunningServer> {
  const log = fs.openSync(options.logFile, 'a')
  const child = spawn(process.execPath, options.args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', log, log],
  })
  fs.closeSync(log)
  try {
    await waitUntilAnswering(options.url + options.readyPath, child, options.logFile)
  } catch (error) {
    child.kill('SIGKILL')
    throw error
  }
  return {
    pid: child.pid!,
    url: options.url,
    async stop() {
      if (child.exitCode !== null) return child.exitCode
      child.kill('SIGTERM')
      const [code] = (await once(child, 'exit')) as [number | null]
      return code
    },
  }
}

/** Starts a TypeScript bench server script (the baseline) the same way. */
export function tsScriptArgs(script: string, nodeFlags: string[] = []): string[] {
  return [...nodeFlags, ...TSX, path.join(REPO_ROOT, 'bench', script)]
}

/**
 * Runs a client script in its own process (so that its CPU is not the server's) and returns the
 * JSON document it prints last. The input travels as one JSON argument.
 */
export async function runClientScript<T>(script: string, input: unknown): Promise<T> {
  const child = spawn(process.execPath, [...tsScriptArgs(script), JSON.stringify(input)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  child.stdout!.setEncoding('utf8')
  child.stdout!.on('data', (text: string) => (output += text))
  const [code] = (await once(child, 'exit')) as [number | null]
  if (code !== 0) throw new Error(`bench/${script} exited with code ${code}`)
  const last = output.trim().split('\n').pop() ?? ''
  return JSON.parse(last) as T
}

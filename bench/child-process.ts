import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { eventually, freePort, spawnServer, stopServerProcess } from '../test/helpers/server-process.js'

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
/** Bench scripts are TypeScript: their child processes load tsx, as `npm run bench` does. */
const TSX = ['--import', 'tsx']

export interface RunningServer {
  pid: number
  url: string
  /** SIGTERM, then waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>
}

// The one process harness of the tests serves the bench too: one way to find a port, spawn and wait.
export { freePort }

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
  const server = spawnServer(options.env, options.args, { logFile: options.logFile })
  let exitedEarly = false
  void server.exited.then(() => (exitedEarly = true))
  try {
    await eventually(
      options.url + options.readyPath,
      async () => {
        if (exitedEarly) throw new Error(`${options.url} exited before answering; see ${options.logFile}:\n${tail(options.logFile)}`)
        const response = await fetch(options.url + options.readyPath).catch(() => undefined)
        await response?.arrayBuffer()
        return response ? true : undefined
      },
      30_000,
    )
  } catch (error) {
    await stopServerProcess(server)
    throw error
  }
  return {
    pid: server.child.pid!,
    url: options.url,
    async stop() {
      return (await stopServerProcess(server, { signal: 'SIGTERM', timeoutMs: 60_000 })).code
    },
  }
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-20).join('\n')
  } catch {
    return ''
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

// Runs the built CLI (bin/fshare.js → dist/cli/main.js) as a process, and a throttling proxy
// that makes transfers last long enough for progress to be drawn.
import { execFile, spawn } from 'node:child_process'
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage } from 'node:http'
import { connect, createServer, type Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import { server } from './env.js'

export const BIN = fileURLToPath(new URL('../../bin/fshare.js', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Every output of every run of this test file: checked for the keys at the end. */
export const outputs: string[] = []

export interface RunOptions {
  /** `pro` (default), `free`, `limited`, or `none` (no FILESHARE_* variables). */
  account?: 'pro' | 'free' | 'limited' | 'none'
  env?: Record<string, string | undefined>
  cwd?: string
  timeoutMs?: number
  /** What the command reads on stdin (default: nothing, stdin ends at once). */
  input?: string
}

/** The environment of a run: no FILESHARE_* or TERM from the outer one, the account's key and URL. */
export function cliEnv(options: RunOptions = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('FILESHARE_') && name !== 'TERM') env[name] = value
  }
  const account = options.account ?? 'pro'
  if (account !== 'none') {
    env.FILESHARE_BASE_URL = server().base_url
    env.FILESHARE_API_KEY = server().keys[account]
  }
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}

export function fshare(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env: cliEnv(options), cwd: options.cwd, timeout: options.timeoutMs ?? 30_000, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error)
        outputs.push(stdout, stderr)
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr })
      },
    )
    child.stdin?.end(options.input ?? '')
  })
}

/** JSON lines of a stdout. */
export function jsonLines(stdout: string): Record<string, any>[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, any>)
}

/** A shell word. */
export function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`
}

/**
 * Runs a command line under a pseudo-terminal (util-linux `script`): stdout and stderr are a
 * terminal, as for a person. Resolves to everything the terminal showed.
 */
export function underTerminal(args: string[], options: RunOptions = {}): Promise<CliResult> {
  const command = `stty cols 120 rows 40; ${quote(process.execPath)} ${[BIN, ...args].map(quote).join(' ')}`
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { ...cliEnv(options), TERM: 'xterm-256color' },
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.once('error', reject)
    child.once('close', (code) => {
      outputs.push(stdout, stderr)
      resolve({ code, stdout, stderr })
    })
  })
}

export interface Throttle {
  url: string
  close(): Promise<void>
}

/** A TCP proxy to the server that moves at most `bytesPerSecond` each way on each connection. */
export async function startThrottle(target: string, bytesPerSecond: number): Promise<Throttle> {
  const { hostname, port } = new URL(target)
  const sockets = new Set<Socket>()
  const relay = (from: Socket, to: Socket) => {
    from.on('data', (chunk: Buffer) => {
      to.write(chunk)
      from.pause()
      setTimeout(() => from.resume(), (chunk.length / bytesPerSecond) * 1000)
    })
  }
  const proxy = createServer((client) => {
    const upstream = connect(Number(port), hostname)
    sockets.add(client).add(upstream)
    relay(client, upstream)
    relay(upstream, client)
    const end = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    for (const socket of [client, upstream]) {
      socket.on('close', end)
      socket.on('error', end)
    }
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        proxy.close(() => resolve())
      }),
  }
}

/**
 * An HTTP reverse proxy to the server that sends answers at most `bytesPerSecond` per request,
 * and gives the server's URLs in its answers (a link's grant, in the 303's Location and JSON) as
 * its own, as a proxy set up as the server's public URL does: a download through it stays on it.
 */
export async function startThrottledProxy(target: string, bytesPerSecond: number): Promise<Throttle> {
  const targetUrl = new URL(target)
  let own = ''
  const answers = new Set<IncomingMessage>()
  const proxy = createHttpServer((req, res) => {
    const upstream = httpRequest(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: { ...req.headers, host: targetUrl.host } },
      (answer) => {
        answers.add(answer)
        answer.once('close', () => answers.delete(answer))
        const headers = { ...answer.headers }
        if (headers.location) headers.location = headers.location.replace(target, own)
        if (/^application\/json/.test(headers['content-type'] ?? '')) {
          const chunks: Buffer[] = []
          answer.on('data', (chunk: Buffer) => chunks.push(chunk))
          answer.on('end', () => {
            const body = Buffer.from(Buffer.concat(chunks).toString().split(target).join(own))
            res.writeHead(answer.statusCode ?? 502, { ...headers, 'content-length': String(body.length) }).end(body)
          })
          return
        }
        res.writeHead(answer.statusCode ?? 502, headers)
        answer.on('data', (chunk: Buffer) => {
          res.write(chunk)
          answer.pause()
          setTimeout(() => answer.resume(), (chunk.length / bytesPerSecond) * 1000)
        })
        answer.on('end', () => res.end())
      },
    )
    upstream.on('error', () => res.destroy())
    res.on('close', () => upstream.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  own = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`
  return {
    url: own,
    close: () =>
      new Promise((resolve) => {
        for (const answer of answers) answer.destroy()
        proxy.closeAllConnections()
        proxy.close(() => resolve())
      }),
  }
}

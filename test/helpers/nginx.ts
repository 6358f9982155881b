import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { eventually, freePort, ROOT } from './server-process.js'

/**
 * Debian's real nginx in front of the service, configured with the sample of docs/scale-out.md
 * ("A sample deployment: two instances behind nginx"): the test reads the `nginx` block from the
 * docs and substitutes only what a test machine must (the backends' ports, a plain-HTTP listener on
 * 127.0.0.1 instead of TLS on 443), so the sample operators copy is the configuration under test.
 * nginx runs unprivileged in the foreground with its pid, temp folders and logs in a temp folder.
 */

export const NGINX = process.env.FILESHARE_TEST_NGINX ?? '/usr/sbin/nginx'
export const SCALE_OUT_DOC = path.join(ROOT, 'docs/scale-out.md')

export function isNginxInstalled(): boolean {
  return existsSync(NGINX)
}

/** The one ```nginx block of docs/scale-out.md, as written there. */
export function sampleNginxConfig(): string {
  const blocks = [...readFileSync(SCALE_OUT_DOC, 'utf8').matchAll(/^```nginx\n([\s\S]*?)^```$/gm)].map((match) => match[1]!)
  if (blocks.length !== 1) throw new Error(`docs/scale-out.md should have exactly one nginx block, found ${blocks.length}`)
  return blocks[0]!
}

/**
 * The sample with `backends` (host:port) as the upstream's servers, listening on 127.0.0.1:`port`
 * over plain HTTP (the TLS lines dropped). Fails if the sample no longer has what is substituted.
 */
export function testNginxConfig(sample: string, backends: string[], port: number): string {
  const upstream = /^(\s*)server\s+127\.0\.0\.1:\d+(\s[^;]*)?;\n/gm
  const servers = [...sample.matchAll(upstream)]
  if (servers.length === 0) throw new Error('the sample nginx config has no upstream server 127.0.0.1:<port> lines')
  const [first] = servers
  const indent = first![1]!
  const parameters = first![2] ?? ''
  let replaced = false
  const config = sample
    .replace(upstream, () => {
      if (replaced) return ''
      replaced = true
      return backends.map((backend) => `${indent}server ${backend}${parameters};\n`).join('')
    })
    .replace(/^(\s*)listen\s+443\s+ssl;$/m, (_line, space: string) => `${space}listen 127.0.0.1:${port};`)
    .replace(/^\s*#?\s*ssl_[^\n]*\n/gm, '')
  if (!config.includes(`listen 127.0.0.1:${port};`)) throw new Error('the sample nginx config has no `listen 443 ssl;` line')
  return config
}

export interface Nginx {
  /** http://127.0.0.1:<port> */
  url: string
  port: number
  /** The prefix folder: nginx.conf, logs/, temp folders. */
  dir: string
  /** Where nginx spools request bodies it buffers (it must stay empty with `proxy_request_buffering off`). */
  clientBodyTempDir: string
  child: ChildProcess
  /** The error log so far. */
  errorLog(): Promise<string>
  /** The access log so far: `<client address> "<request line>" <status> <upstream address>` a line. */
  accessLog(): Promise<string>
  stop(): Promise<void>
}

/**
 * Starts nginx with the docs' sample in front of `backends` (host:port each), on a free port of
 * 127.0.0.1 only, and waits until it accepts connections. `stop()` shuts it down (SIGTERM, nginx's
 * fast shutdown: a response a test left unread must not hold it), kills it if it has not exited
 * within 5 s, then removes its folder.
 */
export async function startNginx(backends: string[], options: { port?: number } = {}): Promise<Nginx> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNginxOnce(backends, options.port ?? (await freePort()))
    } catch (error) {
      // The free port was taken meanwhile by another test's server: take another.
      const taken = error instanceof Error && error.message.includes('Address already in use')
      if (!taken || options.port !== undefined || attempt === 3) throw error
    }
  }
}

async function startNginxOnce(backends: string[], port: number): Promise<Nginx> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fileshare-nginx-'))
  const temp = (name: string) => path.join(dir, 'temp', name)
  for (const name of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await fs.mkdir(temp(name), { recursive: true })
  await fs.mkdir(path.join(dir, 'logs'))
  const errorLog = path.join(dir, 'logs/error.log')
  const accessLog = path.join(dir, 'logs/access.log')
  const conf = path.join(dir, 'nginx.conf')
  await fs.writeFile(
    conf,
    [
      `pid ${path.join(dir, 'nginx.pid')};`,
      `error_log ${errorLog} warn;`,
      'worker_processes 1;',
      'events { worker_connections 512; }',
      'http {',
      // Which backend served each request, for tests that check both took part.
      `  log_format upstream '$remote_addr "$request" $status $upstream_addr';`,
      `  access_log ${accessLog} upstream;`,
      `  client_body_temp_path ${temp('client_body')};`,
      `  proxy_temp_path ${temp('proxy')};`,
      `  fastcgi_temp_path ${temp('fastcgi')};`,
      `  uwsgi_temp_path ${temp('uwsgi')};`,
      `  scgi_temp_path ${temp('scgi')};`,
      '  # --- docs/scale-out.md ---',
      testNginxConfig(sampleNginxConfig(), backends, port),
      '}',
      '',
    ].join('\n'),
  )
  // Run as root (as on the test machines), nginx would serve from workers of user nobody that cannot
  // write to this folder; run the whole of it as nobody instead, as an unprivileged process.
  const as = process.getuid?.() === 0 ? await nobody() : undefined
  if (as) await chownTree(dir, as.uid, as.gid)
  // -e: the error log before the config is read (the compiled-in default is elsewhere).
  const child = spawn(NGINX, ['-p', dir, '-c', conf, '-e', errorLog, '-g', 'daemon off;'], {
    ...as,
    stdio: ['ignore', 'ignore', 'pipe'],
    // A process group of its own: a SIGKILL then reaches the worker too, not only the master.
    detached: true,
  })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text))
  let exited = false
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true
      resolve()
    }),
  )
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal)
    } catch {
      // already gone
    }
  }
  const readLog = () => fs.readFile(errorLog, 'utf8').catch(() => '')
  const url = `http://127.0.0.1:${port}`
  try {
    await eventually(
      `nginx on ${url}`,
      async () => {
        if (exited) throw new Error(`nginx exited at start:\n${stderr}${await readLog()}`)
        const response = await fetch(`${url}/healthz`).catch(() => undefined)
        await response?.arrayBuffer().catch(() => undefined)
        // nginx's own answer (it names itself), not another process's that took the port meanwhile.
        return response?.headers.get('server')?.startsWith('nginx') ? true : undefined
      },
      10_000,
      50,
    )
  } catch (error) {
    killGroup('SIGKILL')
    await exit
    await fs.rm(dir, { recursive: true, force: true })
    throw error
  }
  return {
    url,
    port,
    dir,
    clientBodyTempDir: temp('client_body'),
    child,
    errorLog: readLog,
    accessLog: () => fs.readFile(accessLog, 'utf8').catch(() => ''),
    async stop() {
      if (!exited) {
        killGroup('SIGTERM')
        const quit = await Promise.race([exit.then(() => true), sleep(5_000, false, { ref: false })])
        if (!quit) {
          killGroup('SIGKILL')
          await exit
        }
      }
      await fs.rm(dir, { recursive: true, force: true })
    },
  }
}

/** The uid and gid of the user nobody (/etc/passwd). */
async function nobody(): Promise<{ uid: number; gid: number }> {
  const passwd = await fs.readFile('/etc/passwd', 'utf8').catch(() => '')
  const [, , uid, gid] =
    passwd
      .split('\n')
      .find((line) => line.startsWith('nobody:'))
      ?.split(':') ?? []
  return { uid: Number(uid ?? 65534), gid: Number(gid ?? 65534) }
}

async function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  await fs.chown(dir, uid, gid)
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    await fs.chown(path.join(entry.parentPath, entry.name), uid, gid)
  }
}

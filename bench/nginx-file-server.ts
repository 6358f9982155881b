import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { eventually, freePort } from '../test/helpers/server-process.js'
import { NGINX } from '../test/helpers/nginx.js'

/** A private nginx serving the files of one folder, the download ceiling of the bench. */
export interface NginxFileServer {
  /** http://127.0.0.1:<port>; a file `<root>/a/b` is at `<url>/blob/a/b`. */
  url: string
  /** The worker's pid (worker_processes 1): the process that sends the files, whose CPU counts. */
  workerPid: number
  stop(): Promise<void>
}

/**
 * The configuration: nginx as it serves static files at its fastest, `sendfile on` (the kernel
 * copies from the page cache to the socket, no read into user space) with `tcp_nopush`, one
 * worker, no access log. Exported for the bench's tests.
 */
export function nginxFileConfig(options: { dir: string; root: string; port: number; asRoot: boolean }): string {
  const { dir, root, port } = options
  return [
    `pid ${path.join(dir, 'nginx.pid')};`,
    `error_log ${path.join(dir, 'error.log')} warn;`,
    // Run as root (as on the bench machine), the worker would be nobody, who cannot read the bench's 0700 temp folder.
    ...(options.asRoot ? ['user root root;'] : []),
    'worker_processes 1;',
    'events { worker_connections 64; }',
    'http {',
    '  access_log off;',
    `  client_body_temp_path ${path.join(dir, 'client_body')};`,
    `  proxy_temp_path ${path.join(dir, 'proxy')};`,
    `  fastcgi_temp_path ${path.join(dir, 'fastcgi')};`,
    `  uwsgi_temp_path ${path.join(dir, 'uwsgi')};`,
    `  scgi_temp_path ${path.join(dir, 'scgi')};`,
    '  sendfile on;',
    '  tcp_nopush on;',
    '  default_type application/octet-stream;',
    '  server {',
    `    listen 127.0.0.1:${port};`,
    `    location /blob/ { alias ${root}/; }`,
    '    location = /healthz { return 200 "ok"; }',
    '  }',
    '}',
    '',
  ].join('\n')
}

/** Starts Debian's nginx (test/helpers/nginx.ts finds it) on a free port, serving `root`; its files go under `dir`. */
export async function startNginxFileServer(root: string, dir: string): Promise<NginxFileServer> {
  await fs.mkdir(dir, { recursive: true })
  const port = await freePort()
  const conf = path.join(dir, 'nginx.conf')
  await fs.writeFile(conf, nginxFileConfig({ dir, root, port, asRoot: process.getuid?.() === 0 }))
  const errorLog = path.join(dir, 'error.log')
  const child = spawn(NGINX, ['-p', dir, '-c', conf, '-e', errorLog, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text))
  const exited = once(child, 'exit')
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      const quit = await Promise.race([exited.then(() => true), sleep(5_000, false, { ref: false })])
      if (!quit) child.kill('SIGKILL')
    }
  }
  try {
    await eventually(
      `nginx on ${url}`,
      async () => {
        if (child.exitCode !== null) throw new Error(`nginx exited at start: ${stderr}`)
        const response = await fetch(`${url}/healthz`).catch(() => undefined)
        await response?.arrayBuffer()
        return response?.headers.get('server')?.startsWith('nginx') ? true : undefined
      },
      10_000,
      50,
    )
    const children = await fs.readFile(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8')
    const workerPid = Number(children.trim().split(/\s+/)[0])
    if (!workerPid) throw new Error(`no nginx worker under pid ${child.pid}`)
    return { url, workerPid, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

import { execFile } from 'node:child_process'
import { createHash, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { inject } from 'vitest'
import { Fileshare, type FileshareOptions } from '../../src/index.js'
import type { LauncherInfo } from './launcher.js'

export function server() {
  return inject('fileshare')
}

/** A client with one of the launcher's keys (`read_only`, `ip_restricted` and `auditor` are keys of the pro account). */
export function client(account: keyof LauncherInfo['keys'] = 'pro', options: FileshareOptions = {}): Fileshare {
  const info = server()
  return new Fileshare({ baseUrl: info.base_url, apiKey: info.keys[account], ...options })
}

export function tempDir(): { dir: string; file: (name: string) => string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'fileshare-sdk-js-test-'))
  return { dir, file: (name) => path.join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) }
}

export function randomBytes(size: number, seed = 1): Uint8Array {
  const bytes = new Uint8Array(size)
  let x = seed * 2654435761
  for (let i = 0; i < size; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    bytes[i] = x & 0xff
  }
  return bytes
}

/** The SHA-256 of `data` in lower-case hex, as the API reports a file's. */
export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}

const REPOSITORY = fileURLToPath(new URL('../../../../', import.meta.url))

/** `fileshare ARGS…` (the operator CLI) on the launcher's data folder; its standard output. */
export async function fileshareCli(...args: string[]): Promise<string> {
  const env: Record<string, string | undefined> = { ...process.env, FILESHARE_DATA_DIR: server().data_dir, FILESHARE_LOG_LEVEL: 'warn' }
  delete env.FILESHARE_DATABASE_URL // the launcher's server always uses the local SQLite database
  delete env.FILESHARE_REDIS_URL
  const run = promisify(execFile)(process.execPath, [path.join(REPOSITORY, 'bin', 'fileshare.js'), ...args], { env, cwd: REPOSITORY })
  const { stdout } = await run.catch((error: { stderr?: string; message: string }) => {
    throw new Error(`fileshare ${args.slice(0, 2).join(' ')}: ${error.stderr || error.message}`)
  })
  return stdout
}

/** One more pro account on the launcher's server, made with the CLI: its id, its key, a client on it. */
export async function newAccount(name: string, options: FileshareOptions = {}): Promise<{ id: number; key: string; client: Fileshare }> {
  const email = `${name}-${randomUUID().slice(0, 8)}@sdk-tests.invalid`
  const out = await fileshareCli('account', 'create', '--email', email, '--plan', 'pro', '--json')
  const created = JSON.parse(out.trim().split('\n').pop()!) as { account_id: number; api_key: string }
  return {
    id: created.account_id,
    key: created.api_key,
    client: new Fileshare({ baseUrl: server().base_url, apiKey: created.api_key, ...options }),
  }
}

/** A fetch that notes the URL of every request it sends in `urls` (for a client's `fetch` option). */
export function recordingFetch(urls: URL[]): typeof fetch {
  return (input: RequestInfo | URL, init?: RequestInit) => {
    urls.push(new URL(input instanceof Request ? input.url : String(input)))
    return fetch(input, init)
  }
}

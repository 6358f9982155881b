// Starts sdks/launcher/launch-server.mjs and reads its one JSON line.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export const LAUNCHER = fileURLToPath(new URL('../../../launcher/launch-server.mjs', import.meta.url))

export interface LauncherInfo {
  base_url: string
  server_url: string
  /**
   * `read_only`: files:read, links:read, stats:read; `ip_restricted`: every scope, allowed only
   * from 10.0.0.0/8; `auditor`: audit:read only. The three are keys of the pro account.
   */
  keys: { pro: string; free: string; limited: string; read_only: string; ip_restricted: string; auditor: string }
  accounts: { pro: number; free: number; limited: number }
  limits: {
    pro: { requests_per_minute: number; requests_per_day: number }
    limited: { requests_per_minute: number; requests_per_day: number; max_file_size: number; daily_uploads: number }
  }
  pid: number
  server_pid: number
  data_dir: string
  /**
   * A second server that scans every upload (FILESHARE_SCAN=required) with a clamd of the
   * launcher's, whose test database knows only `eicar` (as `signature`); `null` when clamd is not
   * installed (absent from launchers before issue 35).
   */
  scanning?: ScanningServerInfo | null | undefined
}

export interface ScanningServerInfo {
  base_url: string
  server_url: string
  keys: { pro: string }
  mode: 'required' | 'async'
  /** The 68-byte EICAR test string. */
  eicar: string
  /** What the launcher's clamd names it. */
  signature: string
}

export async function startLauncher(
  args: string[] = [],
): Promise<{ info: LauncherInfo; child: ChildProcessWithoutNullStreams; stderr: () => string }> {
  const child = spawn(process.execPath, [LAUNCHER, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout })
    lines.once('line', resolve)
    child.once('exit', (code) => reject(new Error(`the launcher exited (${code}) before it was ready:\n${stderr}`)))
  })
  return { info: JSON.parse(line) as LauncherInfo, child, stderr: () => stderr }
}

export function stopLauncher(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode)
    child.once('exit', (code) => resolve(code))
    child.stdin.end()
  })
}

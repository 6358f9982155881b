import { execFileSync } from 'node:child_process'

/**
 * The real HTTP clients test/clients drives besides Node's fetch: curl, and Debian's python3 with
 * python3-httpx and python3-requests (`.ci/run` installs them; the `python3` first on PATH may be
 * another one). A client that is missing is skipped with a message, as Chromium is (browser.ts).
 */
export const PYTHON = '/usr/bin/python3'

function runs(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 10_000 })
    return true
  } catch {
    return false
  }
}

export const curlAvailable = runs('curl', ['--version'])
export const pythonClientsAvailable = runs(PYTHON, ['-c', 'import httpx, requests'])

const missing = [
  ...(curlAvailable ? [] : ['curl (apt-get install curl)']),
  ...(pythonClientsAvailable ? [] : [`${PYTHON} with httpx and requests (apt-get install python3-httpx python3-requests)`]),
]
if (missing.length > 0) console.warn(`\n!! Missing real clients, their cases in test/clients are SKIPPED: ${missing.join('; ')}.\n`)

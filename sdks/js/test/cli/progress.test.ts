// Progress as people and scripts see it, through a proxy that slows transfers to ~1.5-4 MiB/s:
// on a terminal (a pseudo-terminal from util-linux `script`), a bar redrawn in place with bytes,
// speed and ETA; in a pipe, plain lines without escape codes; with --json, none. And Ctrl-C in
// the middle of a download: exit 130, the partial file stays, and a `get` of the grant it names
// resumes it without counting another download.
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FileRecord } from '../../src/index.js'
import { BIN, cliEnv, fshare, outputs, startThrottle, startThrottledProxy, underTerminal, type Throttle } from '../helpers/cli.js'
import { client, randomBytes, server, sha256Hex, tempDir } from '../helpers/env.js'

const hasScript = spawnSync('script', ['--version']).status === 0
const ESC = '\u001b'
const MiB = 1024 * 1024

const tmp = tempDir()
const data = randomBytes(2 * MiB, 31)
let file: FileRecord
let slow: Throttle // ~1.5 MiB/s: a 2 MiB download lasts about 1.3 s (the link's grant comes through it too)
let slowUpload: Throttle
let slowLink: string

beforeAll(async () => {
  file = await client('pro').files.upload(data, { filename: 'slow.bin' })
  slow = await startThrottledProxy(server().server_url, 1.5 * MiB)
  slowUpload = await startThrottle(server().server_url, 4 * MiB)
  slowLink = file.public_link.replace(server().server_url, slow.url)
  writeFileSync(tmp.file('up.bin'), randomBytes(6 * MiB, 32))
})

afterAll(async () => {
  await slow?.close()
  await slowUpload?.close()
  tmp.remove()
})

// One frame of the bar: name, bar, percent, bytes, speed, ETA.
const FRAME = /tty\.bin [\u2588\u2591]{24} +\d+% {2}[\d.]+ [KM]iB\/2\.0 MiB {2}[\d.]+ [KM]iB\/s {2}ETA \d+s/

describe.skipIf(!hasScript)('on a terminal (script -qfec)', () => {
  it('get draws a progress bar in place, with speed and ETA, then the result line', async () => {
    const run = await underTerminal(['get', slowLink, '-o', 'tty.bin'], { cwd: tmp.dir, account: 'none' })
    expect(run.code).toBe(0)
    const screen = run.stdout
    expect(screen).toContain(`${ESC}[?25l`) // cursor hidden while drawing, shown again after
    expect(screen).toContain(`${ESC}[?25h`)
    expect(screen).toMatch(new RegExp(`${ESC}\\[1G`)) // each frame redraws the line from column 1
    expect(screen).toMatch(FRAME)
    expect(screen).toMatch(/tty\.bin \u2588{24} 100% {2}2\.0 MiB\/2\.0 MiB {2}[\d.]+ [KM]iB\/s {2}in [\d.]+s/)
    expect(screen).toMatch(/saved tty\.bin \(2\.0 MiB, sha256 [0-9a-f]{64}\)/)
    expect(sha256Hex(readFileSync(tmp.file('tty.bin')))).toBe(sha256Hex(data))
  })

  it('upload draws one too', async () => {
    const run = await underTerminal(['upload', 'up.bin', '--base-url', `${slowUpload.url}/api/v1`], { cwd: tmp.dir })
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/up\.bin [\u2588\u2591]{24} +\d+% {2}[\d.]+ [KM]iB\/6\.0 MiB {2}[\d.]+ [KM]iB\/s {2}ETA \d+s/)
    expect(run.stdout).toMatch(/uploaded up\.bin: id \d+, 6\.0 MiB, http/)
  })

  it('--json draws nothing: JSON only, even on a terminal', async () => {
    const run = await underTerminal(['get', slowLink, '-o', 'tty-json.bin', '--json'], { cwd: tmp.dir, account: 'none' })
    expect(run.code).toBe(0)
    expect(run.stdout).not.toContain(ESC)
    expect(JSON.parse(run.stdout.trim())).toMatchObject({ path: 'tty-json.bin', size: data.length, sha256: sha256Hex(data) })
  })
})

describe('not on a terminal', () => {
  it('get prints plain progress lines (about one a second, then a last one), without escape codes', async () => {
    const run = await fshare(['get', slowLink, '-o', 'pipe.bin'], { cwd: tmp.dir, account: 'none' })
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^saved pipe\.bin \(2\.0 MiB, sha256 [0-9a-f]{64}\)\n$/)
    const lines = run.stderr.trim().split('\n')
    expect(lines.length).toBeGreaterThanOrEqual(2)
    expect(lines[0]).toMatch(/^pipe\.bin: \d+% {2}[\d.]+ [KM]iB\/2\.0 MiB {2}[\d.]+ [KM]iB\/s {2}ETA \d+s$/)
    expect(lines.at(-1)).toMatch(/^pipe\.bin: 100% {2}2\.0 MiB\/2\.0 MiB {2}[\d.]+ [KM]iB\/s {2}in [\d.]+s$/)
    expect(run.stderr).not.toContain(ESC)
    expect(run.stderr).not.toContain('\r')
  })

  it('--no-progress prints none', async () => {
    const run = await fshare(['get', String(file.file_id), '-o', 'quiet.bin', '--no-progress'], { cwd: tmp.dir })
    expect(run).toMatchObject({ code: 0, stderr: '' })
  })
})

describe('Ctrl-C', () => {
  it('stops a download with exit 130, keeps the partial file, and a get of its grant resumes it', async () => {
    const child = spawn(process.execPath, [BIN, 'get', slowLink, '-o', 'int.bin'], {
      cwd: tmp.dir,
      env: cliEnv({ account: 'none' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    const size = () => {
      try {
        return statSync(tmp.file('int.bin')).size
      } catch {
        return 0
      }
    }
    while (size() < 300_000) await new Promise((resolve) => setTimeout(resolve, 20))
    child.kill('SIGINT')
    expect(await exited).toBe(130)
    outputs.push(stderr)
    // Getting the link again would count another download: the message names the grant, which does not.
    const named =
      /^fshare: interrupted: int\.bin keeps what came; within the hour, fshare get (\S+) -o int\.bin resumes it without counting another download$/m.exec(
        stderr,
      )
    expect(named, stderr).not.toBeNull()
    const grant = named![1]!
    expect(grant.startsWith(`${slowLink}/`)).toBe(true)
    const partial = size()
    expect(partial).toBeGreaterThanOrEqual(300_000)
    expect(partial).toBeLessThan(data.length)

    const counted = (await client('pro').files.get(file.file_id)).download_count
    const resumed = await fshare(['get', grant, '-o', 'int.bin', '--json'], { cwd: tmp.dir, account: 'none' })
    expect(resumed.code).toBe(0)
    expect(JSON.parse(resumed.stdout)).toEqual({
      path: 'int.bin',
      size: data.length,
      sha256: sha256Hex(data),
      resumed_from: partial,
      file_id: null,
    })
    expect((await client('pro').files.get(file.file_id)).download_count).toBe(counted)
    expect(sha256Hex(readFileSync(tmp.file('int.bin')))).toBe(sha256Hex(data))
  })
})

it('no key in any output', () => {
  for (const key of Object.values(server().keys)) for (const output of outputs) expect(output).not.toContain(key)
})

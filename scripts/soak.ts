/**
 * Soak test: the real server (`node dist/server.js`) under a steady mixed load for minutes, on
 * loopback. Not part of `npm test`. Run it with `npm run soak` (SOAK_SECONDS=180 by default).
 *
 * Many clients upload, download (random ranges, bytes checked), list, read, delete and read stats
 * across several accounts. Afterwards: no 5xx, every remaining file downloads with its checksum,
 * stats equal a recount from the listing, and the server's RSS and open file descriptors come back
 * near their starting level after a quiet period. The summary is printed and written to the
 * "Soak test" section of docs/reliability.md.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { createCipheriv, createHash, randomBytes, randomInt } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { freePort, readProcessStatus } from '../test/helpers/server-process.js'

const ROOT = path.resolve(import.meta.dirname, '..')
const REPORT_FILE = path.join(ROOT, 'docs', 'reliability.md')

function envInteger(name: string, fallback: number, minimum = 1): number {
  const raw = process.env[name]?.trim()
  if (!raw) return fallback
  if (!/^[0-9]+$/.test(raw) || Number(raw) < minimum) throw new Error(`${name} must be an integer >= ${minimum}, got "${raw}"`)
  return Number(raw)
}

const SETTINGS = {
  seconds: envInteger('SOAK_SECONDS', 180),
  clients: envInteger('SOAK_CLIENTS', 32),
  accounts: envInteger('SOAK_ACCOUNTS', 4),
  settleSeconds: envInteger('SOAK_SETTLE_SECONDS', 30, 0),
  maxFileBytes: envInteger('SOAK_MAX_FILE_BYTES', 4 * 1024 * 1024),
  /** Above this many files an account only shrinks, so the data set (and the disk) stays bounded. */
  maxFilesPerAccount: envInteger('SOAK_MAX_FILES_PER_ACCOUNT', 150),
}
const WRITE_REPORT = process.env.SOAK_WRITE_REPORT !== '0'

/* ------------------------------------------------------------------------------------------------
 * File contents: an AES-CTR key stream per file, so any byte range can be regenerated on demand
 * and the soak needs no copy of the files in memory.
 */

function contentRange(seed: Buffer, start: number, endInclusive: number): Buffer {
  if (endInclusive < start) return Buffer.alloc(0)
  const block = Math.floor(start / 16)
  const iv = Buffer.alloc(16)
  iv.writeBigUInt64BE(BigInt(block), 8)
  const cipher = createCipheriv('aes-128-ctr', seed, iv)
  const skip = start - block * 16
  return cipher.update(Buffer.alloc(skip + endInclusive - start + 1)).subarray(skip)
}

/** Mostly small files, some large ones: about 400 KiB on average with the default 4 MiB cap. */
function randomSize(): number {
  const roll = Math.random()
  const cap = roll < 0.6 ? 64 * 1024 : roll < 0.9 ? 1024 * 1024 : SETTINGS.maxFileBytes
  return randomInt(0, Math.min(cap, SETTINGS.maxFileBytes) + 1)
}

const NAME_PARTS = ['report', 'photo', 'Übersicht', 'café', 'données', '日本語', 'файл', '😀', 'a b', 'x-y_z', '2026', '.v2']
const EXTENSIONS = ['.txt', '.bin', '.jpg', '.pdf', '.html', '.json', '', '.tar.gz', '.csv']
function randomName(): string {
  const parts = Array.from({ length: randomInt(1, 4) }, () => NAME_PARTS[randomInt(NAME_PARTS.length)]!)
  return `${parts.join('-')}-${randomBytes(3).toString('hex')}${EXTENSIONS[randomInt(EXTENSIONS.length)]!}`
}

/* ------------------------------------------------------------------------------------------------
 * What the clients know: the files of each account, as the server should have them.
 */

interface KnownFile {
  fileId: number
  seed: Buffer
  size: number
  sha256: string
  filename: string
  downloadPath: string
  /** GETs whose body started at byte 0: what download_count must say. */
  countedDownloads: number
  /** Set before the delete request is sent: from then on a 404 is a fair answer. */
  deleting: boolean
}

interface Account {
  email: string
  apiKey: string
  files: Map<number, KnownFile>
  uploads: number
}

type Operation = 'upload' | 'download_range' | 'download_full' | 'list' | 'get' | 'delete' | 'stats'

interface OperationTally {
  count: number
  latenciesMs: number[]
}

const tallies = new Map<Operation, OperationTally>()
const statusCounts = new Map<number, number>()
const problems: string[] = []
let serverErrors = 0

function problem(message: string) {
  if (problems.length < 50) problems.push(message)
  else if (problems.length === 50) problems.push('… (further problems not listed)')
}

function noteStatus(operation: Operation, status: number) {
  statusCounts.set(status, (statusCounts.get(status) ?? 0) + 1)
  if (status >= 500) {
    serverErrors++
    problem(`${operation}: HTTP ${status}`)
  }
}

/* ------------------------------------------------------------------------------------------------
 * The server process and its resource use.
 */

interface Sample {
  rssBytes: number
  fds: number
}

async function sample(pid: number): Promise<Sample> {
  const { rssBytes, fds } = readProcessStatus(pid)
  return { rssBytes, fds }
}

class ResourceWatch {
  readonly samples: Array<Sample & { at: number }> = []
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly pid: number) {}

  async take(): Promise<Sample> {
    const taken = await sample(this.pid)
    this.samples.push({ ...taken, at: Date.now() })
    return taken
  }

  start(everyMs: number) {
    this.timer = setInterval(() => void this.take().catch(() => undefined), everyMs)
  }

  stop() {
    clearInterval(this.timer)
  }

  peak(): Sample {
    return {
      rssBytes: Math.max(...this.samples.map((s) => s.rssBytes)),
      fds: Math.max(...this.samples.map((s) => s.fds)),
    }
  }
}

async function runCli(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(ROOT, 'bin', 'fileshare.js'), ...args], { env, cwd: ROOT })
  return stdout
}

async function waitUntilHealthy(base: string, server: ChildProcess) {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (server.exitCode !== null) throw new Error(`the server exited with code ${server.exitCode} before it was ready`)
    try {
      if ((await fetch(`${base}/healthz`)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('the server did not become healthy within 20 s')
}

/* ------------------------------------------------------------------------------------------------
 * The clients.
 */

function pick<T>(items: T[]): T | undefined {
  return items.length === 0 ? undefined : items[randomInt(items.length)]
}

function liveFiles(account: Account): KnownFile[] {
  return [...account.files.values()].filter((file) => !file.deleting)
}

function chooseOperation(account: Account): Operation {
  const full = account.files.size >= SETTINGS.maxFilesPerAccount
  const roll = Math.random()
  if (roll < 0.22) return full ? 'delete' : 'upload'
  if (roll < 0.52) return 'download_range'
  if (roll < 0.58) return 'download_full'
  if (roll < 0.72) return 'list'
  if (roll < 0.84) return 'get'
  if (roll < 0.95) return 'delete'
  return 'stats'
}

function makeClient(base: string, accounts: Account[], deadline: number) {
  const api = `${base}/api/v1`
  const auth = (account: Account) => ({ authorization: `Bearer ${account.apiKey}` })

  const operations: Record<Operation, (account: Account) => Promise<number | undefined>> = {
    async upload(account) {
      const size = randomSize()
      const seed = randomBytes(16)
      const content = contentRange(seed, 0, size - 1)
      const filename = randomName()
      const sha256 = createHash('sha256').update(content).digest('hex')
      const form = new FormData()
      form.append('file', new Blob([content]), filename)
      const response = await fetch(`${api}/files/upload`, { method: 'POST', headers: auth(account), body: form })
      const body = (await response.json()) as Record<string, unknown>
      if (response.status !== 201) {
        if (response.status < 500) problem(`upload: HTTP ${response.status} ${JSON.stringify(body)}`)
        return response.status
      }
      if (body.size !== size || body.sha256 !== sha256 || body.filename !== filename) {
        problem(`upload: answer ${JSON.stringify(body)} does not match size ${size}, sha256 ${sha256}, name ${filename}`)
      }
      const fileId = body.file_id as number
      account.uploads++
      account.files.set(fileId, {
        fileId,
        seed,
        size,
        sha256,
        filename,
        downloadPath: new URL(body.public_link as string).pathname,
        countedDownloads: 0,
        deleting: false,
      })
      return response.status
    },

    async download_range(account) {
      const file = pick(liveFiles(account))
      if (!file) return undefined
      if (file.size === 0) return operations.download_full(account)
      let start: number
      let end: number
      let header: string
      const shape = randomInt(10)
      if (shape < 6) {
        start = randomInt(file.size)
        end = Math.min(file.size - 1, start + randomInt(256 * 1024))
        header = `bytes=${start}-${end}`
      } else if (shape < 8) {
        start = randomInt(file.size)
        end = file.size - 1
        header = `bytes=${start}-`
      } else {
        const suffix = randomInt(1, file.size + 1)
        start = file.size - suffix
        end = file.size - 1
        header = `bytes=-${suffix}`
      }
      const response = await fetch(`${base}${file.downloadPath}`, { headers: { range: header } })
      const bytes = Buffer.from(await response.arrayBuffer())
      if (response.status === 404 && file.deleting) return response.status
      if (response.status !== 206) {
        if (response.status < 500) problem(`range ${header} of file ${file.fileId} (${file.size} bytes): HTTP ${response.status}`)
        return response.status
      }
      if (start === 0) file.countedDownloads++
      const contentRangeHeader = response.headers.get('content-range')
      if (contentRangeHeader !== `bytes ${start}-${end}/${file.size}`) {
        problem(`range ${header} of file ${file.fileId}: Content-Range ${contentRangeHeader}`)
      } else if (!bytes.equals(contentRange(file.seed, start, end))) {
        problem(`range ${header} of file ${file.fileId}: wrong bytes`)
      }
      return response.status
    },

    async download_full(account) {
      const file = pick(liveFiles(account))
      if (!file) return undefined
      const response = await fetch(`${base}${file.downloadPath}`)
      const bytes = Buffer.from(await response.arrayBuffer())
      if (response.status === 404 && file.deleting) return response.status
      if (response.status !== 200) {
        if (response.status < 500) problem(`download of file ${file.fileId}: HTTP ${response.status}`)
        return response.status
      }
      file.countedDownloads++
      if (createHash('sha256').update(bytes).digest('hex') !== file.sha256) problem(`download of file ${file.fileId}: wrong checksum`)
      return response.status
    },

    async list(account) {
      const limit = randomInt(1, 101)
      const page = randomInt(1, Math.max(1, Math.ceil(account.files.size / limit)) + 1)
      const response = await fetch(`${api}/files?page=${page}&limit=${limit}`, { headers: auth(account) })
      const body = (await response.json()) as { files?: Array<{ file_id: number; size: number; sha256: string }> }
      if (response.status !== 200) {
        if (response.status < 500) problem(`list: HTTP ${response.status}`)
        return response.status
      }
      for (const listed of body.files ?? []) {
        const known = account.files.get(listed.file_id)
        // A file still uploading on another client is not known yet; one we know must match.
        if (known && (known.size !== listed.size || known.sha256 !== listed.sha256)) problem(`list: file ${listed.file_id} differs`)
      }
      return response.status
    },

    async get(account) {
      const file = pick(liveFiles(account))
      if (!file) return undefined
      const response = await fetch(`${api}/files/${file.fileId}`, { headers: auth(account) })
      const body = (await response.json()) as { file?: { size: number; sha256: string; filename: string } }
      if (response.status === 404 && file.deleting) return response.status
      if (response.status !== 200) {
        if (response.status < 500) problem(`get of file ${file.fileId}: HTTP ${response.status}`)
        return response.status
      }
      if (body.file?.size !== file.size || body.file.sha256 !== file.sha256 || body.file.filename !== file.filename) {
        problem(`get of file ${file.fileId}: ${JSON.stringify(body.file)} differs`)
      }
      return response.status
    },

    async delete(account) {
      const file = pick(liveFiles(account))
      if (!file) return undefined
      file.deleting = true
      const response = await fetch(`${api}/files/${file.fileId}`, { method: 'DELETE', headers: auth(account) })
      await response.arrayBuffer()
      if (response.status !== 200) {
        if (response.status < 500) problem(`delete of file ${file.fileId}: HTTP ${response.status}`)
        return response.status
      }
      account.files.delete(file.fileId)
      const after = await fetch(`${base}${file.downloadPath}`, { method: 'HEAD' })
      if (after.status !== 404) problem(`file ${file.fileId}: its link answers ${after.status} after the delete`)
      return response.status
    },

    async stats(account) {
      const response = await fetch(`${api}/stats`, { headers: auth(account) })
      await response.arrayBuffer()
      if (response.status !== 200 && response.status < 500) problem(`stats: HTTP ${response.status}`)
      return response.status
    },
  }

  return async function client() {
    while (Date.now() < deadline) {
      const account = accounts[randomInt(accounts.length)]!
      const operation = chooseOperation(account)
      const started = performance.now()
      try {
        const status = await operations[operation](account)
        if (status === undefined) continue
        noteStatus(operation, status)
      } catch (error) {
        problem(`${operation}: ${(error as Error).message} ${String((error as Error).cause ?? '')}`)
        continue
      }
      const tally = tallies.get(operation) ?? { count: 0, latenciesMs: [] }
      tally.count++
      tally.latenciesMs.push(performance.now() - started)
      tallies.set(operation, tally)
    }
  }
}

/* ------------------------------------------------------------------------------------------------
 * The checks after the load.
 */

interface ListedFile {
  file_id: number
  filename: string
  size: number
  sha256: string
  download_count: number
  public_link: string
}

async function listEverything(api: string, account: Account): Promise<{ files: ListedFile[]; total: number }> {
  const files: ListedFile[] = []
  let total = 0
  for (let page = 1; ; page++) {
    const response = await fetch(`${api}/files?page=${page}&limit=100`, { headers: { authorization: `Bearer ${account.apiKey}` } })
    const body = (await response.json()) as { files: ListedFile[]; pagination: { total: number; pages: number } }
    if (response.status !== 200) throw new Error(`list page ${page}: HTTP ${response.status}`)
    files.push(...body.files)
    total = body.pagination.total
    if (page >= body.pagination.pages) return { files, total }
  }
}

interface FinalChecks {
  filesVerified: number
  bytesVerified: number
  /** Listed files that are missing, unknown, or do not download in full with their checksum. */
  fileFailures: number
  statsMatch: boolean
}

async function verifyAccounts(base: string, accounts: Account[], sameUtcDay: boolean): Promise<FinalChecks> {
  const api = `${base}/api/v1`
  let filesVerified = 0
  let bytesVerified = 0
  let fileFailures = 0
  let statsMatch = true
  for (const account of accounts) {
    const { files, total } = await listEverything(api, account)
    const statsResponse = await fetch(`${api}/stats`, { headers: { authorization: `Bearer ${account.apiKey}` } })
    const { stats } = (await statsResponse.json()) as {
      stats: { total_files: number; total_size: number; total_downloads: number; uploads_today: number }
    }
    const recount = {
      total_files: files.length,
      total_size: files.reduce((sum, file) => sum + file.size, 0),
      total_downloads: files.reduce((sum, file) => sum + file.download_count, 0),
    }
    const expected = { ...recount, ...(sameUtcDay ? { uploads_today: account.uploads } : {}) }
    const got = {
      total_files: stats.total_files,
      total_size: stats.total_size,
      total_downloads: stats.total_downloads,
      ...(sameUtcDay ? { uploads_today: stats.uploads_today } : {}),
    }
    if (JSON.stringify(got) !== JSON.stringify(expected) || total !== files.length) {
      statsMatch = false
      problem(`${account.email}: stats ${JSON.stringify(got)}, recount ${JSON.stringify(expected)}, pagination.total ${total}`)
    }
    const listedIds = new Set(files.map((file) => file.file_id))
    for (const known of account.files.values()) {
      if (listedIds.has(known.fileId)) continue
      fileFailures++
      problem(`${account.email}: file ${known.fileId} is missing from the listing`)
    }
    for (const listed of files) {
      const known = account.files.get(listed.file_id)
      if (!known) {
        fileFailures++
        problem(`${account.email}: the listing has file ${listed.file_id}, which the clients do not know`)
        continue
      }
      if (listed.download_count !== known.countedDownloads) {
        problem(`file ${listed.file_id}: download_count ${listed.download_count}, clients counted ${known.countedDownloads}`)
      }
      const response = await fetch(`${base}${known.downloadPath}`)
      const hash = createHash('sha256')
      let size = 0
      for await (const chunk of response.body ?? []) {
        hash.update(chunk as Uint8Array)
        size += (chunk as Uint8Array).byteLength
      }
      noteStatus('download_full', response.status)
      if (response.status !== 200 || size !== known.size || hash.digest('hex') !== known.sha256) {
        fileFailures++
        problem(`final download of file ${listed.file_id}: HTTP ${response.status}, ${size} of ${known.size} bytes, or wrong checksum`)
        continue
      }
      filesVerified++
      bytesVerified += size
    }
  }
  return { filesVerified, bytesVerified, fileFailures, statsMatch }
}

/* ------------------------------------------------------------------------------------------------
 * The report.
 */

const MiB = 1024 * 1024
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

function operationTable(elapsedSeconds: number): string[] {
  const rows = ['| Operation | Count | Per second | p50 ms | p99 ms |', '|---|---:|---:|---:|---:|']
  let total = 0
  for (const operation of ['upload', 'download_range', 'download_full', 'list', 'get', 'delete', 'stats'] as const) {
    const tally = tallies.get(operation)
    if (!tally) continue
    total += tally.count
    const sorted = [...tally.latenciesMs].sort((a, b) => a - b)
    rows.push(
      `| ${operation} | ${tally.count} | ${(tally.count / elapsedSeconds).toFixed(1)} | ${percentile(sorted, 50).toFixed(1)} | ${percentile(sorted, 99).toFixed(1)} |`,
    )
  }
  rows.push(`| all | ${total} | ${(total / elapsedSeconds).toFixed(1)} | | |`)
  return rows
}

async function writeReportSection(section: string) {
  let existing = ''
  try {
    existing = await fs.readFile(REPORT_FILE, 'utf8')
  } catch {
    existing = '# Reliability\n'
  }
  const start = existing.search(/^## Soak test[ \t]*$/m)
  if (start === -1) {
    await fs.writeFile(REPORT_FILE, `${existing.trimEnd()}\n\n${section}`)
    return
  }
  const rest = existing.slice(start + 1)
  const next = rest.search(/^## /m)
  const after = next === -1 ? '' : `\n${rest.slice(next)}`
  await fs.writeFile(REPORT_FILE, `${existing.slice(0, start)}${section}${after}`)
}

/* ------------------------------------------------------------------------------------------------ */

async function main() {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'fileshare-soak-'))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const unlimited = { requests_per_minute: 10_000_000, requests_per_day: 1_000_000_000, daily_uploads: 10_000_000 }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    FILESHARE_DATA_DIR: dataDir,
    FILESHARE_PUBLIC_URL: base,
    FILESHARE_LOG_LEVEL: 'warn',
    // Rate limits are tested elsewhere; here they would only throttle the load.
    FILESHARE_PLANS: JSON.stringify({ pro: unlimited }),
    FILESHARE_DOWNLOADS_PER_MINUTE: '1000000000',
  }
  for (const name of ['FILESHARE_DATABASE_URL', 'FILESHARE_STORAGE', 'FILESHARE_REDIS_URL', 'FILESHARE_DOWNLOAD_URL']) delete env[name]

  console.log(
    `soak: ${SETTINGS.clients} clients, ${SETTINGS.accounts} accounts, ${SETTINGS.seconds} s of load, ` +
      `${SETTINGS.settleSeconds} s settle, files up to ${mib(SETTINGS.maxFileBytes)}; data in ${dataDir}`,
  )
  const accounts: Account[] = []
  for (let i = 1; i <= SETTINGS.accounts; i++) {
    const email = `soak${i}@example.test`
    const created = JSON.parse(await runCli(env, ['account', 'create', '--email', email, '--plan', 'pro', '--json'])) as { api_key: string }
    accounts.push({ email, apiKey: created.api_key, files: new Map(), uploads: 0 })
  }

  const logPath = path.join(dataDir, 'server.log')
  const log = await fs.open(logPath, 'w')
  const server = spawn(process.execPath, [path.join(ROOT, 'dist', 'server.js')], { env, cwd: ROOT, stdio: ['ignore', log.fd, log.fd] })
  let keepData = false
  try {
    await waitUntilHealthy(base, server)
    const watch = new ResourceWatch(server.pid!)
    const startSample = await watch.take()
    console.log(`soak: server pid ${server.pid} ready: RSS ${mib(startSample.rssBytes)}, ${startSample.fds} open fds`)

    const day = new Date().toISOString().slice(0, 10)
    const loadStarted = Date.now()
    const deadline = loadStarted + SETTINGS.seconds * 1000
    watch.start(1000)
    const progress = setInterval(() => {
      const done = [...tallies.values()].reduce((sum, tally) => sum + tally.count, 0)
      const last = watch.samples.at(-1)
      console.log(
        `soak: ${Math.round((Date.now() - loadStarted) / 1000)} s, ${done} requests, ${serverErrors} 5xx, ` +
          `${problems.length} problems, RSS ${last ? mib(last.rssBytes) : '?'}, fds ${last?.fds ?? '?'}`,
      )
    }, 15_000)
    const client = makeClient(base, accounts, deadline)
    await Promise.all(Array.from({ length: SETTINGS.clients }, () => client()))
    clearInterval(progress)
    const elapsedSeconds = (Date.now() - loadStarted) / 1000
    console.log(`soak: load done after ${elapsedSeconds.toFixed(0)} s; verifying every remaining file`)

    const checks = await verifyAccounts(base, accounts, new Date().toISOString().slice(0, 10) === day)
    console.log(`soak: verified ${checks.filesVerified} files (${mib(checks.bytesVerified)}); settling for ${SETTINGS.settleSeconds} s`)
    await new Promise((resolve) => setTimeout(resolve, SETTINGS.settleSeconds * 1000))
    watch.stop()
    const endSample = await watch.take()
    const peak = watch.peak()

    server.kill('SIGTERM')
    const exitCode = await new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)))
    const logText = await fs.readFile(logPath, 'utf8')
    const errorLines = logText.split('\n').filter((line) => /"level":(50|60)/.test(line)).length

    // RSS: the V8 heap and the allocator keep some of what the load needed, so "back near the start"
    // allows the larger of 64 MiB or half the start; a leak of buffers or streams grows past that.
    // File descriptors come back exactly, give or take a couple (log file, idle keep-alive sockets).
    const rssLimit = startSample.rssBytes + Math.max(64 * MiB, startSample.rssBytes / 2)
    const verdicts: Array<[string, boolean]> = [
      [`no 5xx responses (saw ${serverErrors})`, serverErrors === 0],
      [`no other problem (wrong bytes, status, field, count; saw ${problems.length})`, problems.length === 0],
      [
        `every remaining file is listed and downloads in full with its checksum (${checks.filesVerified} files, ${mib(checks.bytesVerified)})`,
        checks.fileFailures === 0,
      ],
      ['stats (total_files, total_size, total_downloads, uploads_today) equal a recount from the listing', checks.statsMatch],
      [`RSS after settling ${mib(endSample.rssBytes)} <= ${mib(rssLimit)} (start + max(64 MiB, start/2))`, endSample.rssBytes <= rssLimit],
      [`open fds after settling ${endSample.fds} <= start ${startSample.fds} + 2`, endSample.fds <= startSample.fds + 2],
      [`no error lines in the server log (saw ${errorLines})`, errorLines === 0],
      [`SIGTERM stops the server with exit code 0 (got ${exitCode})`, exitCode === 0],
    ]
    const passed = verdicts.every(([, ok]) => ok)
    keepData = !passed

    const statusLine = [...statusCounts.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ')
    const remaining = accounts.reduce((sum, account) => sum + account.files.size, 0)
    const uploaded = accounts.reduce((sum, account) => sum + account.uploads, 0)
    const section = [
      '## Soak test',
      '',
      '`scripts/soak.ts` starts the real server (`node dist/server.js`, SQLite and a blob folder in a',
      'temporary data folder, loopback only), creates accounts with the CLI, lifts the request rate limits',
      'through `FILESHARE_PLANS`, and runs many concurrent clients against it for a fixed time. Each client',
      'repeatedly picks an account and does one of: upload (random size, mostly small, some up to the',
      'maximum; random Unicode names), ranged download (random `a-b`, `a-` or suffix range; the bytes are',
      'compared with the known content), full download (checksum), list (random page and limit), details,',
      'delete (then the link must answer 404) or stats. Afterwards it checks that no response was a 5xx,',
      "that every remaining file downloads in full with its SHA-256, that each file's `download_count`",
      'equals the downloads the clients made from byte 0, that `GET /stats` equals a recount from the',
      "listing, and that the server's RSS (`VmRSS` in `/proc/PID/status`) and open file descriptors",
      '(`/proc/PID/fd`) come back near their starting level after a quiet period. It is not part of',
      '`npm test`: it takes minutes.',
      '',
      '```sh',
      'npm run soak                       # 3 minutes of load',
      'SOAK_SECONDS=600 SOAK_CLIENTS=64 npm run soak',
      '```',
      '',
      'Settings: `SOAK_SECONDS` (180), `SOAK_CLIENTS` (32), `SOAK_ACCOUNTS` (4), `SOAK_SETTLE_SECONDS` (30),',
      '`SOAK_MAX_FILE_BYTES` (4194304), `SOAK_MAX_FILES_PER_ACCOUNT` (150; above it an account only',
      'shrinks, so the disk use stays bounded). The script rewrites this section with its latest result',
      '(`SOAK_WRITE_REPORT=0` leaves it alone) and exits 1 if a check fails.',
      '',
      `### Last run: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${passed ? 'passed' : '**FAILED**'}`,
      '',
      `Command: \`${SETTINGS.seconds === 180 && SETTINGS.clients === 32 ? 'npm run soak' : `SOAK_SECONDS=${SETTINGS.seconds} SOAK_CLIENTS=${SETTINGS.clients} npm run soak`}\`` +
        ` on ${os.cpus().length} CPU cores, Node.js ${process.version}, embedded stack (SQLite + folder).`,
      `${SETTINGS.clients} clients, ${SETTINGS.accounts} accounts, ${elapsedSeconds.toFixed(0)} s of load, ${SETTINGS.settleSeconds} s settle.`,
      `${uploaded} files uploaded, ${remaining} left at the end. Statuses: ${statusLine}` +
        ` (a 404 is fine only for a file another client was deleting at that moment; any other is a problem above).`,
      '',
      ...operationTable(elapsedSeconds),
      '',
      '| Server | Start | Peak | After settling |',
      '|---|---:|---:|---:|',
      `| RSS | ${mib(startSample.rssBytes)} | ${mib(peak.rssBytes)} | ${mib(endSample.rssBytes)} |`,
      `| Open file descriptors | ${startSample.fds} | ${peak.fds} | ${endSample.fds} |`,
      '',
      'Checks:',
      '',
      ...verdicts.map(([text, ok]) => `- ${ok ? 'pass' : '**FAIL**'}: ${text}`),
      ...(problems.length > 0 ? ['', 'Problems:', '', ...problems.map((text) => `- ${text}`)] : []),
      '',
    ].join('\n')

    console.log(`\n${section}`)
    if (WRITE_REPORT) {
      await writeReportSection(section)
      console.log(`soak: wrote the "Soak test" section of ${path.relative(ROOT, REPORT_FILE)}`)
    }
    if (!passed) {
      console.error(`soak: FAILED; the data folder and server log stay in ${dataDir}`)
      process.exitCode = 1
    }
  } finally {
    if (server.exitCode === null) server.kill('SIGKILL')
    await log.close()
    if (!keepData) await fs.rm(dataDir, { recursive: true, force: true })
  }
}

await main()

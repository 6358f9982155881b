import { createHash } from 'node:crypto'
import { MiB, mib } from '../bench-plan.js'
import type { Account } from './accounts.js'
import type { Sample } from './resources.js'
import type { Tally } from './tally.js'

/* The checks after the load, and the pass rule. */

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

export interface FinalChecks {
  filesVerified: number
  bytesVerified: number
  /** Listed files that are missing, unknown, or do not download in full with their checksum. */
  fileFailures: number
  statsMatch: boolean
}

/**
 * After the load: every account's listing, stats and files against what the clients know. Each
 * remaining file is downloaded in full and its checksum compared.
 */
export async function verifyAccounts(base: string, accounts: Account[], sameUtcDay: boolean, tally: Tally): Promise<FinalChecks> {
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
      tally.problem(`${account.email}: stats ${JSON.stringify(got)}, recount ${JSON.stringify(expected)}, pagination.total ${total}`)
    }
    const listedIds = new Set(files.map((file) => file.file_id))
    for (const known of account.files.values()) {
      if (listedIds.has(known.fileId)) continue
      fileFailures++
      tally.problem(`${account.email}: file ${known.fileId} is missing from the listing`)
    }
    for (const listed of files) {
      const known = account.files.get(listed.file_id)
      if (!known) {
        fileFailures++
        tally.problem(`${account.email}: the listing has file ${listed.file_id}, which the clients do not know`)
        continue
      }
      if (listed.download_count !== known.countedDownloads) {
        tally.problem(`file ${listed.file_id}: download_count ${listed.download_count}, clients counted ${known.countedDownloads}`)
      }
      const response = await fetch(`${base}${known.downloadPath}`)
      const hash = createHash('sha256')
      let size = 0
      for await (const chunk of response.body ?? []) {
        hash.update(chunk as Uint8Array)
        size += (chunk as Uint8Array).byteLength
      }
      tally.noteStatus('download_full', response.status)
      if (response.status !== 200 || size !== known.size || hash.digest('hex') !== known.sha256) {
        fileFailures++
        tally.problem(
          `final download of file ${listed.file_id}: HTTP ${response.status}, ${size} of ${known.size} bytes, or wrong checksum`,
        )
        continue
      }
      filesVerified++
      bytesVerified += size
    }
  }
  return { filesVerified, bytesVerified, fileFailures, statsMatch }
}

/** Error and fatal lines (pino levels 50 and 60) in the server's log. */
export function countErrorLines(logText: string): number {
  return logText.split('\n').filter((line) => /"level":(50|60)/.test(line)).length
}

/** One check of the pass rule: what it says, and whether it held. The soak passes when every one holds. */
export type Verdict = [string, boolean]

export function verdicts(outcome: {
  tally: Tally
  checks: FinalChecks
  startSample: Sample
  endSample: Sample
  errorLines: number
  exitCode: number | null
}): Verdict[] {
  const { tally, checks, startSample, endSample, errorLines, exitCode } = outcome
  // RSS: the V8 heap and the allocator keep some of what the load needed, so "back near the start"
  // allows the larger of 64 MiB or half the start; a leak of buffers or streams grows past that.
  // File descriptors come back exactly, give or take a couple (log file, idle keep-alive sockets).
  const rssLimit = startSample.rssBytes + Math.max(64 * MiB, startSample.rssBytes / 2)
  return [
    [`no 5xx responses (saw ${tally.serverErrors})`, tally.serverErrors === 0],
    [`no other problem (wrong bytes, status, field, count; saw ${tally.problems.length})`, tally.problems.length === 0],
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
}
